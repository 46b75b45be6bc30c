// Gathers from one shared source for XLA's CPU backend: the DataBlock gather of
// asc_gather_datablock / Reg::GatherB (8 blocks of 32 bytes a register, each from a byte offset,
// or zeros), and the element gather of the UB asc_gather / Reg::Gather.
//
// XLA's CPU gather of a (rows, 8) index into (blocks, 32 bytes) ran float32 registers at about
// half the memory-traffic limit: its loop computes every element's address on its own. Here a
// block is one 32-byte move. Only bits move: the same bits as gather_block._reg_take's XLA path
// (tests/test_native.py).
//
//   ascjax_block_gather(src[S] (any type), offsets u32[rows, 8], keep pred[rows, 8])
//       -> out[rows, 8 * 32 / sizeof(src)]
//     block k of out row r: the 32 bytes at byte offsets[r, k] of src where keep[r, k], else
//     zeros. A kept offset the caller has not checked (past src's end) gives zeros too: the
//     kernel never reads outside src.
//
//   ascjax_table_gather(src[0 < S < 2^31] (any type of 1, 2 or 4 bytes),
//                       index u16|u32[rows, L], keep pred[rows or 1, L])
//       -> (out[rows, L] of src's type, top u32[rows])
//     out[r, j] = src[index[r, j]] where keep and the index is inside src, else zeros; top[r]
//     the largest index of row r (every lane's), from which the caller's range check starts.
//     XLA ran the seed's 16-bit gather at about half the memory-traffic limit: the range check
//     read every index before the gather read them again; here one pass does both.

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

constexpr int64_t kBlockBytes = 32, kBlocks = 8;

ffi::Error BlockGather(ffi::ThreadPool pool, ffi::AnyBuffer src, ffi::Buffer<ffi::U32> offsets,
                       ffi::Buffer<ffi::PRED> keep, ffi::Result<ffi::AnyBuffer> out) {
  const auto od = offsets.dimensions();
  const int64_t rows = od.size() ? static_cast<int64_t>(offsets.element_count()) / kBlocks : 0;
  const int64_t src_bytes = static_cast<int64_t>(src.size_bytes());
  if (od.size() == 0 || od.back() != kBlocks ||
      static_cast<int64_t>(keep.element_count()) != rows * kBlocks ||
      static_cast<int64_t>(out->size_bytes()) != rows * kBlocks * kBlockBytes ||
      out->element_type() != src.element_type()) {
    return ffi::Error::InvalidArgument(
        "ascjax_block_gather: src[S], offsets u32[rows, 8], keep pred[rows, 8], out[rows, 8 "
        "blocks of 32 bytes] of src's type");
  }
  const auto* from = static_cast<const uint8_t*>(src.untyped_data());
  const uint32_t* off = offsets.typed_data();
  const bool* take = keep.typed_data();
  auto* to = static_cast<uint8_t*>(out->untyped_data());
  ParallelRows(pool, rows, kBlocks * kBlockBytes, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * kBlocks; i < end * kBlocks; ++i) {
      uint8_t* block = to + i * kBlockBytes;
      if (take[i] && off[i] <= src_bytes - kBlockBytes) {
        std::memcpy(block, from + off[i], kBlockBytes);
      } else {
        std::memset(block, 0, kBlockBytes);
      }
    }
  });
  return ffi::Error::Success();
}

// T: src's bits (its width); I: the index type. Lanes [from, lanes) of one row; its largest
// index.
template <typename T, typename I>
uint32_t TableLanes(const T* src, int64_t n_src, const I* at, const bool* take, T* to,
                    int64_t from, int64_t lanes) {
  I high = 0;
  for (int64_t j = from; j < lanes; ++j) {
    const I i = at[j];
    high = std::max(high, i);
    const bool inside = static_cast<int64_t>(i) < n_src;
    const T value = src[inside ? i : 0];  // a read inside src even for a lane not taken
    // all ones or zeros, no branch: a random mask would mispredict one
    to[j] = value & static_cast<T>(-static_cast<T>(take[j] & inside));
  }
  return high;
}

