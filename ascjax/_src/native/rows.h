// What ascjax's native kernels share: rows split over XLA's intra-op thread pool, and the
// instruction set a kernel may use on this CPU.

#ifndef ASCJAX_NATIVE_ROWS_H_
#define ASCJAX_NATIVE_ROWS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "xla/ffi/api/ffi.h"

namespace ascjax {

namespace ffi = xla::ffi;

// Runs body(begin, end) over [0, rows) in chunks of about 256 KiB (a multiple of `granule`
// rows), on this thread and the pool's. Chunks are claimed from a shared counter, so a task the
// pool starts late finds none left and returns: the caller never waits on a task that has not
// started. The shared state is heap-owned, so such a late task touches nothing freed.
template <typename Body>
void ParallelRows(ffi::ThreadPool& pool, int64_t rows, int64_t row_bytes, Body body,
                  int64_t granule = 1) {
  int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(row_bytes, 1));
  chunk = (chunk + granule - 1) / granule * granule;
  const int64_t chunks = (rows + chunk - 1) / chunk;
  struct Progress {
    std::atomic<int64_t> next{0}, done{0};
  };
  auto progress = std::make_shared<Progress>();
  auto work = [=]() {
    for (int64_t c; (c = progress->next.fetch_add(1)) < chunks;) {
      body(c * chunk, std::min(rows, (c + 1) * chunk));
      progress->done.fetch_add(1);
    }
  };
  const int64_t helpers = std::min<int64_t>(pool.num_threads(), chunks - 1);
  for (int64_t t = 0; t < helpers; ++t) pool.Schedule([work]() { work(); });
  work();
  while (progress->done.load() < chunks) std::this_thread::yield();
}

// A function's instruction set, as CpuIsa() names it: kAvx512 needs F, BW and VL.
#define ASCJAX_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#define ASCJAX_AVX2 __attribute__((target("avx2")))

// The widest instructions the kernels may use. ASCJAX_NATIVE_ISA=scalar, avx2 or avx512 (no
// VBMI2) caps it (the tests run every path on one machine; Python refuses any other value);
// ASCJAX_NATIVE_SCALAR=1 is the same as scalar. Read once, at the first kernel call of the
// process.
enum Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Vbmi2 = 3 };

inline Isa CpuIsa() {
#if defined(__x86_64__)
  static const Isa isa = [] {
    Isa found = kScalar;
    if (__builtin_cpu_supports("avx2")) found = kAvx2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl")) {
      found = __builtin_cpu_supports("avx512vbmi2") ? kAvx512Vbmi2 : kAvx512;
    }
    const char* cap = std::getenv("ASCJAX_NATIVE_ISA");
    if (std::getenv("ASCJAX_NATIVE_SCALAR") || (cap && std::strcmp(cap, "scalar") == 0)) {
      return kScalar;
    }
    if (cap && std::strcmp(cap, "avx2") == 0) return std::min(found, kAvx2);
    if (cap && std::strcmp(cap, "avx512") == 0) return std::min(found, kAvx512);
    return found;
  }();
  return isa;
#else
  return kScalar;
#endif
}

}  // namespace ascjax

#endif  // ASCJAX_NATIVE_ROWS_H_
