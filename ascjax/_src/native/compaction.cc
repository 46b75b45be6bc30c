// Compaction kernels for XLA's CPU backend: the selected lanes of each row moved to its front.
//
// XLA has no compaction primitive, and its CPU code for one (a per-lane search over the mask
// words, then a gather) runs at a quarter of memory speed on a 1024-lane row; AVX-512 VBMI2's
// vpcompress moves 32 lanes an instruction. Both handlers split rows over XLA's intra-op
// thread pool. They move bits only: the same bits as ascjax's XLA path (tests/test_native.py).
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

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "rows.h"

namespace {

using ascjax::ParallelRows;
namespace ffi = xla::ffi;

bool HasVbmi2() { return ascjax::CpuIsa() >= ascjax::kAvx512Vbmi2; }

// --- source lanes --------------------------------------------------------------------------

template <typename T>
void SourceRowsScalar(const uint32_t* words, T* source, int32_t* count, int64_t begin,
                      int64_t end, int64_t n_words) {
  const int64_t lanes = 32 * n_words;
  for (int64_t r = begin; r < end; ++r) {
    const uint32_t* w = words + r * n_words;
    T* out = source + r * lanes;
    int64_t k = 0;
    for (int64_t i = 0; i < n_words; ++i) {
      for (uint32_t m = w[i]; m; m &= m - 1) out[k++] = static_cast<T>(32 * i + __builtin_ctz(m));
    }
    count[r] = static_cast<int32_t>(k);
    std::fill(out + k, out + lanes, static_cast<T>(lanes - 1));
  }
}

#if defined(__x86_64__)
// Each word's lane numbers compressed by its bits; a full-width store is safe because the
// k lanes written so far never pass 32 * i.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2")))
void SourceRowsU16(const uint32_t* words, uint16_t* source, int32_t* count, int64_t begin,
                   int64_t end, int64_t n_words) {
  const int64_t lanes = 32 * n_words;
  alignas(64) uint16_t iota[32];
  for (int i = 0; i < 32; ++i) iota[i] = static_cast<uint16_t>(i);
  const __m512i lane = _mm512_load_si512(iota);
  for (int64_t r = begin; r < end; ++r) {
    const uint32_t* w = words + r * n_words;
    uint16_t* out = source + r * lanes;
    int64_t k = 0;
    for (int64_t i = 0; i < n_words; ++i) {
      const __m512i v = _mm512_add_epi16(lane, _mm512_set1_epi16(static_cast<int16_t>(32 * i)));
      _mm512_storeu_si512(out + k, _mm512_maskz_compress_epi16(w[i], v));
      k += __builtin_popcount(w[i]);
    }
    count[r] = static_cast<int32_t>(k);
    std::fill(out + k, out + lanes, static_cast<uint16_t>(lanes - 1));
  }
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2")))
void SourceRowsU8(const uint32_t* words, uint8_t* source, int32_t* count, int64_t begin,
                  int64_t end, int64_t n_words) {
  const int64_t lanes = 32 * n_words;
  alignas(32) uint8_t iota[32];
  for (int i = 0; i < 32; ++i) iota[i] = static_cast<uint8_t>(i);
  const __m256i lane = _mm256_load_si256(reinterpret_cast<const __m256i*>(iota));
  for (int64_t r = begin; r < end; ++r) {
    const uint32_t* w = words + r * n_words;
    uint8_t* out = source + r * lanes;
    int64_t k = 0;
    for (int64_t i = 0; i < n_words; ++i) {
      const __m256i v = _mm256_add_epi8(lane, _mm256_set1_epi8(static_cast<char>(32 * i)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k),
                          _mm256_maskz_compress_epi8(w[i], v));
      k += __builtin_popcount(w[i]);
    }
    count[r] = static_cast<int32_t>(k);
    std::fill(out + k, out + lanes, static_cast<uint8_t>(lanes - 1));
  }
}
#endif

// One row's source lanes in T, by vpcompress where the CPU has it.
template <typename T>
void SourceRows(const uint32_t* words, T* source, int32_t* count, int64_t begin, int64_t end,
                int64_t n_words) {
#if defined(__x86_64__)
  if (HasVbmi2()) {
    if constexpr (sizeof(T) == 1) return SourceRowsU8(words, source, count, begin, end, n_words);
    if constexpr (sizeof(T) == 2) return SourceRowsU16(words, source, count, begin, end, n_words);
  }
#endif
  SourceRowsScalar(words, source, count, begin, end, n_words);
}

template <typename T>
ffi::Error SourceLanesIn(ffi::ThreadPool& pool, const uint32_t* words, void* source,
                         int32_t* count, int64_t rows, int64_t n_words) {
  if (32 * n_words > (int64_t{1} << (8 * sizeof(T)))) {
    return ffi::Error::InvalidArgument("ascjax_source_lanes: lane numbers past the source type");
  }
  ParallelRows(pool, rows, 32 * n_words * 2, [&](int64_t b, int64_t e) {
    SourceRows(words, static_cast<T*>(source), count, b, e, n_words);
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
// STEP lanes a step (a 32-bit word's bits in 32 / STEP parts), the compressed vector stored
// whole where it fits in the row and under a lane mask at its end; what lies past k is
// overwritten by later steps or the fill.
#define ASCJAX_COMPRESS(NAME, T, STEP, MASK_T, VEC, LOAD, COMPRESS, STORE, MASKED_STORE)     \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2")))                        \
  int64_t NAME(const T* v, const uint32_t* w, T* o, int64_t n_words, int64_t n) {         \
    int64_t k = 0;                                                                        \
    for (int64_t i = 0; i < n_words; ++i) {                                               \
      for (int part = 0; part < 32 / STEP; ++part) {                                      \
        const auto m = static_cast<MASK_T>(w[i] >> (part * STEP));                        \
        if (k < n) {                                                                      \
          const VEC packed = COMPRESS(m, LOAD((const VEC*)(v + 32 * i + part * STEP)));    \
          if (k + STEP <= n) {                                                            \
            STORE((VEC*)(o + k), packed);                                                 \
          } else {                                                                        \
            MASKED_STORE(o + k, static_cast<MASK_T>((uint64_t{1} << (n - k)) - 1), packed); \
          }                                                                               \
        }                                                                                 \
        k += __builtin_popcount(m);                                                       \
      }                                                                                   \
    }                                                                                     \
    return k;                                                                             \
  }

ASCJAX_COMPRESS(Compress8, uint8_t, 32, __mmask32, __m256i, _mm256_loadu_si256,
                _mm256_maskz_compress_epi8, _mm256_storeu_si256, _mm256_mask_storeu_epi8)
ASCJAX_COMPRESS(Compress16, uint16_t, 32, __mmask32, __m512i, _mm512_loadu_si512,
                _mm512_maskz_compress_epi16, _mm512_storeu_si512, _mm512_mask_storeu_epi16)
ASCJAX_COMPRESS(Compress32, uint32_t, 16, __mmask16, __m512i, _mm512_loadu_si512,
                _mm512_maskz_compress_epi32, _mm512_storeu_si512, _mm512_mask_storeu_epi32)
ASCJAX_COMPRESS(Compress64, uint64_t, 8, __mmask8, __m512i, _mm512_loadu_si512,
                _mm512_maskz_compress_epi64, _mm512_storeu_si512, _mm512_mask_storeu_epi64)
#undef ASCJAX_COMPRESS
#endif

template <typename T>
int64_t CompressRow(const T* v, const uint32_t* w, T* o, int64_t n_words, int64_t n) {
#if defined(__x86_64__)
  if (HasVbmi2()) {
    if constexpr (sizeof(T) == 1) return Compress8(v, w, o, n_words, n);
    if constexpr (sizeof(T) == 2) return Compress16(v, w, o, n_words, n);
    if constexpr (sizeof(T) == 4) return Compress32(v, w, o, n_words, n);
    if constexpr (sizeof(T) == 8) return Compress64(v, w, o, n_words, n);
  }
#endif
  return CompressScalar(v, w, o, n_words, n);
}

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