// What one row's vector loop is given. `padded` is src with 4 bytes after it: a 32-bit
// gather at a 1- or 2-byte element reads past it. Indices are below 2^31 where they are read
// (the gathers' indices are signed), since a lane reads only below n_src.
template <typename T, typename I>
struct TableRow {
  const T* padded;
  int64_t n_src;
  const I* at;
  const bool* take;
  T* to;
  int64_t lanes;
};

#if defined(__x86_64__)
// 16 lanes a step: each lane's 32 bits gathered at its element, narrowed to T.
template <typename T, typename I>
ASCJAX_AVX512
uint32_t TableLanes512(const TableRow<T, I>& row) {
  const __m512i n = _mm512_set1_epi32(static_cast<int32_t>(row.n_src));
  const __m512i zero = _mm512_setzero_si512();
  __m512i high = zero;
  int64_t j = 0;
  for (; j + 16 <= row.lanes; j += 16) {
    __m512i i;
    if constexpr (sizeof(I) == 2) {
      i = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.at + j)));
    } else {
      i = _mm512_loadu_si512(row.at + j);
    }
    high = _mm512_max_epu32(high, i);
    const __mmask16 keep =
        _mm_test_epi8_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row.take + j)),
                           _mm_set1_epi8(1)) & _mm512_cmplt_epu32_mask(i, n);
    const __m512i v = _mm512_mask_i32gather_epi32(zero, keep, i, row.padded, sizeof(T));
    if constexpr (sizeof(T) == 4) {
      _mm512_storeu_si512(row.to + j, v);
    } else if constexpr (sizeof(T) == 2) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row.to + j), _mm512_cvtepi32_epi16(v));
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row.to + j), _mm512_cvtepi32_epi8(v));
    }
  }
  const uint32_t rest = TableLanes(row.padded, row.n_src, row.at, row.take, row.to, j, row.lanes);
  return std::max(rest, static_cast<uint32_t>(_mm512_reduce_max_epu32(high)));
}

// 8 lanes a step, as TableLanes512.
template <typename T, typename I>
ASCJAX_AVX2
uint32_t TableLanes256(const TableRow<T, I>& row) {
  const __m256i last = _mm256_set1_epi32(static_cast<int32_t>(row.n_src - 1));
  const __m256i zero = _mm256_setzero_si256();
  // the low T of each 32-bit lane packed into the low bytes of each 128-bit half, then the
  // halves joined: T = 2 gives 16 bytes, T = 1 eight
  const __m256i pick = sizeof(T) == 2
      ? _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,
                         0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1)
      : _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                         0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i join = sizeof(T) == 2 ? _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
                                      : _mm256_setr_epi32(0, 4, 1, 2, 3, 5, 6, 7);
  __m256i high = zero;
  int64_t j = 0;
  for (; j + 8 <= row.lanes; j += 8) {
    __m256i i;
    if constexpr (sizeof(I) == 2) {
      i = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row.at + j)));
    } else {
      i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.at + j));
    }
    high = _mm256_max_epu32(high, i);
    const __m256i take = _mm256_cmpgt_epi32(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row.take + j))),
        zero);
    const __m256i inside = _mm256_cmpeq_epi32(_mm256_min_epu32(i, last), i);
    const __m256i v = _mm256_mask_i32gather_epi32(
        zero, reinterpret_cast<const int*>(row.padded), i, _mm256_and_si256(take, inside),
        sizeof(T));
    if constexpr (sizeof(T) == 4) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row.to + j), v);
    } else {
      const __m128i packed = _mm256_castsi256_si128(
          _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pick), join));
      if constexpr (sizeof(T) == 2) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(row.to + j), packed);
      } else {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(row.to + j), packed);
      }
    }
  }
  alignas(32) uint32_t lane_high[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_high), high);
  uint32_t most = TableLanes(row.padded, row.n_src, row.at, row.take, row.to, j, row.lanes);
  for (uint32_t h : lane_high) most = std::max(most, h);
  return most;
}
#endif

