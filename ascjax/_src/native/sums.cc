// Float32 row sums for XLA's CPU backend: sequential and Kahan in the order ascjax.precision.sum
// defines them (orders._chain_step), and the float64 sums exact_sum certifies its results from
// (exact.certified_float_bits).
//
// XLA's loop over columns (orders.column_sum) ran float32 Kahan at about a third of np.sum's
// speed: each step is a chain of dependent adds on one row. Here 16 rows (8 with AVX2) are summed
// at once, one lane each: a 16 x 16 tile of their columns is loaded a row at a time and
// transposed in registers, so every add is the row's own next add, in its own lane.
//
//   ascjax_chain_sums(x f32[rows, n]; kahan) -> f32[rows]
//   ascjax_chain_sums_shifted(body f32[m, n], head f32[shift], rest f32[k, n]; kahan)
//       -> f32[m + k]
//     sequential: s = x0; s = s + xj.  kahan: s = x0, e = +0; per x: y = x + (-e);
//     t = s + y; e = (t + (-s)) + (-y); s = t.
//     A tiny input (nonzero, below 2^-103) is read as a NaN (add.tiny_to_nan): every other
//     value in either loop is then zero or normal, so no flush-to-zero setting can change a
//     bit, and a NaN result sends the caller to the carrier adder.
//   ascjax_wide_sums(x f32[rows, n]) -> (sum f64[rows], magnitude f64[rows])
//   ascjax_wide_sums_shifted(body, head, rest) -> (sum f64[m + k], magnitude f64[m + k])
//     each row's values, and their magnitudes, summed in float64 in an order of the kernel's
//     (any order serves the certificate).
//
// The shifted layout is binio.rows_in_place's: body starts `shift` elements into row 0, so row
// r < m is body's flat elements r n - shift .. r n - shift + n - 1, except row 0's first
// `shift`, which are head; rows m .. m + k - 1 are rest.

#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "rows.h"

