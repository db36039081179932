// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the unary float primitives and erfinv. A unary derivative is linear in the
// incoming tangent or cotangent g, so one function per primitive, g * dy/dx, serves both modes.
// Each reads x or y (the primitive's declared residual); y is kept where dy/dx is cheap in it.
// At kinks the conventions are PyTorch's (relu'(0) = 0, abs'(0) = 0, hardswish'(-3) = -0.5 ...).
#include <cmath>
#include <limits>

#include "autodiff/rules/elementwise_parts.h"
#include "prims/unary.h"

namespace spore::autodiff {
namespace {

using prims::UnaryAttrs;
using rules::keep_where;
using rules::lit;
using rules::zero;

/// g * dy/dx, from x and/or y (whichever the primitive keeps; the other may be undefined).
using Chain = Tensor (*)(const UnaryAttrs& p, const Tensor& x, const Tensor& y, const Tensor& g);

template <Chain D>
void unary_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (!a.tangents[0].defined()) return;
  out[0] = D(*static_cast<const UnaryAttrs*>(a.attrs), a.inputs[0], a.outputs[0], a.tangents[0]);
}
template <Chain D>
void unary_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = D(*static_cast<const UnaryAttrs*>(a.attrs), a.inputs[0], a.outputs[0], a.cotangents[0]);
}
template <Chain D>
void def_unary(const char* name, Residuals r) {
  def_rules(name, r, unary_jvp<D>, unary_vjp<D>);
}
constexpr Residuals kNone{}, kX{bit(0), 0}, kY{0, bit(0)};

constexpr double kSqrtPi = 1.7724538509055160272981674833411;
constexpr double kSqrt2 = 1.4142135623730950488016887242097;
constexpr double kLn2 = 0.69314718055994530941723212145818;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

Tensor gt(const Tensor& x, double v) { return ops::greater(x, lit(v)); }
Tensor lt(const Tensor& x, double v) { return ops::less(x, lit(v)); }
/// x where x <= 0, else 0: exp() of it cannot overflow in the branch where() discards, so the
/// second derivative has no 0 * inf there.
Tensor nonpositive(const Tensor& x) { return ops::where(gt(x, 0), zero(), x); }

// ---- smooth --------------------------------------------------------------------------------
Tensor d_neg(const UnaryAttrs&, const Tensor&, const Tensor&, const Tensor& g) { return -g; }
Tensor d_exp(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) { return g * y; }
Tensor d_expm1(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) { return g * (y + 1.0); }
Tensor d_log(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g / x; }
Tensor d_log1p(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g / (x + 1.0); }
Tensor d_log2(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g / (x * kLn2); }
Tensor d_sqrt(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) { return g / (y * 2.0); }
Tensor d_rsqrt(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) {
  return g * (y * y * y) * -0.5;
}
Tensor d_reciprocal(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) { return -(g * (y * y)); }
Tensor d_square(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g * (x * 2.0); }
Tensor d_sin(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g * ops::cos(x); }
Tensor d_cos(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return -(g * ops::sin(x)); }
Tensor d_tan(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) { return g * (y * y + 1.0); }
Tensor d_asin(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  return g * ops::rsqrt(1.0 - x * x);
}
Tensor d_acos(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  return -(g * ops::rsqrt(1.0 - x * x));
}
Tensor d_atan(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g / (x * x + 1.0); }
Tensor d_sinh(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g * ops::cosh(x); }
Tensor d_cosh(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g * ops::sinh(x); }
Tensor d_tanh(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) { return g * (1.0 - y * y); }
Tensor d_sigmoid(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) { return g * (y * (1.0 - y)); }
Tensor d_erf(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  return g * (ops::exp(-(x * x)) * (2.0 / kSqrtPi));
}
Tensor d_erfinv(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) {
  return g * (ops::exp(y * y) * (kSqrtPi / 2));
}

