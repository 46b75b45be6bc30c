// Compaction kernels for XLA's CPU backend: the selected lanes of each row moved to its front.
//
// XLA has no compaction primitive, and its CPU code for one (a per-lane search over the mask
// words, then a gather) runs at a quarter of memory speed on a 1024-lane row. Here a step
// compresses a vector by its mask bits: 32 lanes with AVX-512 VBMI2's vpcompressb/w, 16 with
// AVX-512F's vpcompressd (16-bit and 8-bit lanes widened to 32 bits and back), 8 with AVX2 (a
// shuffle from a table of each byte's set bits), else a scalar loop. Both handlers split rows
// over XLA's intra-op thread pool. They move bits only: the same bits as ascjax's XLA path
// (tests/test_native.py).
//
// Leading dimensions are rows, as many in every operand.
//
//   ascjax_source_lanes(words u32[rows, W]) -> (source u8|u16[rows, 32W], count s32[rows])
//     source[j]: the lane of the (j+1)-th set bit (lane i at bit i % 32 of word i / 32);
//     32W - 1 past the count, as the XLA search gives.
//   ascjax_compress(values[rows, 32W] (any type of 1, 2, 4 or 8 bytes), words u32[rows, W],
//                   fill[rows, n] (zero_fill: [0])) -> (out[rows, n], count s32[rows])
//     out[j]: the (j+1)-th selected value, fill[j] (or 0) from the count on.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "rows.h"

namespace {

using ascjax::ParallelRows;
namespace ffi = xla::ffi;

// --- one row compressed ---------------------------------------------------------------------

// The kept values of one row written from its front, at most n; returns how many were kept.
template <typename T>
int64_t CompressScalar(const T* v, const uint32_t* w, T* o, int64_t n_words, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n_words; ++i) {
    for (uint32_t m = w[i]; m; m &= m - 1) {
      if (k < n) o[k] = v[32 * i + __builtin_ctz(m)];
      ++k;
    }
  }
  return k;
}

#if defined(__x86_64__)
// A row in steps of STEP lanes (a 32-bit word's bits in 32 / STEP parts). STEP_FN(values,
// mask, out, room) stores the step's kept values from out on, whole where room >= STEP and
// else only room lanes; what lies past k is overwritten by later steps or the fill.
#define ASCJAX_COMPRESS(NAME, TARGET, T, STEP, MASK_T, STEP_FN)                             \
  TARGET int64_t NAME(const T* v, const uint32_t* w, T* o, int64_t n_words, int64_t n) {    \
    int64_t k = 0;                                                                          \
    for (int64_t i = 0; i < n_words; ++i) {                                                 \
      for (int part = 0; part < 32 / STEP; ++part) {                                        \
        const auto m = static_cast<MASK_T>(w[i] >> (part * STEP));                          \
        if (k < n) STEP_FN(v + 32 * i + part * STEP, m, o + k, n - k);                      \
        k += __builtin_popcount(m);                                                         \
      }                                                                                     \
    }                                                                                       \
    return k;                                                                               \
  }

#define ASCJAX_VBMI2 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2")))

template <int Lanes>
inline uint64_t FirstLanes(int64_t room) {  // a store mask of min(room, Lanes) lanes
  return room >= Lanes ? ~uint64_t{0} : (uint64_t{1} << room) - 1;
}

// AVX-512 VBMI2: 32 lanes of 8 or 16 bits a step.
ASCJAX_VBMI2 inline void Step8Vbmi2(const uint8_t* v, __mmask32 m, uint8_t* o, int64_t room) {
  _mm256_mask_storeu_epi8(o, static_cast<__mmask32>(FirstLanes<32>(room)),
                          _mm256_maskz_compress_epi8(m, _mm256_loadu_si256(
                              reinterpret_cast<const __m256i*>(v))));
}
ASCJAX_VBMI2 inline void Step16Vbmi2(const uint16_t* v, __mmask32 m, uint16_t* o, int64_t room) {
  _mm512_mask_storeu_epi16(o, static_cast<__mmask32>(FirstLanes<32>(room)),
                           _mm512_maskz_compress_epi16(m, _mm512_loadu_si512(v)));
}