namespace {

using ascjax::CpuIsa;
using ascjax::ParallelRows;
namespace ffi = xla::ffi;

// Rows of n floats, plain (shift 0, m = rows) or in binio.rows_in_place's shifted layout.
struct RowSet {
  const float* body;
  int64_t m;
  const float* head;
  int64_t shift;
  const float* rest;
  int64_t rows, n;
};

constexpr uint32_t kTinyFloor = 24u << 23;  // the bits of 2^-103

inline float Clean(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return ((bits & 0x7fffffffu) - 1u) < kTinyFloor - 1u ? std::numeric_limits<float>::quiet_NaN()
                                                       : x;
}

// --- sequential and Kahan ------------------------------------------------------------------

template <bool kKahan>
inline void Step(float& s, float& e, float x) {
  if constexpr (kKahan) {
    const float y = x + -e;
    const float t = s + y;
    e = (t + -s) + -y;
    s = t;
  } else {
    s = s + x;
  }
}

// A chain (s, e) carried on over p[from .. to).
template <bool kKahan>
void ChainOn(const float* p, int64_t from, int64_t to, float& s, float& e) {
  for (int64_t j = from; j < to; ++j) Step<kKahan>(s, e, Clean(p[j]));
}

// One row given as two pieces in order (a, then b; na + nb >= 1).
template <bool kKahan>
float ChainPieces(const float* a, int64_t na, const float* b, int64_t nb) {
  if (na + nb == 0) return std::numeric_limits<float>::quiet_NaN();  // the handlers refuse n = 0
  if (na == 0) return ChainPieces<kKahan>(b, nb, nullptr, 0);
  float s = Clean(a[0]), e = 0.0f;
  ChainOn<kKahan>(a, 1, na, s, e);
  ChainOn<kKahan>(b, 0, nb, s, e);
  return s;
}

// kGroup rows at stride n, interleaved so that their chains overlap in the pipeline (the
// portable path; the compiler may put the lanes in vectors, which changes no add).
template <bool kKahan, int kGroup>
void ChainGroup(const float* base, int64_t n, float* out) {
  float s[kGroup], e[kGroup];
  for (int i = 0; i < kGroup; ++i) s[i] = Clean(base[i * n]), e[i] = 0.0f;
  for (int64_t j = 1; j < n; ++j) {
    for (int i = 0; i < kGroup; ++i) Step<kKahan>(s[i], e[i], Clean(base[i * n + j]));
  }
  for (int i = 0; i < kGroup; ++i) out[i] = s[i];
}

// The start of a vector kernel's rows: columns [0, lead) row by row, so that its tiles start
// where every row's loads are aligned (rows_in_place hands NumPy's rows over 16 bytes past a
// 64-byte boundary, and a load across two cache lines costs about twice one). Rows share an
// alignment only where a row is a whole number of vectors long.
template <bool kKahan, int kLanes>
int64_t LeadLanes(const float* base, int64_t n, float* s_lanes, float* e_lanes) {
  constexpr int64_t kBytes = 4 * kLanes;
  const int64_t lead = n % kLanes ? 0 : (-reinterpret_cast<uintptr_t>(base) % kBytes) / 4;
  for (int i = 0; lead && i < kLanes; ++i) {
    s_lanes[i] = Clean(base[i * n]);
    e_lanes[i] = 0.0f;
    ChainOn<kKahan>(base + i * n, 1, lead, s_lanes[i], e_lanes[i]);
  }
  return lead;
}

// Lanes of a vector kernel written back to chains (none yet where `from` is 0), carried on
// from column `from` row by row (the columns past the last whole tile), and stored.
template <bool kKahan, int kLanes>
void FinishLanes(const float* base, int64_t n, int64_t from, const float* s_lanes,
                 const float* e_lanes, float* out) {
  for (int i = 0; i < kLanes; ++i) {
    const float* p = base + i * n;
    if (from == 0) {
      out[i] = ChainPieces<kKahan>(p, n, nullptr, 0);
      continue;
    }
    float s = s_lanes[i], e = e_lanes[i];
    ChainOn<kKahan>(p, from, n, s, e);
    out[i] = s;
  }
}

#if defined(__x86_64__)

ASCJAX_AVX512 inline __m512 Clean16(__m512 x) {
  const __m512i mag = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  const __mmask16 tiny = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(mag, _mm512_set1_epi32(1)),
                                                 _mm512_set1_epi32(kTinyFloor - 1));
  return _mm512_mask_mov_ps(x, tiny, _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
}

ASCJAX_AVX2 inline __m256 Clean8(__m256 x) {
  const __m256i mag = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
  const __m256i tiny = _mm256_andnot_si256(
      _mm256_cmpeq_epi32(mag, _mm256_setzero_si256()),
      _mm256_cmpgt_epi32(_mm256_set1_epi32(kTinyFloor), mag));
  return _mm256_blendv_ps(x, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()),
                          _mm256_castsi256_ps(tiny));
}

template <bool kKahan>
ASCJAX_AVX512 inline void Step16(__m512& s, __m512& e, __m512 x) {
  if constexpr (kKahan) {  // a - b is a + (-b), bit for bit
    const __m512 y = _mm512_sub_ps(x, e);
    const __m512 t = _mm512_add_ps(s, y);
    e = _mm512_sub_ps(_mm512_sub_ps(t, s), y);
    s = t;
  } else {
    s = _mm512_add_ps(s, x);
  }
}

template <bool kKahan>
ASCJAX_AVX2 inline void Step8(__m256& s, __m256& e, __m256 x) {
  if constexpr (kKahan) {
    const __m256 y = _mm256_sub_ps(x, e);
    const __m256 t = _mm256_add_ps(s, y);
    e = _mm256_sub_ps(_mm256_sub_ps(t, s), y);
    s = t;
  } else {
    s = _mm256_add_ps(s, x);
  }
}

