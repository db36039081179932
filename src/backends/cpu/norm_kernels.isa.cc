// SPDX-License-Identifier: Apache-2.0
// Row kernels of norm_kernels.h, compiled once per SPORE_ISA (base, avx2, avx512) inside an
// ISA-named namespace. Reductions keep 4 vector accumulators and a fixed lane reduction, so the
// summation order depends only on n.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/simd_reduce.h"

#include "backends/cpu/isa.h"
#include "backends/cpu/norm_kernels.h"

namespace spore::cpu {
namespace SPORE_ISA {
namespace {

using Arch = xsimd::default_arch;

template <class T>
T row_sum(const T* x, int64_t n) {
  return simd::sum<Arch>(x, n);
}

template <class T>
T row_sum_sq_dev(const T* x, int64_t n, T c) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  const B vc(c);
  B a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    B d0 = B::load_unaligned(x + i) - vc, d1 = B::load_unaligned(x + i + W) - vc;
    B d2 = B::load_unaligned(x + i + 2 * W) - vc, d3 = B::load_unaligned(x + i + 3 * W) - vc;
    a0 = xsimd::fma(d0, d0, a0);
    a1 = xsimd::fma(d1, d1, a1);
    a2 = xsimd::fma(d2, d2, a2);
    a3 = xsimd::fma(d3, d3, a3);
  }
  for (; i + W <= n; i += W) {
    B d = B::load_unaligned(x + i) - vc;
    a0 = xsimd::fma(d, d, a0);
  }
  T s = xsimd::hadd((a0 + a1) + (a2 + a3));
  for (; i < n; ++i) s += (x[i] - c) * (x[i] - c);
  return s;
}

template <class T>
void row_normalize(const T* x, T* y, int64_t n, T mean, T rstd, const T* w, const T* b) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  const B vm(mean), vr(rstd);
  int64_t i = 0;
  // Four loop variants so the hot loop carries no per-element branch.
  if (w && b) {
    for (; i + W <= n; i += W)
      xsimd::fma((B::load_unaligned(x + i) - vm) * vr, B::load_unaligned(w + i), B::load_unaligned(b + i))
          .store_unaligned(y + i);
  } else if (w) {
    for (; i + W <= n; i += W) ((B::load_unaligned(x + i) - vm) * vr * B::load_unaligned(w + i)).store_unaligned(y + i);
  } else if (b) {
    for (; i + W <= n; i += W) ((B::load_unaligned(x + i) - vm) * vr + B::load_unaligned(b + i)).store_unaligned(y + i);
  } else {
    for (; i + W <= n; i += W) ((B::load_unaligned(x + i) - vm) * vr).store_unaligned(y + i);
  }
  for (; i < n; ++i) {
    T v = (x[i] - mean) * rstd;
    if (w) v *= w[i];
    if (b) v += b[i];
    y[i] = v;
  }
}

template <class T>
void row_scale_shift(const T* x, T* y, int64_t n, T m, T a, T c) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  const B vm(m), va(a), vc(c);
  int64_t i = 0;
  for (; i + W <= n; i += W) xsimd::fma(B::load_unaligned(x + i) - vm, va, vc).store_unaligned(y + i);
  for (; i < n; ++i) y[i] = (x[i] - m) * a + c;
}

template <class T>
T row_sum_dot_dev(const T* g, const T* x, int64_t n, T c) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  const B vc(c);
  B a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    a0 = xsimd::fma(B::load_unaligned(g + i), B::load_unaligned(x + i) - vc, a0);
    a1 = xsimd::fma(B::load_unaligned(g + i + W), B::load_unaligned(x + i + W) - vc, a1);
    a2 = xsimd::fma(B::load_unaligned(g + i + 2 * W), B::load_unaligned(x + i + 2 * W) - vc, a2);
    a3 = xsimd::fma(B::load_unaligned(g + i + 3 * W), B::load_unaligned(x + i + 3 * W) - vc, a3);
  }
  for (; i + W <= n; i += W) a0 = xsimd::fma(B::load_unaligned(g + i), B::load_unaligned(x + i) - vc, a0);
  T s = xsimd::hadd((a0 + a1) + (a2 + a3));
  for (; i < n; ++i) s += g[i] * (x[i] - c);
  return s;
}

template <class T>
void row_axpby_dev(const T* g, const T* x, T* y, int64_t n, T a, T b, T c, T d) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  const B va(a), vb(b), vc(c), vd(d);
  int64_t i = 0;
  for (; i + W <= n; i += W)
    xsimd::fma(va, B::load_unaligned(g + i), xsimd::fma(vb, B::load_unaligned(x + i) - vc, vd)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] = a * g[i] + (b * (x[i] - c) + d);
}

// Channels-last: vectors run along the channels of a row; the scalar tail is the last C % W
// channels of every row.
template <class T>
void col_scale_shift(const T* x, T* y, int64_t rows, int64_t C, const T* m, const T* a, const T* d) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * C;
    T* yr = y + r * C;
    int64_t c = 0;
    for (; c + W <= C; c += W)
      xsimd::fma(B::load_unaligned(xr + c) - B::load_unaligned(m + c), B::load_unaligned(a + c), B::load_unaligned(d + c))
          .store_unaligned(yr + c);
    for (; c < C; ++c) yr[c] = (xr[c] - m[c]) * a[c] + d[c];
  }
}