// AVX-512F: 16 lanes of 32 bits, 8 of 64; 16-bit and 8-bit lanes widened to 32 bits and back.
ASCJAX_AVX512 inline void Step32Avx512(const uint32_t* v, __mmask16 m, uint32_t* o, int64_t room) {
  _mm512_mask_storeu_epi32(o, static_cast<__mmask16>(FirstLanes<16>(room)),
                           _mm512_maskz_compress_epi32(m, _mm512_loadu_si512(v)));
}
ASCJAX_AVX512 inline void Step64Avx512(const uint64_t* v, __mmask8 m, uint64_t* o, int64_t room) {
  _mm512_mask_storeu_epi64(o, static_cast<__mmask8>(FirstLanes<8>(room)),
                           _mm512_maskz_compress_epi64(m, _mm512_loadu_si512(v)));
}
ASCJAX_AVX512 inline void Step16Avx512(const uint16_t* v, __mmask16 m, uint16_t* o, int64_t room) {
  const __m512i wide =
      _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)));
  _mm512_mask_cvtepi32_storeu_epi16(o, static_cast<__mmask16>(FirstLanes<16>(room)),
                                    _mm512_maskz_compress_epi32(m, wide));
}
ASCJAX_AVX512 inline void Step8Avx512(const uint8_t* v, __mmask16 m, uint8_t* o, int64_t room) {
  const __m512i wide = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v)));
  _mm512_mask_cvtepi32_storeu_epi8(o, static_cast<__mmask16>(FirstLanes<16>(room)),
                                   _mm512_maskz_compress_epi32(m, wide));
}

// AVX2: 8 lanes a step, by a shuffle. kSetLanes[m] lists the set bits of the byte m in order
// (the rest 0): the lanes a step keeps.
struct SetLanes {
  alignas(64) uint8_t lanes[256][8];
  constexpr SetLanes() : lanes() {
    for (int m = 0; m < 256; ++m) {
      int k = 0;
      for (int i = 0; i < 8; ++i) {
        if (m >> i & 1) lanes[m][k++] = static_cast<uint8_t>(i);
      }
    }
  }
};
constexpr SetLanes kSetLanes;

ASCJAX_AVX2 inline __m128i SetLanesOf(uint8_t m) {
  return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kSetLanes.lanes[m]));
}

// The first min(room, 8) of a step's 8 packed values stored at o.
template <typename T>
inline void StorePacked(T* o, const void* packed, int64_t room) {
  std::memcpy(o, packed, (room >= 8 ? 8 : room) * sizeof(T));
}

ASCJAX_AVX2 inline void Step32Avx2(const uint32_t* v, uint8_t m, uint32_t* o, int64_t room) {
  const __m256i packed = _mm256_permutevar8x32_epi32(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)), _mm256_cvtepu8_epi32(SetLanesOf(m)));
  if (room >= 8) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), packed);
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), packed);
  StorePacked(o, lanes, room);
}
ASCJAX_AVX2 inline void Step16Avx2(const uint16_t* v, uint8_t m, uint16_t* o, int64_t room) {
  // lane j's two bytes 2j, 2j + 1
  const __m128i pick = _mm_add_epi16(_mm_mullo_epi16(_mm_cvtepu8_epi16(SetLanesOf(m)),
                                                     _mm_set1_epi16(0x0202)),
                                     _mm_set1_epi16(0x0100));
  const __m128i packed =
      _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v)), pick);
  if (room >= 8) return _mm_storeu_si128(reinterpret_cast<__m128i*>(o), packed);
  alignas(16) uint16_t lanes[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), packed);
  StorePacked(o, lanes, room);
}
ASCJAX_AVX2 inline void Step8Avx2(const uint8_t* v, uint8_t m, uint8_t* o, int64_t room) {
  const __m128i packed = _mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(v)),
                                          SetLanesOf(m));
  if (room >= 8) return _mm_storel_epi64(reinterpret_cast<__m128i*>(o), packed);
  alignas(16) uint8_t lanes[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), packed);
  StorePacked(o, lanes, room);
}

