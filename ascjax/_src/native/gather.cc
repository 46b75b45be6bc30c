// The DataBlock gather of asc_gather_datablock / Reg::GatherB for XLA's CPU backend: 8 blocks
// of 32 bytes a register, each from a byte offset into one shared source, or zeros.
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

#include <cstdint>
#include <cstring>

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

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxBlockGather, BlockGather,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::PRED>>()
                                  .Ret<ffi::AnyBuffer>());
