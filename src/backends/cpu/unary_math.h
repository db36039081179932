// SPDX-License-Identifier: Apache-2.0
#pragma once
// The elementwise unary functions, one row each. Every functor works on float, double and on
// xsimd batches of them, so the same row gives the scalar reference and the vectorized kernels
// compiled per instruction set (vec_kernels.isa.cc). Exact IEEE behaviour (NaN in -> NaN out,
// no fast-math) is kept: select() rather than branches, and no approximate rsqrt/reciprocal.
#include <cmath>
#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace spore::cpu {

/// Parameters some unary ops take (slope, alpha, beta, threshold).
struct UnaryParams {
  double a = 0;
  double b = 0;
};

// X(name, Functor): the unary float functions with vectorized kernels.
#define SPORE_UNARY_FLOAT_OPS(X)                                                    \
  X(neg, Neg) X(abs, Abs) X(sign, Sign) X(exp, Exp) X(expm1, Expm1) X(log, Log)     \
  X(log1p, Log1p) X(log2, Log2) X(sqrt, Sqrt) X(rsqrt, Rsqrt) X(reciprocal, Recip)  \
  X(square, Square) X(sin, Sin) X(cos, Cos) X(tan, Tan) X(asin, Asin) X(acos, Acos) \
  X(atan, Atan) X(sinh, Sinh) X(cosh, Cosh) X(tanh, Tanh) X(sigmoid, Sigmoid)       \
  X(relu, Relu) X(relu6, Relu6) X(leaky_relu, LeakyRelu) X(elu, Elu) X(selu, Selu)  \
  X(gelu, Gelu) X(gelu_tanh, GeluTanh) X(silu, Silu) X(mish, Mish)                  \
  X(softplus, Softplus) X(hardswish, Hardswish) X(hardsigmoid, Hardsigmoid)         \
  X(erf, Erf) X(floor, Floor) X(ceil, Ceil) X(round, Round) X(trunc, Trunc)

enum class UnaryOp : uint8_t {
#define SPORE_ENUM(name, F) name,
  SPORE_UNARY_FLOAT_OPS(SPORE_ENUM)
#undef SPORE_ENUM
      kCount
};
inline constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kCount);

namespace um {
using std::abs, std::exp, std::expm1, std::log, std::log1p, std::log2, std::sqrt, std::sin, std::cos,
    std::tan, std::asin, std::acos, std::atan, std::sinh, std::cosh, std::tanh, std::erf, std::floor,
    std::ceil, std::nearbyint, std::trunc;
using xsimd::abs, xsimd::exp, xsimd::expm1, xsimd::log, xsimd::log1p, xsimd::log2, xsimd::sqrt, xsimd::sin,
    xsimd::cos, xsimd::tan, xsimd::asin, xsimd::acos, xsimd::atan, xsimd::sinh, xsimd::cosh, xsimd::tanh,
    xsimd::erf, xsimd::floor, xsimd::ceil, xsimd::nearbyint, xsimd::trunc;

template <class V> struct Scal { using type = V; };
template <class T, class A> struct Scal<xsimd::batch<T, A>> { using type = T; };
template <class V> using scal_t = typename Scal<V>::type;

template <class V> V splat(double v) { return V(static_cast<scal_t<V>>(v)); }
template <class V> V sel(bool c, V a, V b) { return c ? a : b; }
template <class T, class A>
xsimd::batch<T, A> sel(xsimd::batch_bool<T, A> c, xsimd::batch<T, A> a, xsimd::batch<T, A> b) {
  return xsimd::select(c, a, b);
}
template <class V> V vmax(V a, V b) { return sel(a < b, b, a); }  // NaN in a propagates
template <class V> V vmin(V a, V b) { return sel(b < a, b, a); }
// NaN test that works for scalars and batches (a batch's != is an ordered compare: false on NaN).
template <class V> bool nan(V x) { return x != x; }
template <class T, class A> xsimd::batch_bool<T, A> nan(xsimd::batch<T, A> x) { return xsimd::isnan(x); }
}  // namespace um

