// SPDX-License-Identifier: Apache-2.0
// Compiled three times (see CMakeLists.txt) with SPORE_ISA = base, avx2, avx512; xsimd picks the
// widest batch the flags allow. Everything here is in an ISA-named namespace so the three
// copies never share a symbol.
#include <cmath>

#include "backends/cpu/isa.h"
#include "backends/cpu/simd_reduce.h"
#include "backends/cpu/vec_kernels.h"


namespace spore::cpu {
namespace SPORE_ISA {
namespace {

using Arch = xsimd::default_arch;

using simd::hmax;

template <class Op, class T>
void unary_loop(const T* x, T* y, int64_t n, const UnaryParams& p) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) Op::f(B::load_unaligned(x + i), p).store_unaligned(y + i);
  for (; i < n; ++i) y[i] = Op::f(x[i], p);
}

template <class Op, class T>
void binary_loop(const T* a, const T* b, T* y, int64_t n) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) Op::f(B::load_unaligned(a + i), B::load_unaligned(b + i)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] = Op::f(a[i], b[i]);
}

template <class Op, class T>
void binary_scalar_loop(T s, const T* b, T* y, int64_t n, bool scalar_b) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  const B vs(s);
  int64_t i = 0;
  if (scalar_b) {
    for (; i + W <= n; i += W) Op::f(B::load_unaligned(b + i), vs).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = Op::f(b[i], s);
  } else {
    for (; i + W <= n; i += W) Op::f(vs, B::load_unaligned(b + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = Op::f(s, b[i]);
  }
}

template <class T>
T sum_loop(const T* x, int64_t n) {
  return simd::sum<Arch>(x, n);
}

float max_loop(const float* x, int64_t n) {
  using B = xsimd::batch<float, Arch>;
  constexpr int64_t W = B::size;
  float m = -INFINITY;
  int64_t i = 0;
  if (n >= W) {
    B acc = B::load_unaligned(x);
    for (i = W; i + W <= n; i += W) acc = xsimd::max(acc, B::load_unaligned(x + i));
    m = hmax(acc);
  }
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// Multi-pass softmax while the row sits in cache: max, exp and sum, scale. (A single-pass
// online softmax measured 2.2x slower here; PERF-NOTES.md.)
template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  T m = -INFINITY;
  {
    int64_t i = 0;
    if (n >= W) {
      B acc = B::load_unaligned(x);
      for (i = W; i + W <= n; i += W) acc = xsimd::max(acc, B::load_unaligned(x + i));
      m = hmax(acc);
    }
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  }
  if (std::isinf(m) && m < 0) m = 0;  // all -inf row: exp gives 0s, result NaN as PyTorch
  const B vm(m);
  B acc(T(0));
  T s = 0;
  int64_t i = 0;
  if (log) {
    for (; i + W <= n; i += W) acc += xsimd::exp(B::load_unaligned(x + i) - vm);
    s = xsimd::hadd(acc);
    for (; i < n; ++i) s += std::exp(x[i] - m);
    const T lse = m + std::log(s);
    const B vl(lse);
    for (i = 0; i + W <= n; i += W) (B::load_unaligned(x + i) - vl).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = x[i] - lse;
  } else {
    for (; i + W <= n; i += W) {
      B e = xsimd::exp(B::load_unaligned(x + i) - vm);
      e.store_unaligned(y + i);
      acc += e;
    }
    s = xsimd::hadd(acc);
    for (; i < n; ++i) {
      y[i] = std::exp(x[i] - m);
      s += y[i];
    }
    const B inv(T(1) / s);
    for (i = 0; i + W <= n; i += W) (B::load_unaligned(y + i) * inv).store_unaligned(y + i);
    for (; i < n; ++i) y[i] *= T(1) / s;
  }
}

void layer_norm_row(const float* x, float* y, int64_t n, const float* w, const float* b, float eps, float* mean_out,
                    float* rstd_out) {
  using B = xsimd::batch<float, Arch>;
  constexpr int64_t W = B::size;
  const float mean = sum_loop<float>(x, n) / static_cast<float>(n);
  const B vmean(mean);
  B acc(0.f);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    B d = B::load_unaligned(x + i) - vmean;
    acc = xsimd::fma(d, d, acc);
  }
  float ss = xsimd::hadd(acc);
  for (; i < n; ++i) ss += (x[i] - mean) * (x[i] - mean);
  const float rstd = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  const B vr(rstd);
  for (i = 0; i + W <= n; i += W) {
    B v = (B::load_unaligned(x + i) - vmean) * vr;
    if (w) v *= B::load_unaligned(w + i);
    if (b) v += B::load_unaligned(b + i);
    v.store_unaligned(y + i);
  }
  for (; i < n; ++i) {
    float v = (x[i] - mean) * rstd;
    if (w) v *= w[i];
    if (b) v += b[i];
    y[i] = v;
  }
  if (mean_out) *mean_out = mean;
  if (rstd_out) *rstd_out = rstd;
}

VecKernels make_table() {
  VecKernels k{};
  k.isa = SPORE_ISA_STR(SPORE_ISA);
#define SPORE_FILL_UNARY(name, F)                                              \
  k.unary_f32[static_cast<int>(UnaryOp::name)] = &unary_loop<F, float>;        \
  k.unary_f64[static_cast<int>(UnaryOp::name)] = &unary_loop<F, double>;
  SPORE_UNARY_FLOAT_OPS(SPORE_FILL_UNARY)
#undef SPORE_FILL_UNARY
#define SPORE_FILL_BINARY(name, F)                                                          \
  k.binary_f32[static_cast<int>(BinaryOp::name)] = &binary_loop<F, float>;                 \
  k.binary_f64[static_cast<int>(BinaryOp::name)] = &binary_loop<F, double>;                \
  k.binary_scalar_f32[static_cast<int>(BinaryOp::name)] = &binary_scalar_loop<F, float>;   \
  k.binary_scalar_f64[static_cast<int>(BinaryOp::name)] = &binary_scalar_loop<F, double>;
  SPORE_BINARY_FLOAT_OPS(SPORE_FILL_BINARY)
#undef SPORE_FILL_BINARY
  k.sum_f32 = &sum_loop<float>;
  k.sum_f64 = &sum_loop<double>;
  k.max_f32 = &max_loop;
  k.softmax_f32 = &softmax_row<float>;
  k.softmax_f64 = &softmax_row<double>;
  k.layer_norm_f32 = &layer_norm_row;
  return k;
}

}  // namespace

const VecKernels& table() {
  static const VecKernels k = make_table();
  return k;
}

}  // namespace SPORE_ISA

SPORE_ISA_EXPORT const VecKernels& SPORE_ISA_NAME(vec_kernels)() { return SPORE_ISA::table(); }

}  // namespace spore::cpu
