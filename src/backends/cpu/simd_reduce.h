// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one fixed-order vector reduction shared by every *.isa.cc kernel family (reductions,
// softmax, norms): four vector accumulators, then a fixed lane reduction, then the tail. The
// order depends only on n, never on threads, so every kernel that sums a row gets the same bits.
// Include only from *.isa.cc files (Arch differs per ISA copy, so instantiations never clash).
#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace spore::cpu::simd {

/// sum over i of f(x[i]); f is given on batches and on scalars.
template <class Arch, class T, class F>
T map_sum(const T* x, int64_t n, F f) {
  using B = xsimd::batch<T, Arch>;
  constexpr int64_t W = B::size;
  B a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    a0 += f(B::load_unaligned(x + i));
    a1 += f(B::load_unaligned(x + i + W));
    a2 += f(B::load_unaligned(x + i + 2 * W));
    a3 += f(B::load_unaligned(x + i + 3 * W));
  }
  for (; i + W <= n; i += W) a0 += f(B::load_unaligned(x + i));
  T s = xsimd::hadd((a0 + a1) + (a2 + a3));
  for (; i < n; ++i) s += f(x[i]);
  return s;
}

template <class Arch, class T>
T sum(const T* x, int64_t n) {
  return map_sum<Arch>(x, n, [](auto v) { return v; });
}

/// Lane maximum (xsimd 8 has no reducer for it); NaN lanes propagate.
template <class Arch, class T>
T hmax(const xsimd::batch<T, Arch>& v) {
  alignas(64) T lanes[xsimd::batch<T, Arch>::size];
  v.store_aligned(lanes);
  T m = lanes[0];
  for (size_t i = 1; i < xsimd::batch<T, Arch>::size; ++i) m = (lanes[i] > m || lanes[i] != lanes[i]) ? lanes[i] : m;
  return m;
}

}  // namespace spore::cpu::simd
