// SPDX-License-Identifier: Apache-2.0
#pragma once
// The per-element rules of the reduction engine (reduce_engine.h): each K gives the accumulator
// type, its identity, map (element -> accumulator, with an optional per-output parameter),
// combine, and the two bulk forms `block` (a contiguous run into one value) and `rows` (one row
// into a vector of accumulators). float32/float64 sums use the vectorized loops of
// backends/cpu/reduce_kernels.h; the rest are plain loops.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/reduce_kernels.h"

namespace spore::prims::reduce_detail {

template <class C>
inline constexpr bool kVecType = std::is_same_v<C, float> || std::is_same_v<C, double>;

// Integer sums and products wrap like PyTorch's (two's complement) instead of overflowing (UB).
template <class T>
inline T add_(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <class T>
inline T mul_(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}
// max/min that propagate NaN (the first NaN seen wins, like PyTorch's amax).
template <class T>
inline T max_(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return (b > a || b != b) && a == a ? b : a;
  else return b > a ? b : a;
}
template <class T>
inline T min_(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return (b < a || b != b) && a == a ? b : a;
  else return b < a ? b : a;
}

/// Defaults for block and rows in terms of map and combine.
template <class D, class C, class A>
struct KBase {
  using Acc = A;
  static Acc block(const C* x, int64_t n, Acc p) {
    Acc a = D::identity();
    for (int64_t i = 0; i < n; ++i) a = D::combine(a, D::map(x[i], p));
    return a;
  }
  static void rows(Acc* acc, const C* x, const Acc* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc[j] = D::combine(acc[j], D::map(x[j], p ? p[j] : Acc{}));
  }
};

template <class C>
struct SumK : KBase<SumK<C>, C, C> {
  static C identity() { return C(0); }
  static C map(C x, C) { return x; }
  static C combine(C a, C b) { return add_(a, b); }
  static C block(const C* x, int64_t n, C p) {
    if constexpr (std::is_same_v<C, float>) return cpu::reduce_kernels().sum_f32(x, n);
    else if constexpr (std::is_same_v<C, double>) return cpu::reduce_kernels().sum_f64(x, n);
    else return KBase<SumK<C>, C, C>::block(x, n, p);
  }
  static void rows(C* acc, const C* x, const C* p, int64_t n) {
    if constexpr (std::is_same_v<C, float>) cpu::reduce_kernels().add_row_f32(acc, x, n);
    else if constexpr (std::is_same_v<C, double>) cpu::reduce_kernels().add_row_f64(acc, x, n);
    else KBase<SumK<C>, C, C>::rows(acc, x, p, n);
  }
};

template <class C>
struct ProdK : KBase<ProdK<C>, C, C> {
  static C identity() { return C(1); }
  static C map(C x, C) { return x; }
  static C combine(C a, C b) { return mul_(a, b); }
};

template <class C>
struct MaxK : KBase<MaxK<C>, C, C> {
  static C identity() {
    if constexpr (std::is_floating_point_v<C>) return -std::numeric_limits<C>::infinity();
    else return std::numeric_limits<C>::lowest();
  }
  static C map(C x, C) { return x; }
  static C combine(C a, C b) { return max_(a, b); }
  static C block(const C* x, int64_t n, C p) {
    if constexpr (std::is_same_v<C, float>) return cpu::reduce_kernels().max_f32(x, n);
    else if constexpr (std::is_same_v<C, double>) return cpu::reduce_kernels().max_f64(x, n);
    else return KBase<MaxK<C>, C, C>::block(x, n, p);
  }
};

template <class C>
struct MinK : KBase<MinK<C>, C, C> {
  static C identity() {
    if constexpr (std::is_floating_point_v<C>) return std::numeric_limits<C>::infinity();
    else return std::numeric_limits<C>::max();
  }
  static C map(C x, C) { return x; }
  static C combine(C a, C b) { return min_(a, b); }
  static C block(const C* x, int64_t n, C p) {
    if constexpr (std::is_same_v<C, float>) return cpu::reduce_kernels().min_f32(x, n);
    else if constexpr (std::is_same_v<C, double>) return cpu::reduce_kernels().min_f64(x, n);
    else return KBase<MinK<C>, C, C>::block(x, n, p);
  }
};

template <class C>
struct AllK : KBase<AllK<C>, C, bool> {
  static bool identity() { return true; }
  static bool map(C x, bool) { return x != C(0); }
  static bool combine(bool a, bool b) { return a && b; }
};

template <class C>
struct AnyK : KBase<AnyK<C>, C, bool> {
  static bool identity() { return false; }
  static bool map(C x, bool) { return x != C(0); }
  static bool combine(bool a, bool b) { return a || b; }
};

/// sum |x| (1-norm).
template <class C>
struct AbsSumK : KBase<AbsSumK<C>, C, C> {
  static C identity() { return C(0); }
  static C map(C x, C) { return std::abs(x); }
  static C combine(C a, C b) { return a + b; }
  static C block(const C* x, int64_t n, C p) {
    if constexpr (std::is_same_v<C, float>) return cpu::reduce_kernels().sum_abs_f32(x, n);
    else if constexpr (std::is_same_v<C, double>) return cpu::reduce_kernels().sum_abs_f64(x, n);
    else return KBase<AbsSumK<C>, C, C>::block(x, n, p);
  }
};

/// max |x| (inf-norm), NaN propagating.
template <class C>
struct AbsMaxK : KBase<AbsMaxK<C>, C, C> {
  static C identity() { return C(0); }
  static C map(C x, C) { return std::abs(x); }
  static C combine(C a, C b) { return max_(a, b); }
};

/// sum (x - p)^2: variance's second pass (p = mean) and the 2-norm (p = 0).
template <class C>
struct SqDevK : KBase<SqDevK<C>, C, C> {
  static C identity() { return C(0); }
  static C map(C x, C p) { return (x - p) * (x - p); }
  static C combine(C a, C b) { return a + b; }
  static C block(const C* x, int64_t n, C p) {
    if constexpr (std::is_same_v<C, float>) return cpu::reduce_kernels().sum_sqdev_f32(x, n, p);
    else if constexpr (std::is_same_v<C, double>) return cpu::reduce_kernels().sum_sqdev_f64(x, n, p);
    else return KBase<SqDevK<C>, C, C>::block(x, n, p);
  }
  static void rows(C* acc, const C* x, const C* p, int64_t n) {
    if constexpr (std::is_same_v<C, float>) cpu::reduce_kernels().sqdev_row_f32(acc, x, p, n);
    else if constexpr (std::is_same_v<C, double>) cpu::reduce_kernels().sqdev_row_f64(acc, x, p, n);
    else KBase<SqDevK<C>, C, C>::rows(acc, x, p, n);
  }
};

/// sum exp(x - p): logsumexp's second pass (p = the finite max, or 0).
template <class C>
struct ExpSumK : KBase<ExpSumK<C>, C, C> {
  static C identity() { return C(0); }
  static C map(C x, C p) { return std::exp(x - p); }
  static C combine(C a, C b) { return a + b; }
  static C block(const C* x, int64_t n, C p) {
    if constexpr (std::is_same_v<C, float>) return cpu::reduce_kernels().sum_exp_f32(x, n, p);
    else if constexpr (std::is_same_v<C, double>) return cpu::reduce_kernels().sum_exp_f64(x, n, p);
    else return KBase<ExpSumK<C>, C, C>::block(x, n, p);
  }
};

}  // namespace spore::prims::reduce_detail
