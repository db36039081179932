// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the binary elementwise primitives (add ... atan2) and of floor_divide and
// remainder. Inputs broadcast: a vjp sums its cotangent back to each input's shape (unbroadcast),
// a jvp widens a tangent to the output's shape. Conventions at ties and singular points are
// PyTorch's (maximum splits a tie half/half; pow's d/db is 0 where a == 0 and b >= 0).
#include "autodiff/rules/elementwise_parts.h"

namespace spore::autodiff {
namespace {

using rules::accumulate;
using rules::broadcast_tangent;
using rules::lit;
using rules::unbroadcast;
using rules::zero;

constexpr Residuals kNone{}, kAB{bit(0) | bit(1), 0};

/// The sum of the contributions accumulated in `out`, widened to the output's shape.
void finish_jvp(const JvpArgs& a, Tensor& out) {
  if (out.defined()) out = broadcast_tangent(out, a.outputs[0].shape());
}

// ---- add, sub, mul, div ----------------------------------------------------------------------
void add_jvp(const JvpArgs& a, std::span<Tensor> out) {
  accumulate(out[0], a.tangents[0]);
  if (a.tangents[1].defined()) accumulate(out[0], a.tangents[1]);
  finish_jvp(a, out[0]);
}
void add_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (a.needs[0]) in[0] = unbroadcast(a.cotangents[0], a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(a.cotangents[0], a.in_types[1]);
}
void sub_jvp(const JvpArgs& a, std::span<Tensor> out) {
  accumulate(out[0], a.tangents[0]);
  if (a.tangents[1].defined()) accumulate(out[0], -a.tangents[1]);
  finish_jvp(a, out[0]);
}
void sub_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (a.needs[0]) in[0] = unbroadcast(a.cotangents[0], a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(-a.cotangents[0], a.in_types[1]);
}
void mul_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) accumulate(out[0], a.tangents[0] * a.inputs[1]);
  if (a.tangents[1].defined()) accumulate(out[0], a.inputs[0] * a.tangents[1]);
  finish_jvp(a, out[0]);
}
void mul_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (a.needs[0]) in[0] = unbroadcast(a.cotangents[0] * a.inputs[1], a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(a.inputs[0] * a.cotangents[0], a.in_types[1]);
}
// y = u / v: dy = du / v - y dv / v.
void div_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) accumulate(out[0], a.tangents[0] / a.inputs[1]);
  if (a.tangents[1].defined()) accumulate(out[0], -(a.outputs[0] * a.tangents[1]) / a.inputs[1]);
  finish_jvp(a, out[0]);
}
void div_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor g = a.cotangents[0] / a.inputs[1];
  if (a.needs[0]) in[0] = unbroadcast(g, a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(-(g * a.outputs[0]), a.in_types[1]);
}

// ---- maximum, minimum ------------------------------------------------------------------------
// PyTorch: where(a == b, g / 2, g), then zeroed where the operand lost. A NaN operand loses
// nowhere (every comparison is false), so both get g there, as in PyTorch.
struct Routes {
  Tensor tie, a_lost, b_lost;
};
template <bool kMax>
Routes routes(const Tensor& a, const Tensor& b) {
  Tensor lt = ops::less(a, b), gt = ops::greater(a, b);
  if (kMax) return {ops::equal(a, b), lt, gt};
  return {ops::equal(a, b), gt, lt};
}
Tensor route(const Tensor& g, const Tensor& tie, const Tensor& lost) {
  return ops::where(lost, zero(), ops::where(tie, g * 0.5, g));
}
template <bool kMax>
void extremum_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const Routes r = routes<kMax>(a.inputs[0], a.inputs[1]);
  if (a.tangents[0].defined()) accumulate(out[0], route(a.tangents[0], r.tie, r.a_lost));
  if (a.tangents[1].defined()) accumulate(out[0], route(a.tangents[1], r.tie, r.b_lost));
  finish_jvp(a, out[0]);
}
template <bool kMax>
void extremum_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Routes r = routes<kMax>(a.inputs[0], a.inputs[1]);
  const Tensor& g = a.cotangents[0];
  if (a.needs[0]) in[0] = unbroadcast(route(g, r.tie, r.a_lost), a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(route(g, r.tie, r.b_lost), a.in_types[1]);
}