// Non-temporal store of one full vector at an address aligned to the vector size.
template <class T>
inline void stream_store(T* y, const xsimd::batch<T, Arch>& v) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) _mm512_stream_ps(y, v);
  else _mm512_stream_pd(y, v);
#elif defined(__AVX2__)
  if constexpr (std::is_same_v<T, float>) _mm256_stream_ps(y, v);
  else _mm256_stream_pd(y, v);
#else
  if constexpr (std::is_same_v<T, float>) _mm_stream_ps(y, v);
  else _mm_stream_pd(y, v);
#endif
}

using simd::hmax;

template <class T>
T row_max(const T* x, int64_t n) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  T m = -INFINITY;
  int64_t i = 0;
  if (n >= 2 * W) {
    B a0 = B::load_unaligned(x), a1 = B::load_unaligned(x + W);
    for (i = 2 * W; i + 2 * W <= n; i += 2 * W) {
      a0 = xsimd::max(a0, B::load_unaligned(x + i));
      a1 = xsimd::max(a1, B::load_unaligned(x + i + W));
    }
    m = std::max(hmax(a0), hmax(a1));
    // xsimd::max drops NaN lanes on some ISAs: a NaN anywhere must give a NaN row.
    if (std::isnan(hmax(a0)) || std::isnan(hmax(a1))) m = NAN;
  }
  for (; i < n; ++i) m = (x[i] > m || std::isnan(x[i])) ? x[i] : m;
  return m;
}

template <class T>
void softmax_rows(const T* x, T* y, int64_t rows, int64_t n, bool log, bool stream) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  std::vector<T> buf_store(log ? 0 : static_cast<size_t>(n));
  T* buf = buf_store.data();
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T m = row_max(xr, n);
    if (std::isinf(m) && m < 0) m = 0;  // an all -inf row: exp gives 0s and the result NaN, as PyTorch
    const B vm(m);
    B a0(T(0)), a1(T(0));
    int64_t i = 0;
    if (log) {
      for (; i + 2 * W <= n; i += 2 * W) {
        a0 += xsimd::exp(B::load_unaligned(xr + i) - vm);
        a1 += xsimd::exp(B::load_unaligned(xr + i + W) - vm);
      }
      for (; i + W <= n; i += W) a0 += xsimd::exp(B::load_unaligned(xr + i) - vm);
    } else {
      for (; i + 2 * W <= n; i += 2 * W) {
        const B e0 = xsimd::exp(B::load_unaligned(xr + i) - vm), e1 = xsimd::exp(B::load_unaligned(xr + i + W) - vm);
        e0.store_unaligned(buf + i);
        e1.store_unaligned(buf + i + W);
        a0 += e0;
        a1 += e1;
      }
      for (; i + W <= n; i += W) {
        const B e = xsimd::exp(B::load_unaligned(xr + i) - vm);
        e.store_unaligned(buf + i);
        a0 += e;
      }
    }
    T s = xsimd::hadd(a0 + a1);
    for (; i < n; ++i) {
      const T e = std::exp(xr[i] - m);
      if (!log) buf[i] = e;
      s += e;
    }
    // Final pass: y = buf / s, or x - (m + log s). Non-temporal stores need aligned addresses:
    // a scalar head reaches the alignment, a scalar tail finishes.
    const T k = log ? m + std::log(s) : T(1) / s;
    const B vk(k);
    auto f = [&](int64_t j) { return log ? xr[j] - k : buf[j] * k; };
    auto fv = [&](int64_t j) { return log ? B::load_unaligned(xr + j) - vk : B::load_unaligned(buf + j) * vk; };
    int64_t j = 0;
    if (stream) {
      const int64_t mis = static_cast<int64_t>((reinterpret_cast<uintptr_t>(yr) / sizeof(T)) % W);
      const int64_t head = std::min<int64_t>(n, mis ? W - mis : 0);
      for (; j < head; ++j) yr[j] = f(j);
      if ((reinterpret_cast<uintptr_t>(yr + j) % (W * sizeof(T))) == 0)
        for (; j + W <= n; j += W) stream_store(yr + j, fv(j));
    }
    for (; j + W <= n; j += W) fv(j).store_unaligned(yr + j);
    for (; j < n; ++j) yr[j] = f(j);
  }
  if (stream) _mm_sfence();
}

template <class T>
NormRowKernels<T> make_rows() {
  return {&row_sum<T>,         &row_sum_sq_dev<T>,      &row_normalize<T>,      &row_scale_shift<T>,
          &row_sum_dot_dev<T>, &row_axpby_dev<T>,       &col_scale_shift<T>,    &softmax_rows<T>};
}

}  // namespace

const NormKernels& norm_table() {
  static const NormKernels k{SPORE_ISA_STR(SPORE_ISA), make_rows<float>(), make_rows<double>()};
  return k;
}

}  // namespace SPORE_ISA

SPORE_ISA_EXPORT const NormKernels& SPORE_ISA_NAME(norm_kernels)() { return SPORE_ISA::norm_table(); }

}  // namespace spore::cpu
