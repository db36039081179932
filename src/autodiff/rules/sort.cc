// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of sort and topk. Away from ties both are a fixed selection of the input
// along the axis, given by the index output: the values' tangent is the tangent gathered by the
// indices, and the cotangent goes back through them with scatter_add (indices are distinct along
// the axis, so add equals overwrite, and scatter_add's rules are the simpler pair). The indices
// output is an integer and has no derivative.
#include "autodiff/rules/shape_parts.h"
#include "prims/sort.h"

namespace spore::autodiff {
namespace {

template <class Attrs>
void select_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const auto& s = *static_cast<const Attrs*>(a.attrs);
  if (a.tangents[0].defined()) out[0] = ops::gather(a.tangents[0], s.axis, a.outputs[1]);
}
template <class Attrs>
void select_vjp(const VjpArgs& a, std::span<Tensor> in) {
  const auto& s = *static_cast<const Attrs*>(a.attrs);
  const Tensor& ct = a.cotangents[0];
  if (!ct.defined()) return;
  in[0] = ops::scatter_add(rules::zeros_of(a.in_types[0], ct), s.axis, a.outputs[1], ct);
}

}  // namespace

void install_sort_rules() {
  def_rules("sort", {0, bit(1)}, select_jvp<prims::SortAttrs>, select_vjp<prims::SortAttrs>);
  def_rules("topk", {0, bit(1)}, select_jvp<prims::TopkAttrs>, select_vjp<prims::TopkAttrs>);
}

}  // namespace spore::autodiff