template <typename T, typename I>
void TableRows(const T* padded, int64_t n_src, const I* index, const bool* keep,
               int64_t keep_step, T* out, uint32_t* top, int64_t lanes, int64_t begin,
               int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const TableRow<T, I> row{padded, n_src, index + r * lanes, keep + r * keep_step,
                             out + r * lanes, lanes};
#if defined(__x86_64__)
    if (ascjax::CpuIsa() >= ascjax::kAvx512) {
      top[r] = TableLanes512(row);
      continue;
    }
    if (ascjax::CpuIsa() >= ascjax::kAvx2) {
      top[r] = TableLanes256(row);
      continue;
    }
#endif
    top[r] = TableLanes(row.padded, n_src, row.at, row.take, row.to, 0, lanes);
  }
}

template <typename T>
ffi::Error TableGatherOf(ffi::ThreadPool& pool, ffi::AnyBuffer src, ffi::AnyBuffer index,
                         const bool* keep, int64_t keep_step, void* out, uint32_t* top,
                         int64_t rows, int64_t lanes) {
  const int64_t n_src = static_cast<int64_t>(src.element_count());
  std::vector<T> padded(n_src + (4 + sizeof(T) - 1) / sizeof(T));
  std::memcpy(padded.data(), src.untyped_data(), n_src * sizeof(T));
  auto* to = static_cast<T*>(out);
  const int64_t row_bytes = lanes * static_cast<int64_t>(sizeof(T) + 3);
  if (index.element_type() == ffi::U16) {
    const auto* at = static_cast<const uint16_t*>(index.untyped_data());
    ParallelRows(pool, rows, row_bytes, [&](int64_t b, int64_t e) {
      TableRows(padded.data(), n_src, at, keep, keep_step, to, top, lanes, b, e);
    });
  } else {
    const auto* at = static_cast<const uint32_t*>(index.untyped_data());
    ParallelRows(pool, rows, row_bytes, [&](int64_t b, int64_t e) {
      TableRows(padded.data(), n_src, at, keep, keep_step, to, top, lanes, b, e);
    });
  }
  return ffi::Error::Success();
}

ffi::Error TableGather(ffi::ThreadPool pool, ffi::AnyBuffer src, ffi::AnyBuffer index,
                       ffi::Buffer<ffi::PRED> keep, ffi::Result<ffi::AnyBuffer> out,
                       ffi::Result<ffi::Buffer<ffi::U32>> top) {
  const auto id = index.dimensions();
  const int64_t lanes = id.size() ? id.back() : 0;
  const int64_t rows = lanes ? static_cast<int64_t>(index.element_count()) / lanes : 0;
  const int64_t keeps = static_cast<int64_t>(keep.element_count());
  if (id.size() < 2 || lanes == 0 || src.element_count() == 0 ||
      src.element_count() >= (size_t{1} << 31) ||
      (index.element_type() != ffi::U16 && index.element_type() != ffi::U32) ||
      (keeps != rows * lanes && keeps != lanes) ||
      static_cast<int64_t>(out->element_count()) != rows * lanes ||
      out->element_type() != src.element_type() ||
      static_cast<int64_t>(top->element_count()) != rows) {
    return ffi::Error::InvalidArgument(
        "ascjax_table_gather: src[0 < S < 2^31], index u16|u32[rows, L], keep pred[rows or 1, L], "
        "out[rows, L] of src's type, top u32[rows]");
  }
  const bool* take = keep.typed_data();
  const int64_t step = keeps == lanes ? 0 : lanes;
  void* to = out->untyped_data();
  uint32_t* high = top->typed_data();
  switch (ffi::ByteWidth(src.element_type())) {  // any type: its bits move unchanged
    case 1:
      return TableGatherOf<uint8_t>(pool, src, index, take, step, to, high, rows, lanes);
    case 2:
      return TableGatherOf<uint16_t>(pool, src, index, take, step, to, high, rows, lanes);
    case 4:
      return TableGatherOf<uint32_t>(pool, src, index, take, step, to, high, rows, lanes);
    default:  // (no instruction gathers 64-bit elements here: none without x64)
      return ffi::Error::InvalidArgument("ascjax_table_gather: src of 1, 2 or 4 bytes");
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxBlockGather, BlockGather,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::PRED>>()
                                  .Ret<ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxTableGather, TableGather,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::Buffer<ffi::PRED>>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::Buffer<ffi::U32>>());
