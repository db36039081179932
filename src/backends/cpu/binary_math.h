// SPDX-License-Identifier: Apache-2.0
#pragma once
// Elementwise binary functions with vectorized kernels, one row each (see unary_math.h).
#include <xsimd/xsimd.hpp>

#include "backends/cpu/unary_math.h"

namespace spore::cpu {

#define SPORE_BINARY_FLOAT_OPS(X) \
  X(add, Add) X(sub, Sub) X(mul, Mul) X(div, Div) X(maximum, Maximum) X(minimum, Minimum) X(pow, Pow) X(atan2, Atan2)

enum class BinaryOp : uint8_t {
#define SPORE_ENUM(name, F) name,
  SPORE_BINARY_FLOAT_OPS(SPORE_ENUM)
#undef SPORE_ENUM
      kCount
};
inline constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::kCount);

#define SPORE_BINARY(Name, expr)  \
  struct Name {                   \
    template <class V>            \
    static V f(V a, V b) {        \
      using namespace um;         \
      using std::pow, std::atan2; \
      using xsimd::pow, xsimd::atan2; \
      return expr;                \
    }                             \
  };
SPORE_BINARY(Add, a + b)
SPORE_BINARY(Sub, a - b)
SPORE_BINARY(Mul, a * b)
SPORE_BINARY(Div, a / b)
// NaN in either operand propagates (as torch.maximum).
SPORE_BINARY(Maximum, sel(nan(a), a, sel(nan(b), b, sel(a < b, b, a))))
SPORE_BINARY(Minimum, sel(nan(a), a, sel(nan(b), b, sel(b < a, b, a))))
// IEEE (and std::pow, used for the scalar tail): x^0 = 1 for every x, NaN included, and
// 1^y = 1 for every y; xsimd's vector pow gives 0 for 0^0, so the result depended on the length.
// x^2 is x * x, the correctly rounded square that neither pow promises: the same value as the
// graph passes' rewrite of x^2 (passes/simplify.cc), so levels 0 and 1 stay bitwise equal.
SPORE_BINARY(Pow, sel(b == splat<V>(0) || a == splat<V>(1), splat<V>(1), sel(b == splat<V>(2), a * a, pow(a, b))))
#undef SPORE_BINARY
// xsimd's atan2 mishandles infinities; lane-wise libm keeps IEEE special cases.
struct Atan2 {
  static float f(float a, float b) { return std::atan2(a, b); }
  static double f(double a, double b) { return std::atan2(a, b); }
  template <class T, class A>
  static xsimd::batch<T, A> f(xsimd::batch<T, A> a, xsimd::batch<T, A> b) {
    alignas(64) T x[xsimd::batch<T, A>::size], y[xsimd::batch<T, A>::size];
    a.store_aligned(x);
    b.store_aligned(y);
    for (size_t i = 0; i < xsimd::batch<T, A>::size; ++i) x[i] = std::atan2(x[i], y[i]);
    return xsimd::batch<T, A>::load_aligned(x);
  }
};

}  // namespace spore::cpu
