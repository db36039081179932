// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the reductions, scans and softmax.
#include "autodiff/rules/util.h"
#include "prims/reduce.h"

namespace spore::autodiff {
namespace {

using prims::ReduceAttrs;

ops::Axes axes_of(const ReduceAttrs& r, size_t rank) {
  ops::Axes axes(r.axes.begin(), r.axes.end());
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

/// A reduced result (or its cotangent) given back its reduced axes as size 1, then broadcast to
/// the input's shape.
Tensor expand_reduced(const Tensor& v, const ReduceAttrs& r, const Shape& in_shape) {
  Tensor g = v;
  if (!r.keepdims) {
    Shape kept = in_shape;
    for (int64_t ax : axes_of(r, in_shape.size())) kept[ax] = 1;
    g = g.reshape(kept);
  }
  return ops::broadcast_to(g, in_shape);
}

Dim reduced_count(const ReduceAttrs& r, const Shape& in_shape) {
  Dim n = 1;
  for (int64_t ax : axes_of(r, in_shape.size())) n *= in_shape[ax];
  return n;
}

void sum_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = ops::sum(a.tangents[0], axes_of(r, a.inputs[0].dim()), r.keepdims);
}
void sum_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  in[0] = expand_reduced(a.cotangents[0], r, a.in_types[0].shape);
}
void mean_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = ops::mean(a.tangents[0], axes_of(r, a.inputs[0].dim()), r.keepdims);
}
void mean_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& r = *static_cast<const ReduceAttrs*>(a.attrs);
  const double n = static_cast<double>(reduced_count(r, a.in_types[0].shape));
  in[0] = expand_reduced(a.cotangents[0] / n, r, a.in_types[0].shape);
}

}  // namespace

void install_reduction_rules() {
  def_rules("reduce_sum", {}, sum_jvp, sum_vjp);
  def_rules("reduce_mean", {}, mean_jvp, mean_vjp);
}

}  // namespace spore::autodiff