// c[i] = row i's 16 columns  ->  c[j] = column j's 16 rows.
ASCJAX_AVX512 inline void Transpose16(__m512 c[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(c[i], c[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(c[i], c[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 2]);
    const __m512d p = _mm512_castps_pd(t[i + 1]), q = _mm512_castps_pd(t[i + 3]);
    c[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    c[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    c[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(p, q));
    c[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(p, q));
  }
  for (int i = 0; i < 16; i += 8) {
    for (int q = 0; q < 4; ++q) {
      t[i + q] = _mm512_shuffle_f32x4(c[i + q], c[i + q + 4], 0x88);
      t[i + q + 4] = _mm512_shuffle_f32x4(c[i + q], c[i + q + 4], 0xDD);
    }
  }
  for (int q = 0; q < 8; ++q) {
    c[q] = _mm512_shuffle_f32x4(t[q], t[q + 8], 0x88);
    c[q + 8] = _mm512_shuffle_f32x4(t[q], t[q + 8], 0xDD);
  }
}

ASCJAX_AVX2 inline void Transpose8(__m256 c[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(c[i], c[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(c[i], c[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int q = 0; q < 4; ++q) {
    c[q] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x20);
    c[q + 4] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x31);
  }
}

// 16 rows at stride n, one lane each: LeadLanes, whole 16-column tiles, then FinishLanes.
template <bool kKahan>
ASCJAX_AVX512 void Chain16(const float* base, int64_t n, float* out) {
  alignas(64) float s_lanes[16] = {}, e_lanes[16] = {};
  const int64_t lead = LeadLanes<kKahan, 16>(base, n, s_lanes, e_lanes);
  __m512 s = _mm512_load_ps(s_lanes), e = _mm512_load_ps(e_lanes);
  const int64_t whole = lead + (n - lead) / 16 * 16;
  for (int64_t j0 = lead; j0 < whole; j0 += 16) {
    __m512 c[16];
    for (int i = 0; i < 16; ++i) {
      // 64 columns (4 tiles) ahead, within the row: 16 rows are more streams than the
      // hardware prefetcher follows well
      if (j0 + 64 < n) {
        _mm_prefetch(reinterpret_cast<const char*>(base + i * n + j0 + 64), _MM_HINT_T0);
      }
      c[i] = _mm512_loadu_ps(base + i * n + j0);
    }
    Transpose16(c);
    int j = 0;
    if (j0 == 0) s = Clean16(c[j++]), e = _mm512_setzero_ps();
    for (; j < 16; ++j) Step16<kKahan>(s, e, Clean16(c[j]));
  }
  _mm512_store_ps(s_lanes, s);
  _mm512_store_ps(e_lanes, e);
  FinishLanes<kKahan, 16>(base, n, whole, s_lanes, e_lanes, out);
}

template <bool kKahan>
ASCJAX_AVX2 void Chain8(const float* base, int64_t n, float* out) {
  alignas(32) float s_lanes[8] = {}, e_lanes[8] = {};
  const int64_t lead = LeadLanes<kKahan, 8>(base, n, s_lanes, e_lanes);
  __m256 s = _mm256_load_ps(s_lanes), e = _mm256_load_ps(e_lanes);
  const int64_t whole = lead + (n - lead) / 8 * 8;
  for (int64_t j0 = lead; j0 < whole; j0 += 8) {
    __m256 c[8];
    for (int i = 0; i < 8; ++i) {
      if (j0 + 64 < n) {
        _mm_prefetch(reinterpret_cast<const char*>(base + i * n + j0 + 64), _MM_HINT_T0);
      }
      c[i] = _mm256_loadu_ps(base + i * n + j0);
    }
    Transpose8(c);
    int j = 0;
    if (j0 == 0) s = Clean8(c[j++]), e = _mm256_setzero_ps();
    for (; j < 8; ++j) Step8<kKahan>(s, e, Clean8(c[j]));
  }
  _mm256_store_ps(s_lanes, s);
  _mm256_store_ps(e_lanes, e);
  FinishLanes<kKahan, 8>(base, n, whole, s_lanes, e_lanes, out);
}
#endif

// `count` rows at stride n from base.
template <bool kKahan>
void ChainRows(const float* base, int64_t n, int64_t count, float* out) {
  int64_t r = 0;
#if defined(__x86_64__)
  if (CpuIsa() >= ascjax::kAvx512) {
    for (; r + 16 <= count; r += 16) Chain16<kKahan>(base + r * n, n, out + r);
  }
  if (CpuIsa() >= ascjax::kAvx2) {
    for (; r + 8 <= count; r += 8) Chain8<kKahan>(base + r * n, n, out + r);
  }
#endif
  for (; r + 8 <= count; r += 8) ChainGroup<kKahan, 8>(base + r * n, n, out + r);
  for (; r < count; ++r) out[r] = ChainPieces<kKahan>(base + r * n, n, nullptr, 0);
}

// Rows [begin, end) of a RowSet: the shifted row 0 alone, then body's rows, then rest's.
template <bool kKahan>
void ChainRange(const RowSet& a, int64_t begin, int64_t end, float* out) {
  int64_t r = begin;
  if (r == 0 && a.shift > 0 && r < end) {
    out[0] = ChainPieces<kKahan>(a.head, a.shift, a.body, a.n - a.shift);
    r = 1;
  }
  const int64_t body_end = std::min(end, a.m);
  if (r < body_end) {
    ChainRows<kKahan>(a.body + r * a.n - a.shift, a.n, body_end - r, out + r);
    r = body_end;
  }
  if (r < end) ChainRows<kKahan>(a.rest + (r - a.m) * a.n, a.n, end - r, out + r);
}

ffi::Error RunChains(ffi::ThreadPool& pool, const RowSet& a, bool kahan, float* out) {
  ParallelRows(
      pool, a.rows, a.n * 4,
      [&](int64_t b, int64_t e) {
        if (kahan) {
          ChainRange<true>(a, b, e, out);
        } else {
          ChainRange<false>(a, b, e, out);
        }
      },
      16);
  return ffi::Error::Success();
}

// --- float64 sums of values and magnitudes -------------------------------------------------

void WideScalar(const float* p, int64_t len, double& s, double& t) {
  double s4[4] = {0, 0, 0, 0}, t4[4] = {0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 4 <= len; j += 4) {
    for (int k = 0; k < 4; ++k) {
      const double x = p[j + k];
      s4[k] += x;
      t4[k] += x < 0 ? -x : x;
    }
  }
  for (; j < len; ++j) {
    const double x = p[j];
    s4[0] += x;
    t4[0] += x < 0 ? -x : x;
  }
  s += (s4[0] + s4[1]) + (s4[2] + s4[3]);
  t += (t4[0] + t4[1]) + (t4[2] + t4[3]);
}

#if defined(__x86_64__)
ASCJAX_AVX512 void Wide512(const float* p, int64_t len, double& s, double& t) {
  __m512d s0 = _mm512_setzero_pd(), s1 = s0, t0 = s0, t1 = s0;
  int64_t j = 0;
  for (; j + 16 <= len; j += 16) {
    const __m512 x = _mm512_loadu_ps(p + j), m = _mm512_abs_ps(x);
    s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
    s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(
                                _mm512_castps_pd(x), 1))));
    t0 = _mm512_add_pd(t0, _mm512_cvtps_pd(_mm512_castps512_ps256(m)));
    t1 = _mm512_add_pd(t1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(
                                _mm512_castps_pd(m), 1))));
  }
  s += _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
  t += _mm512_reduce_add_pd(_mm512_add_pd(t0, t1));
  WideScalar(p + j, len - j, s, t);
}

ASCJAX_AVX2 void Wide256(const float* p, int64_t len, double& s, double& t) {
  __m256d s0 = _mm256_setzero_pd(), s1 = s0, t0 = s0, t1 = s0;
  const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  int64_t j = 0;
  for (; j + 8 <= len; j += 8) {
    const __m256 x = _mm256_loadu_ps(p + j), m = _mm256_and_ps(x, sign);
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
    t0 = _mm256_add_pd(t0, _mm256_cvtps_pd(_mm256_castps256_ps128(m)));
    t1 = _mm256_add_pd(t1, _mm256_cvtps_pd(_mm256_extractf128_ps(m, 1)));
  }
  alignas(32) double sv[4], tv[4];
  _mm256_store_pd(sv, _mm256_add_pd(s0, s1));
  _mm256_store_pd(tv, _mm256_add_pd(t0, t1));
  s += (sv[0] + sv[1]) + (sv[2] + sv[3]);
  t += (tv[0] + tv[1]) + (tv[2] + tv[3]);
  WideScalar(p + j, len - j, s, t);
}
#endif

void WidePiece(const float* p, int64_t len, double& s, double& t) {
#if defined(__x86_64__)
  if (CpuIsa() >= ascjax::kAvx512) return Wide512(p, len, s, t);
  if (CpuIsa() >= ascjax::kAvx2) return Wide256(p, len, s, t);
#endif
  WideScalar(p, len, s, t);
}

ffi::Error RunWide(ffi::ThreadPool& pool, const RowSet& a, double* sum, double* magnitude) {
  ParallelRows(pool, a.rows, a.n * 4, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double s = 0, t = 0;
      if (r == 0 && a.shift > 0) {
        WidePiece(a.head, a.shift, s, t);
        WidePiece(a.body, a.n - a.shift, s, t);
      } else {
        WidePiece(r < a.m ? a.body + r * a.n - a.shift : a.rest + (r - a.m) * a.n, a.n, s, t);
      }
      sum[r] = s;
      magnitude[r] = t;
    }
  });
  return ffi::Error::Success();
}

