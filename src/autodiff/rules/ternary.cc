// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of where, clamp and lerp. All three broadcast their inputs; where's condition
// and the masks that route clamp's gradient are never differentiated.
#include "autodiff/rules/elementwise_parts.h"

namespace spore::autodiff {
namespace {

using rules::accumulate;
using rules::broadcast_tangent;
using rules::keep_where;
using rules::unbroadcast;
using rules::zero;

/// t where it is defined, else a weak 0 (where() then gives the other operand's dtype).
Tensor or_zero(const Tensor& t) { return t.defined() ? t : zero(); }

// ---- where(c, a, b) --------------------------------------------------------------------------
void where_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (!a.tangents[1].defined() && !a.tangents[2].defined()) return;
  const Tensor& c = a.inputs[0];
  out[0] = broadcast_tangent(ops::where(c, or_zero(a.tangents[1]), or_zero(a.tangents[2])), a.outputs[0].shape());
}
void where_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor& c = a.inputs[0];
  const Tensor& g = a.cotangents[0];
  if (a.needs[1]) in[1] = unbroadcast(keep_where(c, g), a.in_types[1]);
  if (a.needs[2]) in[2] = unbroadcast(ops::where(c, zero(), g), a.in_types[2]);
}

// ---- clamp(x, lo, hi) ------------------------------------------------------------------------
// PyTorch's clamp_backward / clamp_backward_min_max: x gets g where lo <= x <= hi; lo where
// x < lo < hi; hi where x > hi or hi < lo (then the result is hi). The three masks are disjoint
// (NaN anywhere: none holds), so the jvp is their sum and agrees with the vjp at every tie.
struct ClampMasks {
  Tensor x, lo, hi;
};
ClampMasks clamp_masks(const Tensor& x, const Tensor& lo, const Tensor& hi, const bool* want) {
  ClampMasks m;
  if (want[0]) m.x = ops::logical_and(ops::greater_equal(x, lo), ops::less_equal(x, hi));
  if (want[1]) m.lo = ops::logical_and(ops::less(x, lo), ops::less(lo, hi));
  if (want[2]) m.hi = ops::logical_or(ops::greater(x, hi), ops::less(hi, lo));
  return m;
}
void clamp_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const bool want[3] = {a.tangents[0].defined(), a.tangents[1].defined(), a.tangents[2].defined()};
  const ClampMasks m = clamp_masks(a.inputs[0], a.inputs[1], a.inputs[2], want);
  if (want[0]) accumulate(out[0], keep_where(m.x, a.tangents[0]));
  if (want[1]) accumulate(out[0], keep_where(m.lo, a.tangents[1]));
  if (want[2]) accumulate(out[0], keep_where(m.hi, a.tangents[2]));
  if (out[0].defined()) out[0] = broadcast_tangent(out[0], a.outputs[0].shape());
}
void clamp_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const ClampMasks m = clamp_masks(a.inputs[0], a.inputs[1], a.inputs[2], a.needs.data());
  const Tensor& g = a.cotangents[0];
  if (a.needs[0]) in[0] = unbroadcast(keep_where(m.x, g), a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(keep_where(m.lo, g), a.in_types[1]);
  if (a.needs[2]) in[2] = unbroadcast(keep_where(m.hi, g), a.in_types[2]);
}

// ---- lerp(a, b, w) = a + w (b - a) -------------------------------------------------------------
void lerp_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const Tensor& w = a.inputs[2];
  if (a.tangents[0].defined()) accumulate(out[0], a.tangents[0] * (1.0 - w));
  if (a.tangents[1].defined()) accumulate(out[0], a.tangents[1] * w);
  if (a.tangents[2].defined()) accumulate(out[0], a.tangents[2] * (a.inputs[1] - a.inputs[0]));
  if (out[0].defined()) out[0] = broadcast_tangent(out[0], a.outputs[0].shape());
}
void lerp_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor& g = a.cotangents[0];
  const Tensor& w = a.inputs[2];
  if (a.needs[0]) in[0] = unbroadcast(g * (1.0 - w), a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(g * w, a.in_types[1]);
  if (a.needs[2]) in[2] = unbroadcast(g * (a.inputs[1] - a.inputs[0]), a.in_types[2]);
}

}  // namespace

void install_ternary_rules() {
  def_rules("where", {bit(0), 0}, where_jvp, where_vjp);
  def_rules("clamp", {bit(0) | bit(1) | bit(2), 0}, clamp_jvp, clamp_vjp);
  def_rules("lerp", {bit(0) | bit(1) | bit(2), 0}, lerp_jvp, lerp_vjp);
}

}  // namespace spore::autodiff
