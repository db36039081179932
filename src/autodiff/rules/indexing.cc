// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of gather and scatter (scatter_add is scatter with `add`). All are linear in
// their floating inputs; the index is never differentiated. gather's adjoint is scatter_add into
// zeros and scatter_add's adjoint to src is gather, so the pair is closed under differentiation.
#include "autodiff/rules/shape_parts.h"
#include "prims/gather.h"

namespace spore::autodiff {
namespace {

using prims::GatherAttrs;
using prims::ScatterAttrs;
using rules::zeros_of;

void gather_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& g = *static_cast<const GatherAttrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = ops::gather(a.tangents[0], g.axis, a.inputs[1]);
}
// Duplicate indices read one element several times, so their cotangents sum: scatter_add.
void gather_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& g = *static_cast<const GatherAttrs*>(a.attrs);
  if (a.needs[0])
    in[0] = ops::scatter_add(zeros_of(a.in_types[0], a.cotangents[0]), g.axis, a.inputs[1], a.cotangents[0]);
}

void scatter_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& s = *static_cast<const ScatterAttrs*>(a.attrs);
  const Tensor& like = a.tangents[0].defined() ? a.tangents[0] : a.tangents[2];
  const Tensor tx = a.tangents[0].defined() ? a.tangents[0] : ops::zeros_like(a.inputs[0]);
  const Tensor ts = a.tangents[2].defined() ? a.tangents[2] : ops::zeros(a.inputs[2].shape(), {a.inputs[2].dtype(), like.device()});
  out[0] = s.add ? ops::scatter_add(tx, s.axis, a.inputs[1], ts) : ops::scatter(tx, s.axis, a.inputs[1], ts);
}

/// True where src element i (over the index's shape) is the write that stays in the output:
/// the last one in row-major order among those naming the same position, as the kernel does.
/// Integer ops only: a routing mask, never differentiated.
Tensor last_writes(const Tensor& index, int64_t axis, const TensorType& x) {
  const Tensor pos = ops::reshape(ops::arange(0, index.numel(), 1, {DType::Int64, index.device()}), index.shape());
  const Tensor winner = ops::scatter(ops::full(x.shape, -1, {DType::Int64, index.device()}), axis, index, pos);
  return ops::equal(ops::gather(winner, axis, index), pos);
}

// Overwritten positions of x get no gradient; src gets the cotangent of the position it was
// written to (only where its write stayed), and zeros outside the index's extent.
void scatter_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& s = *static_cast<const ScatterAttrs*>(a.attrs);
  const Tensor& ct = a.cotangents[0];
  const Tensor& index = a.inputs[1];
  if (a.needs[0]) {
    const TensorType z{a.in_types[0].dtype, false, index.shape()};
    in[0] = s.add ? ct : ops::scatter(ct, s.axis, index, zeros_of(z, ct));
  }
  if (a.needs[2]) {
    Tensor g = ops::gather(ct, s.axis, index);
    if (!s.add) g = ops::where(last_writes(index, s.axis, a.in_types[0]), g, ops::weak_scalar(0.0));
    const Shape& src = a.in_types[2].shape;
    std::vector<int64_t> before(src.size(), 0), after(src.size(), 0);
    for (size_t d = 0; d < src.size(); ++d) after[d] = src[d] - index.shape()[d];
    in[2] = rules::pad_axes(g, before, after);
  }
}

}  // namespace

void install_indexing_rules() {
  def_rules("gather", {bit(1), 0}, gather_jvp, gather_vjp);
  def_rules("scatter", {bit(1), 0}, scatter_jvp, scatter_vjp);
}

}  // namespace spore::autodiff