// --- adjacent-pair trees ------------------------------------------------------------------
//
// The float32 tree orders of precision.sum (orders.host_order's NumPy paths): method 0 the
// adjacent tree over the whole row (an odd element at a level's end moves up unchanged);
// methods 1 and 2 ReduceSum's repeats of 64 lanes (the last padded with +0), each summed by
// an adjacent tree, then the repeat sums in order (1) or by an adjacent tree padded with +0
// to a power of two (2). Tiny inputs read as NaN, as for the chains: with none, every sum is
// zero or normal, so no flush-to-zero setting changes a bit.

constexpr int64_t kRepeatLanes = 64;

// dst[i] = src[2i] + src[2i + 1], i < pairs (dst may be src: dst[i] is written after src[2i]
// and src[2i + 1] are read); inputs cleaned where `clean`.
void PairLevelScalar(const float* src, int64_t pairs, float* dst, bool clean) {
  for (int64_t i = 0; i < pairs; ++i) {
    const float a = src[2 * i], b = src[2 * i + 1];
    dst[i] = clean ? Clean(a) + Clean(b) : a + b;
  }
}

#if defined(__x86_64__)
ASCJAX_AVX512 void PairLevel512(const float* src, int64_t pairs, float* dst, bool clean) {
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  int64_t i = 0;
  for (; i + 16 <= pairs; i += 16) {
    __m512 a = _mm512_loadu_ps(src + 2 * i), b = _mm512_loadu_ps(src + 2 * i + 16);
    if (clean) a = Clean16(a), b = Clean16(b);
    _mm512_storeu_ps(dst + i, _mm512_add_ps(_mm512_permutex2var_ps(a, even, b),
                                            _mm512_permutex2var_ps(a, odd, b)));
  }
  PairLevelScalar(src + 2 * i, pairs - i, dst + i, clean);
}
#endif

