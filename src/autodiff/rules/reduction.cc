// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the reductions (reduce_*, logsumexp, var, std); the scans and the
// softmaxes are in scan.cc and softmax.cc. Every differentiable reduction here is linear in its
// tangent through one weight tensor w of the input's shape (dy = sum(t * w) over the reduced
// axes, dx = ct * w), so each kind is one function giving w and both modes share it.
//
// The primitive's axes are normalized and sorted; an empty list reduces nothing (the public ops
// spell out every axis for "all"), so the helpers below treat it as the identity.
// Conventions at kinks and ties are PyTorch's: amax/amin/norm(inf) split the gradient evenly
// among tied extremes; norm(2) and std give 0 where the result is 0; prod is exact with zeros
// to first order (see prod_weight).
#include <algorithm>

#include "autodiff/rules/reduction_parts.h"
#include "prims/reduce.h"

namespace spore::autodiff {
namespace {

using prims::ReduceAttrs;
using rules::weak;

ops::Axes axes_of(const ReduceAttrs& r) { return ops::Axes(r.axes.begin(), r.axes.end()); }

/// The input's shape with reduced axes as size 1 (the keepdims shape).
Shape kept_shape(const ReduceAttrs& r, const Shape& in_shape) {
  Shape kept = in_shape;
  for (int64_t ax : r.axes) kept[static_cast<size_t>(ax)] = 1;
  return kept;
}

/// A reduced result (or its cotangent) with its reduced axes back as size 1, so it broadcasts
/// against the input.
Tensor keep(const Tensor& v, const ReduceAttrs& r, const Shape& in_shape) {
  if (r.keepdims || r.axes.empty()) return v;
  return v.reshape(kept_shape(r, in_shape));
}

/// sum / mean over the primitive's axes (identity for none).
Tensor rsum(const Tensor& v, const ReduceAttrs& r, bool keepdims) {
  return r.axes.empty() ? v : ops::sum(v, axes_of(r), keepdims);
}
Tensor rmean(const Tensor& v, const ReduceAttrs& r) { return r.axes.empty() ? v : ops::mean(v, axes_of(r), true); }

Dim reduced_count(const ReduceAttrs& r, const Shape& in_shape) {
  Dim n = 1;
  for (int64_t ax : r.axes) n *= in_shape[static_cast<size_t>(ax)];
  return n;
}

// ---- one weight per kind -------------------------------------------------------------------
// w(x, y), y in the keepdims shape (undefined in a vjp whose primitive keeps no output).
using Weight = Tensor (*)(const ReduceAttrs& r, const Tensor& x, const Tensor& y);

/// prod: dy/dx_i = prod of the others. With p = product of the non-zero x and z = the number of
/// zeros in the group: p / x_i where z == 0, p at the zero where z == 1, 0 otherwise (PyTorch's
/// cases, with no division by zero, so no NaN anywhere). Second derivatives are exact where a
/// group has no zero; where it has one, the mask is held constant, so the mixed terms between
/// the zero and the other elements are missed (PyTorch's formula misses them too).
Tensor prod_weight(const ReduceAttrs& r, const Tensor& x, const Tensor&) {
  const Tensor is_zero = ops::equal(x, weak(0));
  const Tensor x_safe = ops::where(is_zero, weak(1), x);
  const Tensor n_zero = rsum(is_zero.to(x.dtype()), r, true);
  const Tensor p = r.axes.empty() ? x_safe : ops::prod(x_safe, axes_of(r), true);
  const Tensor mask = ops::where(is_zero, ops::equal(n_zero, weak(1)), ops::equal(n_zero, weak(0)));
  return ops::where(mask, p / x_safe, weak(0));
}

/// The tied extremes of x (where |x| or x equals y), each weighted 1 / (number of ties).
Tensor split_ties(const ReduceAttrs& r, const Tensor& hit, DType dtype) {
  const Tensor m = hit.to(dtype);
  return m / rsum(m, r, true);
}
Tensor extreme_weight(const ReduceAttrs& r, const Tensor& x, const Tensor& y) {
  return split_ties(r, ops::equal(x, y), x.dtype());
}
Tensor norm_inf_weight(const ReduceAttrs& r, const Tensor& x, const Tensor& y) {
  return ops::sign(x) * split_ties(r, ops::equal(ops::abs(x), y), x.dtype());
}
Tensor norm1_weight(const ReduceAttrs&, const Tensor& x, const Tensor&) { return ops::sign(x); }
/// x / ||x||; a zero norm means x is all zero there, and x / 1 gives the 0 PyTorch gives.
Tensor norm2_weight(const ReduceAttrs&, const Tensor& x, const Tensor& y) {
  return x / ops::where(ops::equal(y, weak(0)), weak(1), y);
}
Tensor logsumexp_weight(const ReduceAttrs&, const Tensor& x, const Tensor& y) { return ops::exp(x - y); }

/// var: 2 (x - mean) / max(0, n - correction) (inf / NaN at zero degrees of freedom, as PyTorch).
double var_scale(const ReduceAttrs& r, const Shape& in_shape) {
  const Dim dof = std::max<Dim>(0, reduced_count(r, in_shape) - r.correction);
  return 2.0 / static_cast<double>(dof);
}
Tensor var_weight(const ReduceAttrs& r, const Tensor& x, const Tensor&) {
  return (x - rmean(x, r)) * var_scale(r, x.shape());
}
/// std = sqrt(var): var's weight / (2 std); 0 where std is 0 (PyTorch's masked_fill).
Tensor std_weight(const ReduceAttrs& r, const Tensor& x, const Tensor& y) {
  const Tensor is_zero = ops::equal(y, weak(0));
  const Tensor inv = ops::where(is_zero, weak(0), 0.5 / ops::where(is_zero, weak(1), y));
  return var_weight(r, x, y) * inv;
}

template <Weight W>
void weighted_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (!a.tangents[0].defined()) return;
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const Tensor w = W(r, x, keep(a.outputs[0], r, x.shape()));
  out[0] = rsum(a.tangents[0] * w, r, r.keepdims);
}
template <Weight W>
void weighted_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  const Tensor& x = a.inputs[0];
  const Shape& s = a.in_types[0].shape;
  const Tensor y = a.outputs[0].defined() ? keep(a.outputs[0], r, s) : Tensor();
  in[0] = rules::broadcast_tangent(keep(a.cotangents[0], r, s) * W(r, x, y), s);
}