ASCJAX_COMPRESS(Compress8Vbmi2, ASCJAX_VBMI2, uint8_t, 32, __mmask32, Step8Vbmi2)
ASCJAX_COMPRESS(Compress16Vbmi2, ASCJAX_VBMI2, uint16_t, 32, __mmask32, Step16Vbmi2)
ASCJAX_COMPRESS(Compress8Avx512, ASCJAX_AVX512, uint8_t, 16, __mmask16, Step8Avx512)
ASCJAX_COMPRESS(Compress16Avx512, ASCJAX_AVX512, uint16_t, 16, __mmask16, Step16Avx512)
ASCJAX_COMPRESS(Compress32Avx512, ASCJAX_AVX512, uint32_t, 16, __mmask16, Step32Avx512)
ASCJAX_COMPRESS(Compress64Avx512, ASCJAX_AVX512, uint64_t, 8, __mmask8, Step64Avx512)
ASCJAX_COMPRESS(Compress8Avx2, ASCJAX_AVX2, uint8_t, 8, uint8_t, Step8Avx2)
ASCJAX_COMPRESS(Compress16Avx2, ASCJAX_AVX2, uint16_t, 8, uint8_t, Step16Avx2)
ASCJAX_COMPRESS(Compress32Avx2, ASCJAX_AVX2, uint32_t, 8, uint8_t, Step32Avx2)
#undef ASCJAX_COMPRESS
#endif

// One row by the widest step this CPU has for T's width.
template <typename T>
int64_t CompressRow(const T* v, const uint32_t* w, T* o, int64_t n_words, int64_t n) {
#if defined(__x86_64__)
  const ascjax::Isa isa = ascjax::CpuIsa();
  if constexpr (sizeof(T) == 1) {
    if (isa >= ascjax::kAvx512Vbmi2) return Compress8Vbmi2(v, w, o, n_words, n);
    if (isa >= ascjax::kAvx512) return Compress8Avx512(v, w, o, n_words, n);
    if (isa >= ascjax::kAvx2) return Compress8Avx2(v, w, o, n_words, n);
  } else if constexpr (sizeof(T) == 2) {
    if (isa >= ascjax::kAvx512Vbmi2) return Compress16Vbmi2(v, w, o, n_words, n);
    if (isa >= ascjax::kAvx512) return Compress16Avx512(v, w, o, n_words, n);
    if (isa >= ascjax::kAvx2) return Compress16Avx2(v, w, o, n_words, n);
  } else if constexpr (sizeof(T) == 4) {
    if (isa >= ascjax::kAvx512) return Compress32Avx512(v, w, o, n_words, n);
    if (isa >= ascjax::kAvx2) return Compress32Avx2(v, w, o, n_words, n);
  } else {
    if (isa >= ascjax::kAvx512) return Compress64Avx512(v, w, o, n_words, n);
  }
#endif
  return CompressScalar(v, w, o, n_words, n);
}

// --- source lanes ----------------------------------------------------------------------------

// Each row's source lanes: the lane numbers 0 .. lanes - 1 compressed by its words.
template <typename T>
ffi::Error SourceLanesIn(ffi::ThreadPool& pool, const uint32_t* words, void* source,
                         int32_t* count, int64_t rows, int64_t n_words) {
  const int64_t lanes = 32 * n_words;
  if (lanes > (int64_t{1} << (8 * sizeof(T)))) {
    return ffi::Error::InvalidArgument("ascjax_source_lanes: lane numbers past the source type");
  }
  std::vector<T> iota(lanes);
  for (int64_t i = 0; i < lanes; ++i) iota[i] = static_cast<T>(i);
  ParallelRows(pool, rows, lanes * 2, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* out = static_cast<T*>(source) + r * lanes;
      const int64_t k = CompressRow(iota.data(), words + r * n_words, out, n_words, lanes);
      count[r] = static_cast<int32_t>(k);
      std::fill(out + k, out + lanes, static_cast<T>(lanes - 1));
    }
  });
  return ffi::Error::Success();
}