void PairLevel(const float* src, int64_t pairs, float* dst, bool clean) {
#if defined(__x86_64__)
  if (CpuIsa() >= ascjax::kAvx512) return PairLevel512(src, pairs, dst, clean);
#endif
  PairLevelScalar(src, pairs, dst, clean);
}

// The adjacent tree of buf[0 .. m) in place (buf cleaned already).
float AdjacentInPlace(float* buf, int64_t m) {
  while (m > 1) {
    const float last = buf[m - 1];
    PairLevel(buf, m / 2, buf, false);
    if (m % 2) buf[m / 2] = last;
    m = (m + 1) / 2;
  }
  return buf[0];
}

// One row (contiguous, n >= 1) by `method`; scratch holds n / 2 + 64 floats.
float TreeRow(const float* p, int64_t n, int method, float* scratch) {
  if (method == 0) {
    if (n == 1) return Clean(p[0]);
    PairLevel(p, n / 2, scratch, true);
    if (n % 2) scratch[n / 2] = Clean(p[n - 1]);
    return AdjacentInPlace(scratch, (n + 1) / 2);
  }
  // Level 1 of every repeat's tree is level 1 of the whole row (64 is even): the repeats'
  // pairs never straddle two repeats, so six levels leave repeat r's sum at scratch[r].
  const int64_t repeats = (n + kRepeatLanes - 1) / kRepeatLanes, whole = n / kRepeatLanes;
  PairLevel(p, whole * kRepeatLanes / 2, scratch, true);
  if (whole < repeats) {  // the last repeat, padded with +0
    float tail[kRepeatLanes] = {};
    for (int64_t j = whole * kRepeatLanes; j < n; ++j) tail[j - whole * kRepeatLanes] = p[j];
    PairLevel(tail, kRepeatLanes / 2, scratch + whole * kRepeatLanes / 2, true);
  }
  for (int64_t m = repeats * kRepeatLanes / 2; m > repeats; m /= 2) {
    PairLevel(scratch, m / 2, scratch, false);
  }
  if (method == 1) {
    float s = scratch[0];
    for (int64_t r = 1; r < repeats; ++r) s = s + scratch[r];
    return s;
  }
  int64_t width = 1;
  while (width < repeats) width *= 2;
  for (int64_t r = repeats; r < width; ++r) scratch[r] = 0.0f;
  return AdjacentInPlace(scratch, width);
}