// ---- pow, atan2 ------------------------------------------------------------------------------
// d/da = b a^(b-1), taken as 0 where b == 0 (so 0^0 has no 0 * inf); d/db = y log(a), taken as 0
// where a == 0 and b >= 0 (PyTorch's pow_backward_self / pow_backward_exponent).
Tensor pow_da(const Tensor& g, const Tensor& a, const Tensor& b) {
  return ops::where(ops::equal(b, lit(0)), zero(), g * (b * ops::pow(a, b - 1.0)));
}
Tensor pow_db(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y) {
  const Tensor skip = ops::logical_and(ops::equal(a, lit(0)), ops::greater_equal(b, lit(0)));
  return g * ops::where(skip, zero(), y * ops::log(a));
}
void pow_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) accumulate(out[0], pow_da(a.tangents[0], a.inputs[0], a.inputs[1]));
  if (a.tangents[1].defined()) accumulate(out[0], pow_db(a.tangents[1], a.inputs[0], a.inputs[1], a.outputs[0]));
  finish_jvp(a, out[0]);
}
void pow_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor& g = a.cotangents[0];
  if (a.needs[0]) in[0] = unbroadcast(pow_da(g, a.inputs[0], a.inputs[1]), a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(pow_db(g, a.inputs[0], a.inputs[1], a.outputs[0]), a.in_types[1]);
}
// atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2).
void atan2_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const Tensor& u = a.inputs[0];
  const Tensor& v = a.inputs[1];
  const Tensor r = u * u + v * v;
  if (a.tangents[0].defined()) accumulate(out[0], a.tangents[0] * v);
  if (a.tangents[1].defined()) accumulate(out[0], -(a.tangents[1] * u));
  if (out[0].defined()) out[0] = broadcast_tangent(out[0] / r, a.outputs[0].shape());
}
void atan2_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor& u = a.inputs[0];
  const Tensor& v = a.inputs[1];
  const Tensor g = a.cotangents[0] / (u * u + v * v);
  if (a.needs[0]) in[0] = unbroadcast(g * v, a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(-(g * u), a.in_types[1]);
}

// ---- remainder -------------------------------------------------------------------------------
// y = a - floor(a / b) * b with floor's derivative 0: dy = da - floor_divide(a, b) db.
void remainder_jvp(const JvpArgs& a, std::span<Tensor> out) {
  accumulate(out[0], a.tangents[0]);
  if (a.tangents[1].defined())
    accumulate(out[0], -(a.tangents[1] * ops::floor_divide(a.inputs[0], a.inputs[1])));
  finish_jvp(a, out[0]);
}
void remainder_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor& g = a.cotangents[0];
  if (a.needs[0]) in[0] = unbroadcast(g, a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(-(g * ops::floor_divide(a.inputs[0], a.inputs[1])), a.in_types[1]);
}

}  // namespace

void install_binary_rules() {
  def_rules("add", kNone, add_jvp, add_vjp);
  def_rules("sub", kNone, sub_jvp, sub_vjp);
  def_rules("mul", kAB, mul_jvp, mul_vjp);
  def_rules("div", {bit(1), bit(0)}, div_jvp, div_vjp);
  def_rules("maximum", kAB, extremum_jvp<true>, extremum_vjp<true>);
  def_rules("minimum", kAB, extremum_jvp<false>, extremum_vjp<false>);
  def_rules("pow", {bit(0) | bit(1), bit(0)}, pow_jvp, pow_vjp);
  def_rules("atan2", kAB, atan2_jvp, atan2_vjp);
  def_rules("floor_divide", kNone, rules::zero_jvp, rules::zero_vjp);
  def_rules("remainder", kAB, remainder_jvp, remainder_vjp);
}

}  // namespace spore::autodiff
