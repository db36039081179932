// SPDX-License-Identifier: Apache-2.0
// Reduction loops, compiled three times (SPORE_ISA = base, avx2, avx512; see CMakeLists.txt).
// Each loop keeps 4 vector accumulators and reduces them in a fixed tree, so its rounding
// depends only on n and the instruction set, never on threads.
#include <xsimd/xsimd.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/isa.h"
#include "backends/cpu/simd_reduce.h"
#include "backends/cpu/reduce_kernels.h"

namespace spore::cpu {
namespace SPORE_ISA {
namespace {

using Arch = xsimd::default_arch;

template <class T, class F>
T map_sum(const T* x, int64_t n, F f) {
  return simd::map_sum<Arch>(x, n, f);
}

template <class T>
T sum(const T* x, int64_t n) {
  return map_sum(x, n, [](auto v) { return v; });
}

template <class T>
T sum_abs(const T* x, int64_t n) {
  return map_sum(x, n, [](auto v) {
    if constexpr (std::is_same_v<decltype(v), T>) return std::abs(v);
    else return xsimd::abs(v);
  });
}

template <class T>
T sum_sqdev(const T* x, int64_t n, T m) {
  using B = xsimd::batch<T, Arch>;
  const B vm(m);
  return map_sum(x, n, [&](auto v) {
    if constexpr (std::is_same_v<decltype(v), B>) {
      B d = v - vm;
      return d * d;
    } else {
      T d = v - m;
      return d * d;
    }
  });
}

template <class T>
T sum_exp(const T* x, int64_t n, T m) {
  using B = xsimd::batch<T, Arch>;
  const B vm(m);
  return map_sum(x, n, [&](auto v) {
    if constexpr (std::is_same_v<decltype(v), B>) return xsimd::exp(v - vm);
    else return std::exp(v - m);
  });
}

// Max (or min) with NaN propagation: lanes track NaNs separately, so xsimd's max (whose NaN
// behaviour follows the instruction's operand order) only ever sees the finite result.
template <class T, bool Max>
T extreme(const T* x, int64_t n) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  T m = x[0];
  bool nan = x[0] != x[0];
  int64_t i = 0;
  if (n >= W) {
    B acc = B::load_unaligned(x);
    auto bad = xsimd::isnan(acc);
    for (i = W; i + W <= n; i += W) {
      const B v = B::load_unaligned(x + i);
      bad = bad | xsimd::isnan(v);
      acc = Max ? xsimd::max(acc, v) : xsimd::min(acc, v);
    }
    alignas(64) T lanes[W];
    acc.store_aligned(lanes);
    m = lanes[0];
    for (int64_t j = 1; j < W; ++j) m = Max ? (lanes[j] > m ? lanes[j] : m) : (lanes[j] < m ? lanes[j] : m);
    nan = xsimd::any(bad);
  }
  for (; i < n; ++i) {
    nan = nan || x[i] != x[i];
    m = Max ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  }
  return nan ? std::numeric_limits<T>::quiet_NaN() : m;
}

template <class T>
void add_row(T* acc, const T* x, int64_t n) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  int64_t j = 0;
  for (; j + W <= n; j += W) (B::load_unaligned(acc + j) + B::load_unaligned(x + j)).store_unaligned(acc + j);
  for (; j < n; ++j) acc[j] += x[j];
}

template <class T>
void sqdev_row(T* acc, const T* x, const T* m, int64_t n) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    B d = B::load_unaligned(x + j);
    if (m) d -= B::load_unaligned(m + j);
    (B::load_unaligned(acc + j) + d * d).store_unaligned(acc + j);
  }
  for (; j < n; ++j) {
    T d = x[j] - (m ? m[j] : T(0));
    acc[j] += d * d;
  }
}

ReduceKernels make_table() {
  ReduceKernels k{};
  k.isa = SPORE_ISA_STR(SPORE_ISA);
  k.sum_f32 = &sum<float>;
  k.sum_f64 = &sum<double>;
  k.sum_abs_f32 = &sum_abs<float>;
  k.sum_abs_f64 = &sum_abs<double>;
  k.sum_sqdev_f32 = &sum_sqdev<float>;
  k.sum_sqdev_f64 = &sum_sqdev<double>;
  k.sum_exp_f32 = &sum_exp<float>;
  k.sum_exp_f64 = &sum_exp<double>;
  k.max_f32 = &extreme<float, true>;
  k.max_f64 = &extreme<double, true>;
  k.min_f32 = &extreme<float, false>;
  k.min_f64 = &extreme<double, false>;
  k.add_row_f32 = &add_row<float>;
  k.add_row_f64 = &add_row<double>;
  k.sqdev_row_f32 = &sqdev_row<float>;
  k.sqdev_row_f64 = &sqdev_row<double>;
  return k;
}

}  // namespace

// Named apart from vec_kernels.isa.cc's table(): both live in the same ISA namespace.
const ReduceKernels& reduce_table() {
  static const ReduceKernels k = make_table();
  return k;
}

}  // namespace SPORE_ISA

SPORE_ISA_EXPORT const ReduceKernels& SPORE_ISA_NAME(reduce_kernels)() { return SPORE_ISA::reduce_table(); }

}  // namespace spore::cpu