ffi::Error RunTrees(ffi::ThreadPool& pool, const RowSet& a, int method, float* out) {
  ParallelRows(pool, a.rows, a.n * 4, [&](int64_t begin, int64_t end) {
    std::unique_ptr<float[]> scratch(new float[a.n / 2 + 2 * kRepeatLanes]);
    std::unique_ptr<float[]> row0;
    for (int64_t r = begin; r < end; ++r) {
      const float* p;
      if (r == 0 && a.shift > 0) {  // row 0 in two pieces: joined first
        row0.reset(new float[a.n]);
        std::memcpy(row0.get(), a.head, a.shift * sizeof(float));
        std::memcpy(row0.get() + a.shift, a.body, (a.n - a.shift) * sizeof(float));
        p = row0.get();
      } else {
        p = r < a.m ? a.body + r * a.n - a.shift : a.rest + (r - a.m) * a.n;
      }
      out[r] = TreeRow(p, a.n, method, scratch.get());
    }
  });
  return ffi::Error::Success();
}

// --- the handlers --------------------------------------------------------------------------

// A plain x[..., n] as a RowSet; false where x is not rows of n >= 1 floats.
bool PlainRows(const ffi::Buffer<ffi::F32>& x, int64_t outputs, RowSet& a) {
  const auto dims = x.dimensions();
  if (dims.size() == 0 || dims.back() == 0) return false;
  const int64_t n = dims.back(), rows = x.element_count() / n;
  a = RowSet{x.typed_data(), rows, nullptr, 0, nullptr, rows, n};
  return outputs == rows;
}

// body[m, n], head[shift], rest[k, n] as a RowSet; false where they do not fit together.
bool ShiftedRows(const ffi::Buffer<ffi::F32>& body, const ffi::Buffer<ffi::F32>& head,
                 const ffi::Buffer<ffi::F32>& rest, int64_t outputs, RowSet& a) {
  const auto bd = body.dimensions(), rd = rest.dimensions();
  if (bd.size() != 2 || rd.size() != 2 || bd[1] == 0 || rd[1] != bd[1]) return false;
  const int64_t m = bd[0], n = bd[1], shift = head.element_count(), k = rd[0];
  a = RowSet{body.typed_data(), m, head.typed_data(), shift, rest.typed_data(), m + k, n};
  return shift < n && (shift == 0 || m >= 1) && outputs == m + k;
}

const char kChainShapes[] = "ascjax_chain_sums: x float32[..., n >= 1], out float32[...]";
const char kWideShapes[] = "ascjax_wide_sums: x float32[..., n >= 1], sums float64[...]";

ffi::Error ChainSums(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                     ffi::Result<ffi::Buffer<ffi::F32>> out, bool kahan) {
  RowSet a;
  if (!PlainRows(x, out->element_count(), a)) return ffi::Error::InvalidArgument(kChainShapes);
  return RunChains(pool, a, kahan, out->typed_data());
}

