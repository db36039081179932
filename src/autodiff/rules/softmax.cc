// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of softmax and log_softmax. Both keep only their output y (the primitive's
// residual): softmax's Jacobian is diag(y) - y y^T and log_softmax's is I - 1 softmax^T along
// the axis, so each rule is one reduction and a few elementwise ops, in either mode (the
// Jacobians' transposes differ only in which side the sum is taken on).
#include "autodiff/rules/reduction_parts.h"
#include "prims/softmax.h"

namespace spore::autodiff {
namespace {

using prims::SoftmaxAttrs;

int64_t axis_of(const void* attrs) { return static_cast<const SoftmaxAttrs*>(attrs)->axis; }

// dy = y * (t - sum(t * y)); the vjp has the same form (the Jacobian is symmetric).
Tensor softmax_apply(const Tensor& y, const Tensor& g, int64_t axis) {
  return y * (g - ops::sum(g * y, {axis}, true));
}
void softmax_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = softmax_apply(a.outputs[0], a.tangents[0], axis_of(a.attrs));
}
void softmax_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = softmax_apply(a.outputs[0], a.cotangents[0], axis_of(a.attrs));
}

// y = x - logsumexp(x): dy = t - sum(exp(y) * t); dx = ct - exp(y) * sum(ct).
void log_softmax_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (!a.tangents[0].defined()) return;
  const Tensor& t = a.tangents[0];
  out[0] = t - ops::sum(ops::exp(a.outputs[0]) * t, {axis_of(a.attrs)}, true);
}
void log_softmax_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const Tensor& ct = a.cotangents[0];
  in[0] = ct - ops::exp(a.outputs[0]) * ops::sum(ct, {axis_of(a.attrs)}, true);
}

}  // namespace

void install_softmax_rules() {
  def_rules("softmax", {0, bit(0)}, softmax_jvp, softmax_vjp);
  def_rules("log_softmax", {0, bit(0)}, log_softmax_jvp, log_softmax_vjp);
}

}  // namespace spore::autodiff