// ---- activations -----------------------------------------------------------------------------
// relu'(0) = 0: PyTorch's threshold_backward on the output (y <= 0 ? 0 : g).
Tensor d_relu(const UnaryAttrs&, const Tensor&, const Tensor& y, const Tensor& g) {
  return ops::where(ops::less_equal(y, lit(0)), zero(), g);
}
// relu6 is hardtanh(x, 0, 6): zero at both ends.
Tensor d_relu6(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  return keep_where(ops::logical_and(gt(x, 0), lt(x, 6)), g);
}
// The slope applies at 0 too (x > 0 ? g : g * slope).
Tensor d_leaky_relu(const UnaryAttrs& p, const Tensor& x, const Tensor&, const Tensor& g) {
  return ops::where(gt(x, 0), g, g * p.a);
}
Tensor d_elu(const UnaryAttrs& p, const Tensor& x, const Tensor&, const Tensor& g) {
  return ops::where(gt(x, 0), g, g * (ops::exp(nonpositive(x)) * p.a));
}
Tensor d_selu(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  return ops::where(gt(x, 0), g * kSeluScale, g * (ops::exp(nonpositive(x)) * (kSeluScale * kSeluAlpha)));
}
// gelu'(x) = Phi(x) + x phi(x).
Tensor d_gelu(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  const Tensor cdf = (ops::erf(x * (1 / kSqrt2)) + 1.0) * 0.5;
  const Tensor pdf = ops::exp(x * x * -0.5) * (1 / (kSqrt2 * kSqrtPi));
  return g * (cdf + x * pdf);
}
// PyTorch's gelu_backward for approximate="tanh".
Tensor d_gelu_tanh(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  constexpr double kBeta = kSqrt2 / kSqrtPi, kKappa = 0.044715;
  const Tensor x2 = x * x;
  const Tensor t = ops::tanh((x + x2 * x * kKappa) * kBeta);
  const Tensor left = (t + 1.0) * 0.5;
  const Tensor right = x * 0.5 * (1.0 - t * t) * ((x2 * (3 * kKappa) + 1.0) * kBeta);
  return g * (left + right);
}
Tensor d_silu(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  const Tensor s = ops::sigmoid(x);
  return g * (s * (x * (1.0 - s) + 1.0));
}
// No threshold: the forward kernel computes softplus exactly for every x.
Tensor d_mish(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  const Tensor t = ops::tanh(ops::softplus(x, 1.0, std::numeric_limits<double>::infinity()));
  return g * (t + x * ops::sigmoid(x) * (1.0 - t * t));
}
// Above the threshold softplus is the identity (a = beta, b = threshold).
Tensor d_softplus(const UnaryAttrs& p, const Tensor& x, const Tensor&, const Tensor& g) {
  const Tensor bx = x * p.a;
  return ops::where(gt(bx, p.b), g, g * ops::sigmoid(bx));
}
// PyTorch: 0 below -3, x/3 + 1/2 on [-3, 3], 1 above.
Tensor d_hardswish(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  return ops::where(lt(x, -3), zero(), ops::where(gt(x, 3), g, g * (x / 3.0 + 0.5)));
}
// PyTorch: 1/6 strictly inside (-3, 3), 0 elsewhere.
Tensor d_hardsigmoid(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) {
  return keep_where(ops::logical_and(gt(x, -3), lt(x, 3)), g * (1.0 / 6));
}
// PyTorch's abs backward is g * sign(x): zero at 0.
Tensor d_abs(const UnaryAttrs&, const Tensor& x, const Tensor&, const Tensor& g) { return g * ops::sign(x); }

}  // namespace

void install_unary_rules() {
  using rules::zero_jvp, rules::zero_vjp;
  def_unary<d_neg>("neg", kNone);
  def_unary<d_abs>("abs", kX);
  def_unary<d_exp>("exp", kY);
  def_unary<d_expm1>("expm1", kY);
  def_unary<d_log>("log", kX);
  def_unary<d_log1p>("log1p", kX);
  def_unary<d_log2>("log2", kX);
  def_unary<d_sqrt>("sqrt", kY);
  def_unary<d_rsqrt>("rsqrt", kY);
  def_unary<d_reciprocal>("reciprocal", kY);
  def_unary<d_square>("square", kX);
  def_unary<d_sin>("sin", kX);
  def_unary<d_cos>("cos", kX);
  def_unary<d_tan>("tan", kY);
  def_unary<d_asin>("asin", kX);
  def_unary<d_acos>("acos", kX);
  def_unary<d_atan>("atan", kX);
  def_unary<d_sinh>("sinh", kX);
  def_unary<d_cosh>("cosh", kX);
  def_unary<d_tanh>("tanh", kY);
  def_unary<d_sigmoid>("sigmoid", kY);
  def_unary<d_relu>("relu", kY);
  def_unary<d_relu6>("relu6", kX);
  def_unary<d_leaky_relu>("leaky_relu", kX);
  def_unary<d_elu>("elu", kX);
  def_unary<d_selu>("selu", kX);
  def_unary<d_gelu>("gelu", kX);
  def_unary<d_gelu_tanh>("gelu_tanh", kX);
  def_unary<d_silu>("silu", kX);
  def_unary<d_mish>("mish", kX);
  def_unary<d_softplus>("softplus", kX);
  def_unary<d_hardswish>("hardswish", kX);
  def_unary<d_hardsigmoid>("hardsigmoid", kX);
  def_unary<d_erf>("erf", kX);
  def_unary<d_erfinv>("erfinv", kY);
  for (const char* name : {"sign", "floor", "ceil", "round", "trunc"}) def_rules(name, kNone, zero_jvp, zero_vjp);
}

}  // namespace spore::autodiff