// ---- sum and mean: the weight is a constant --------------------------------------------------
void sum_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = rsum(a.tangents[0], r, r.keepdims);
}
void sum_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  const Shape& s = a.in_types[0].shape;
  in[0] = rules::broadcast_tangent(keep(a.cotangents[0], r, s), s);
}
void mean_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  if (!a.tangents[0].defined()) return;
  out[0] = r.axes.empty() ? a.tangents[0] : ops::mean(a.tangents[0], axes_of(r), r.keepdims);
}
void mean_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  const Shape& s = a.in_types[0].shape;
  const double n = static_cast<double>(reduced_count(r, s));
  in[0] = rules::broadcast_tangent(keep(a.cotangents[0] / n, r, s), s);
}

template <Weight W>
void def_weighted(const char* name, Residuals res) {
  def_rules(name, res, weighted_jvp<W>, weighted_vjp<W>);
}

}  // namespace

void install_reduction_rules() {
  constexpr Residuals kX{bit(0), 0}, kXY{bit(0), bit(0)};
  def_rules("reduce_sum", {}, sum_jvp, sum_vjp);
  def_rules("reduce_mean", {}, mean_jvp, mean_vjp);
  def_weighted<prod_weight>("reduce_prod", kX);
  def_weighted<extreme_weight>("reduce_max", kXY);
  def_weighted<extreme_weight>("reduce_min", kXY);
  def_weighted<norm1_weight>("reduce_norm1", kX);
  def_weighted<norm2_weight>("reduce_norm2", kXY);
  def_weighted<norm_inf_weight>("reduce_norm_inf", kXY);
  def_weighted<logsumexp_weight>("logsumexp", kXY);
  def_weighted<var_weight>("var", kX);
  def_weighted<std_weight>("std", kXY);
  // reduce_all / reduce_any / argmax / argmin give bool or int64: nothing to differentiate.
  install_scan_rules();
  install_softmax_rules();
}

}  // namespace spore::autodiff