#define SPORE_UNARY(Name, expr)                                          \
  struct Name {                                                          \
    template <class V>                                                   \
    static V f(V x, const UnaryParams& p) {                              \
      using namespace um;                                                \
      (void)p;                                                           \
      return expr;                                                       \
    }                                                                    \
  };

SPORE_UNARY(Neg, -x)
SPORE_UNARY(Abs, abs(x))
// sign(NaN) is 0, as PyTorch 1.13 gives.
SPORE_UNARY(Sign, sel(x > splat<V>(0), splat<V>(1), sel(x < splat<V>(0), splat<V>(-1), splat<V>(0))))
SPORE_UNARY(Exp, exp(x))
SPORE_UNARY(Expm1, expm1(x))
SPORE_UNARY(Log, log(x))
SPORE_UNARY(Log1p, log1p(x))
SPORE_UNARY(Log2, log2(x))
SPORE_UNARY(Sqrt, sqrt(x))
SPORE_UNARY(Rsqrt, splat<V>(1) / sqrt(x))
SPORE_UNARY(Recip, splat<V>(1) / x)
SPORE_UNARY(Square, x * x)
SPORE_UNARY(Sin, sin(x))
SPORE_UNARY(Cos, cos(x))
SPORE_UNARY(Tan, tan(x))
SPORE_UNARY(Asin, asin(x))
SPORE_UNARY(Acos, acos(x))
SPORE_UNARY(Atan, atan(x))
SPORE_UNARY(Sinh, sinh(x))
SPORE_UNARY(Cosh, cosh(x))
SPORE_UNARY(Tanh, tanh(x))
// 1/(1+e^-x) overflows harmlessly to 0 for very negative x.
SPORE_UNARY(Sigmoid, splat<V>(1) / (splat<V>(1) + exp(-x)))
SPORE_UNARY(Relu, sel(x > splat<V>(0), x, sel(nan(x), x, splat<V>(0))))
SPORE_UNARY(Relu6, sel(nan(x), x, vmin(vmax(x, splat<V>(0)), splat<V>(6))))
SPORE_UNARY(LeakyRelu, sel(x > splat<V>(0), x, x * splat<V>(p.a)))
SPORE_UNARY(Elu, sel(x > splat<V>(0), x, splat<V>(p.a) * expm1(x)))
SPORE_UNARY(Selu, splat<V>(1.0507009873554804934193349852946) *
                      sel(x > splat<V>(0), x, splat<V>(1.6732632423543772848170429916717) * expm1(x)))
SPORE_UNARY(Gelu, splat<V>(0.5) * x * (splat<V>(1) + erf(x * splat<V>(0.70710678118654752440))))
SPORE_UNARY(GeluTanh, splat<V>(0.5) * x *
                          (splat<V>(1) + tanh(splat<V>(0.79788456080286535588) *
                                              (x + splat<V>(0.044715) * x * x * x))))
SPORE_UNARY(Silu, x / (splat<V>(1) + exp(-x)))
// softplus(x) = max(x, 0) + log1p(exp(-|x|)) is exact and never overflows.
SPORE_UNARY(Mish, x * tanh(vmax(x, splat<V>(0)) + log1p(exp(-abs(x)))))
SPORE_UNARY(Softplus, sel(x * splat<V>(p.a) > splat<V>(p.b), x,
                          (vmax(x * splat<V>(p.a), splat<V>(0)) + log1p(exp(-abs(x * splat<V>(p.a))))) /
                              splat<V>(p.a)))
SPORE_UNARY(Hardswish, x * vmin(vmax(x + splat<V>(3), splat<V>(0)), splat<V>(6)) / splat<V>(6))
SPORE_UNARY(Hardsigmoid, vmin(vmax(x + splat<V>(3), splat<V>(0)), splat<V>(6)) / splat<V>(6))
SPORE_UNARY(Erf, erf(x))
SPORE_UNARY(Floor, floor(x))
SPORE_UNARY(Ceil, ceil(x))
SPORE_UNARY(Round, nearbyint(x))
SPORE_UNARY(Trunc, trunc(x))
#undef SPORE_UNARY

}  // namespace spore::cpu
