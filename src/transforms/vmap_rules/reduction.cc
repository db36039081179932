// SPDX-License-Identifier: Apache-2.0
// vmap rules of the primitives that work along given axes of one input (reductions, arg
// reductions, scans, softmax, sort, topk): the batch axis goes in front and every axis
// attribute moves up by one, so the primitive runs once over the whole batch.
#include "prims/reduce.h"
#include "prims/scan.h"
#include "prims/softmax.h"
#include "prims/sort.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {
namespace {

// `Field` is a pointer to the attribute member holding the axis (or axes).
template <class Attrs, auto Field>
void along_axes(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                std::vector<Tensor>& out, std::vector<int>& out_axes) {
  Attrs a = *static_cast<const Attrs*>(attrs);
  if constexpr (std::is_integral_v<std::decay_t<decltype(a.*Field)>>) {
    a.*Field += 1;
    // A single-axis primitive on a 0-d lane names axis 0 of nothing (cumsum, argmax, softmax of
    // a scalar): give each lane a length-1 axis to work along, then drop it again.
    if (in[0].dim() == 1) {
      const int64_t batch = in[0].shape()[0];
      out = call(p, &a, std::vector<Tensor>{ops::reshape(in[0], {batch, 1})});
      for (Tensor& t : out) t = ops::reshape(t, {batch});
      all_batched(out, out_axes);
      return;
    }
  } else {
    a.*Field = shifted(a.*Field);
  }
  out = call(p, &a, in.first(1));
  all_batched(out, out_axes);
}

}  // namespace

void install_reduction_vmap_rules() {
  using prims::ReduceOp;
  for (int op = 0; op < prims::kNumReduceOps; ++op)
    def_vmap(prims::reduce_primitive(static_cast<ReduceOp>(op)), &along_axes<prims::ReduceAttrs, &prims::ReduceAttrs::axes>);
  for (bool max : {true, false})
    def_vmap(prims::arg_reduce_primitive(max), &along_axes<prims::ArgReduceAttrs, &prims::ArgReduceAttrs::axis>);
  for (bool prod : {true, false})
    def_vmap(prims::scan_primitive(prod), &along_axes<prims::ScanAttrs, &prims::ScanAttrs::axis>);
  def_vmap(prims::softmax_primitive(), &along_axes<prims::SoftmaxAttrs, &prims::SoftmaxAttrs::axis>);
  def_vmap(prims::log_softmax_primitive(), &along_axes<prims::SoftmaxAttrs, &prims::SoftmaxAttrs::axis>);
  def_vmap(prims::sort_primitive(), &along_axes<prims::SortAttrs, &prims::SortAttrs::axis>);
  def_vmap(prims::topk_primitive(), &along_axes<prims::TopkAttrs, &prims::TopkAttrs::axis>);
}

}  // namespace spore::transforms::vmap_rules