ffi::Error SourceLanes(ffi::ThreadPool pool, ffi::AnyBuffer words,
                       ffi::Result<ffi::AnyBuffer> source,
                       ffi::Result<ffi::Buffer<ffi::S32>> count) {
  const auto dims = words.dimensions();
  if (words.element_type() != ffi::U32 || dims.size() == 0 || dims.back() == 0) {
    return ffi::Error::InvalidArgument("ascjax_source_lanes: words must be uint32[..., W]");
  }
  const int64_t n_words = dims.back(), rows = words.element_count() / n_words;
  const auto* w = static_cast<const uint32_t*>(words.untyped_data());
  switch (source->element_type()) {
    case ffi::U8:
      return SourceLanesIn<uint8_t>(pool, w, source->untyped_data(), count->typed_data(), rows,
                                    n_words);
    case ffi::U16:
      return SourceLanesIn<uint16_t>(pool, w, source->untyped_data(), count->typed_data(), rows,
                                     n_words);
    default:
      return ffi::Error::InvalidArgument("ascjax_source_lanes: the source is uint8 or uint16");
  }
}

// --- compress ------------------------------------------------------------------------------

struct Rows {
  const void* values;      // [rows, 32 * n_words]
  const uint32_t* words;   // [rows, n_words]
  const void* fill;        // [rows, n], or null: zeros
  void* out;               // [rows, n]
  int32_t* count;
  int64_t n_words, n;
};

template <typename T>
void CompressRows(const Rows& a, int64_t begin, int64_t end) {
  const int64_t lanes = 32 * a.n_words;
  for (int64_t r = begin; r < end; ++r) {
    T* o = static_cast<T*>(a.out) + r * a.n;
    const int64_t k = CompressRow(static_cast<const T*>(a.values) + r * lanes,
                                  a.words + r * a.n_words, o, a.n_words, a.n);
    a.count[r] = static_cast<int32_t>(k);
    const int64_t kept = std::min(k, a.n);
    if (a.fill) {
      std::memcpy(o + kept, static_cast<const T*>(a.fill) + r * a.n + kept, (a.n - kept) * sizeof(T));
    } else {
      std::memset(o + kept, 0, (a.n - kept) * sizeof(T));
    }
  }
}

ffi::Error Compress(ffi::ThreadPool pool, ffi::AnyBuffer values, ffi::AnyBuffer words,
                    ffi::AnyBuffer fill, ffi::Result<ffi::AnyBuffer> out,
                    ffi::Result<ffi::Buffer<ffi::S32>> count, bool zero_fill) {
  const auto vd = values.dimensions(), wd = words.dimensions(), od = out->dimensions();
  if (vd.size() == 0 || wd.size() == 0 || od.size() == 0 || words.element_type() != ffi::U32 ||
      values.element_type() != out->element_type() || vd.back() != 32 * wd.back() ||
      wd.back() == 0) {
    return ffi::Error::InvalidArgument("ascjax_compress: values[..., 32W], words uint32[..., W]");
  }
  const int64_t rows = values.element_count() / vd.back(), n_words = wd.back(), n = od.back();
  if (words.element_count() != rows * n_words || out->element_count() != rows * n ||
      (!zero_fill && fill.element_count() != rows * n)) {
    return ffi::Error::InvalidArgument("ascjax_compress: the rows of the operands differ");
  }
  Rows a{values.untyped_data(), static_cast<const uint32_t*>(words.untyped_data()),
         zero_fill ? nullptr : fill.untyped_data(), out->untyped_data(), count->typed_data(),
         n_words, n};
  const int64_t row_bytes = (vd.back() + n) * static_cast<int64_t>(ffi::ByteWidth(values.element_type()));
  switch (ffi::ByteWidth(values.element_type())) {  // any type: its bits move unchanged
    case 1:
      ParallelRows(pool, rows, row_bytes, [&](int64_t b, int64_t e) { CompressRows<uint8_t>(a, b, e); });
      break;
    case 2:
      ParallelRows(pool, rows, row_bytes, [&](int64_t b, int64_t e) { CompressRows<uint16_t>(a, b, e); });
      break;
    case 4:
      ParallelRows(pool, rows, row_bytes, [&](int64_t b, int64_t e) { CompressRows<uint32_t>(a, b, e); });
      break;
    case 8:
      ParallelRows(pool, rows, row_bytes, [&](int64_t b, int64_t e) { CompressRows<uint64_t>(a, b, e); });
      break;
    default:
      return ffi::Error::InvalidArgument("ascjax_compress: values of 1, 2, 4 or 8 bytes");
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxSourceLanes, SourceLanes,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxCompress, Compress,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::Buffer<ffi::S32>>()
                                  .Attr<bool>("zero_fill"));
