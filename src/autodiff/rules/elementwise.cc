// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the elementwise primitives. A unary rule is one derivative formula
// dy/dx (in terms of x and/or y) shared by both modes: jvp = t * dy/dx, vjp = ct * dy/dx.
#include "autodiff/rules/util.h"
#include "prims/binary.h"
#include "prims/unary.h"

namespace spore::autodiff {
namespace {

using rules::accumulate;
using rules::broadcast_tangent;
using rules::unbroadcast;

// ---- unary: one derivative per primitive -------------------------------------------------
using Deriv = Tensor (*)(const prims::UnaryAttrs& a, const Tensor& x, const Tensor& y);

template <Deriv D>
void unary_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (!a.tangents[0].defined()) return;
  out[0] = a.tangents[0] * D(*static_cast<const prims::UnaryAttrs*>(a.attrs), a.inputs[0], a.outputs[0]);
}
template <Deriv D>
void unary_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = a.cotangents[0] * D(*static_cast<const prims::UnaryAttrs*>(a.attrs), a.inputs[0], a.outputs[0]);
}
template <Deriv D>
void def_unary(const char* name, Residuals r) {
  def_rules(name, r, unary_jvp<D>, unary_vjp<D>);
}
constexpr Residuals kX{bit(0), 0}, kY{0, bit(0)}, kXY{bit(0), bit(0)};

Tensor d_neg(const prims::UnaryAttrs&, const Tensor& x, const Tensor&) { return ops::full_like(x, -1.0); }
Tensor d_exp(const prims::UnaryAttrs&, const Tensor&, const Tensor& y) { return y; }
Tensor d_log(const prims::UnaryAttrs&, const Tensor& x, const Tensor&) { return ops::reciprocal(x); }
Tensor d_sin(const prims::UnaryAttrs&, const Tensor& x, const Tensor&) { return ops::cos(x); }
Tensor d_cos(const prims::UnaryAttrs&, const Tensor& x, const Tensor&) { return -ops::sin(x); }
Tensor d_tanh(const prims::UnaryAttrs&, const Tensor&, const Tensor& y) { return 1.0 - y * y; }

// ---- binary ------------------------------------------------------------------------------
void add_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const Shape& s = a.outputs[0].shape();
  if (a.tangents[0].defined()) accumulate(out[0], broadcast_tangent(a.tangents[0], s));
  if (a.tangents[1].defined()) accumulate(out[0], broadcast_tangent(a.tangents[1], s));
}
void add_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (a.needs[0]) in[0] = unbroadcast(a.cotangents[0], a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(a.cotangents[0], a.in_types[1]);
}
void sub_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const Shape& s = a.outputs[0].shape();
  if (a.tangents[0].defined()) accumulate(out[0], broadcast_tangent(a.tangents[0], s));
  if (a.tangents[1].defined()) accumulate(out[0], broadcast_tangent(-a.tangents[1], s));
}
void sub_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (a.needs[0]) in[0] = unbroadcast(a.cotangents[0], a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(-a.cotangents[0], a.in_types[1]);
}
void mul_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) accumulate(out[0], a.tangents[0] * a.inputs[1]);
  if (a.tangents[1].defined()) accumulate(out[0], a.inputs[0] * a.tangents[1]);
  if (out[0].defined()) out[0] = broadcast_tangent(out[0], a.outputs[0].shape());
}
void mul_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (a.needs[0]) in[0] = unbroadcast(a.cotangents[0] * a.inputs[1], a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(a.inputs[0] * a.cotangents[0], a.in_types[1]);
}
// y = u / v: dy = du / v - y dv / v.
void div_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) accumulate(out[0], a.tangents[0] / a.inputs[1]);
  if (a.tangents[1].defined()) accumulate(out[0], -(a.outputs[0] * a.tangents[1]) / a.inputs[1]);
  if (out[0].defined()) out[0] = broadcast_tangent(out[0], a.outputs[0].shape());
}
void div_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor g = a.cotangents[0] / a.inputs[1];
  if (a.needs[0]) in[0] = unbroadcast(g, a.in_types[0]);
  if (a.needs[1]) in[1] = unbroadcast(-(g * a.outputs[0]), a.in_types[1]);
}

}  // namespace

void install_elementwise_rules() {
  def_unary<d_neg>("neg", kX);
  def_unary<d_exp>("exp", kY);
  def_unary<d_log>("log", kX);
  def_unary<d_sin>("sin", kX);
  def_unary<d_cos>("cos", kX);
  def_unary<d_tanh>("tanh", kY);
  (void)kXY;
  def_rules("add", {}, add_jvp, add_vjp);
  def_rules("sub", {}, sub_jvp, sub_vjp);
  def_rules("mul", {bit(0) | bit(1), 0}, mul_jvp, mul_vjp);
  def_rules("div", {bit(1), bit(0)}, div_jvp, div_vjp);
}

}  // namespace spore::autodiff