ffi::Error ChainSumsShifted(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> body,
                            ffi::Buffer<ffi::F32> head, ffi::Buffer<ffi::F32> rest,
                            ffi::Result<ffi::Buffer<ffi::F32>> out, bool kahan) {
  RowSet a;
  if (!ShiftedRows(body, head, rest, out->element_count(), a)) {
    return ffi::Error::InvalidArgument(kChainShapes);
  }
  return RunChains(pool, a, kahan, out->typed_data());
}

const char kTreeShapes[] = "ascjax_tree_sums: x float32[..., n >= 1], method 0, 1 or 2";

ffi::Error TreeSums(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                    ffi::Result<ffi::Buffer<ffi::F32>> out, int32_t method) {
  RowSet a;
  if (!PlainRows(x, out->element_count(), a) || method < 0 || method > 2) {
    return ffi::Error::InvalidArgument(kTreeShapes);
  }
  return RunTrees(pool, a, method, out->typed_data());
}

ffi::Error TreeSumsShifted(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> body,
                           ffi::Buffer<ffi::F32> head, ffi::Buffer<ffi::F32> rest,
                           ffi::Result<ffi::Buffer<ffi::F32>> out, int32_t method) {
  RowSet a;
  if (!ShiftedRows(body, head, rest, out->element_count(), a) || method < 0 || method > 2) {
    return ffi::Error::InvalidArgument(kTreeShapes);
  }
  return RunTrees(pool, a, method, out->typed_data());
}

ffi::Error WideSums(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                    ffi::Result<ffi::Buffer<ffi::F64>> sum,
                    ffi::Result<ffi::Buffer<ffi::F64>> magnitude) {
  RowSet a;
  if (!PlainRows(x, sum->element_count(), a) || magnitude->element_count() != a.rows) {
    return ffi::Error::InvalidArgument(kWideShapes);
  }
  return RunWide(pool, a, sum->typed_data(), magnitude->typed_data());
}

ffi::Error WideSumsShifted(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> body,
                           ffi::Buffer<ffi::F32> head, ffi::Buffer<ffi::F32> rest,
                           ffi::Result<ffi::Buffer<ffi::F64>> sum,
                           ffi::Result<ffi::Buffer<ffi::F64>> magnitude) {
  RowSet a;
  if (!ShiftedRows(body, head, rest, sum->element_count(), a) ||
      magnitude->element_count() != a.rows) {
    return ffi::Error::InvalidArgument(kWideShapes);
  }
  return RunWide(pool, a, sum->typed_data(), magnitude->typed_data());
}

}  // namespace

// The instruction set the kernels use (rows.h's Isa), for Python to choose between a kernel
// and a path of its own (the trees' scalar loop runs slower than NumPy's levels).
extern "C" int AscjaxIsa() { return ascjax::CpuIsa(); }

// The bindings' operands: rows as x, or shifted as (body, head, rest).
static auto PlainRowsBinding() {
  return ffi::Ffi::Bind().Ctx<ffi::ThreadPool>().Arg<ffi::Buffer<ffi::F32>>();
}

static auto ShiftedRowsBinding() {
  return ffi::Ffi::Bind()
      .Ctx<ffi::ThreadPool>()
      .Arg<ffi::Buffer<ffi::F32>>()
      .Arg<ffi::Buffer<ffi::F32>>()
      .Arg<ffi::Buffer<ffi::F32>>();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxChainSums, ChainSums,
                              PlainRowsBinding()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<bool>("kahan"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxChainSumsShifted, ChainSumsShifted,
                              ShiftedRowsBinding()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<bool>("kahan"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxWideSums, WideSums,
                              PlainRowsBinding()
                                  .Ret<ffi::Buffer<ffi::F64>>()
                                  .Ret<ffi::Buffer<ffi::F64>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxWideSumsShifted, WideSumsShifted,
                              ShiftedRowsBinding()
                                  .Ret<ffi::Buffer<ffi::F64>>()
                                  .Ret<ffi::Buffer<ffi::F64>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxTreeSums, TreeSums,
                              PlainRowsBinding()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int32_t>("method"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(AscjaxTreeSumsShifted, TreeSumsShifted,
                              ShiftedRowsBinding()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int32_t>("method"));
