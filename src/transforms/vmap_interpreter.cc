// SPDX-License-Identifier: Apache-2.0
#include "transforms/vmap_interpreter.h"

#include <algorithm>

#include "runtime/dispatch.h"
#include "transforms/symbol_binding.h"
#include "spore/error.h"
#include "spore/ops.h"
#include "transforms/control_flow.h"
#include "transforms/ir_bridge.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms {
namespace {

std::string type_text(DType d, const Shape& s) { return detail::cat(dtype_name(d), shape_str(s)); }

// A rule's output must be the lane-wise value the traced graph describes: a wrong shape here
// would surface much later as a confusing error in an unrelated op.
void check_output(const ir::Node& n, size_t j, const BatchedValue& v, int64_t batch) {
  const TensorType want = from_ir(std::get<ir::TensorType>(n.outputs()[j]));
  Shape have = v.t.shape();
  if (v.batched) {
    SPORE_ASSERT(!have.empty() && have[0] == batch, "[vmap] the rule of '", n.op(), "' returned output ", j, " of shape ",
                 shape_str(have), " with no batch axis of size ", batch);
    have.erase(0);
  }
  // A symbolic dimension (a loop's run-time trip count) matches any size.
  bool same = have.size() == want.shape.size() && v.t.dtype() == want.dtype;
  for (size_t d = 0; same && d < have.size(); ++d) same = is_symbolic(want.shape[d]) || have[d] == want.shape[d];
  SPORE_ASSERT(same, "[vmap] the rule of '", n.op(), "' gave output ", j,
               " lanes of type ", type_text(v.t.dtype(), have), "; the traced graph says ",
               type_text(want.dtype, want.shape));
}

// Moves a rule's batch axis to 0 (the canonical form).
BatchedValue canonical(Tensor t, int axis) {
  if (axis < 0) return {std::move(t), false};
  if (axis == 0) return {std::move(t), true};
  std::vector<int64_t> perm{axis};
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != axis) perm.push_back(d);
  return {ops::permute(t, perm), true};
}

}  // namespace

Tensor materialize(const BatchedValue& v, int64_t batch) {
  if (v.batched) return v.t;
  Shape s{batch};
  for (Dim d : v.t.shape()) s.push_back(d);
  return ops::broadcast_to(v.t, s);
}

std::vector<bool> batched_outputs(const ir::Graph& g, const std::vector<bool>& batched) {
  SPORE_ASSERT(batched.size() == g.params().size(), "batched_outputs: one flag per graph input");
  std::vector<std::vector<bool>> nodes(g.nodes().size());
  auto get = [&](ir::ValueRef v) -> bool {
    return v.node == ir::ValueRef::kParam ? batched[static_cast<size_t>(v.index)]
                                          : nodes[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
  };
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const ir::Node& n = *g.nodes()[k];
    bool any = false;
    for (ir::ValueRef v : n.inputs()) any = any || get(v);
    nodes[k].assign(n.outputs().size(), any);
  }
  std::vector<bool> out;
  for (const ir::Output& o : g.outputs()) out.push_back(get(o.value));
  return out;
}

std::vector<BatchedValue> run_batched(const ir::Graph& g, std::span<const BatchedValue> inputs, int64_t batch) {
  SPORE_ASSERT(inputs.size() == g.params().size(), "[vmap] graph @", g.name(), " takes ", g.params().size(),
               " inputs, got ", inputs.size());
  vmap_rules::install_vmap_rules();
  std::vector<std::vector<BatchedValue>> values(g.nodes().size());
  auto get = [&](ir::ValueRef v) -> const BatchedValue& {
    return v.node == ir::ValueRef::kParam ? inputs[static_cast<size_t>(v.index)]
                                          : values[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
  };
  std::vector<Tensor> ins, outs, shared;
  std::vector<int> axes, out_axes;
  SymbolSizes bound;  // value symbols (shape.h) bound by the nodes run so far
  std::vector<std::pair<Dim, int64_t>> value_sizes;
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const ir::Node& n = *g.nodes()[k];
    if (n.op() == kConstantOp) {
      values[k] = {{tensor_of(*static_cast<const ConstantAttrs*>(n.attrs())), false}};
      continue;
    }
    const Primitive* p = find_primitive(n.op());
    SPORE_CHECK(p != nullptr, "[vmap] op '", n.op(), "' is not a primitive this build knows");
    ins.clear();
    axes.clear();
    bool any = false;
    for (ir::ValueRef v : n.inputs()) {
      const BatchedValue& b = get(v);
      ins.push_back(b.t);
      axes.push_back(b.batched ? 0 : vmap_rules::kNotBatched);
      any = any || b.batched;
    }
    const bool cf = is_control_flow(*p);
    std::shared_ptr<const void> cf_attrs;
    if (cf) cf_attrs = attrs_with_subgraphs(*p, n.attrs(), n.subgraphs());
    const void* attrs = cf ? cf_attrs.get() : n.attrs();
    // Sizes that values give (bind_sizes, nonzero) are one per graph, so they are read from
    // unbatched inputs only: a batched one is passed undefined, which the primitive refuses
    // (its lanes could disagree). Under an outer trace the values are unknown: traced as is.
    std::shared_ptr<const void> sized_attrs;
    if (!cf && std::none_of(ins.begin(), ins.end(), [](const Tensor& t) { return t.device().type == DeviceType::Meta; })) {
      if (p->value_sizes != nullptr) {
        shared.clear();
        for (size_t i = 0; i < ins.size(); ++i) shared.push_back(axes[i] == vmap_rules::kNotBatched ? ins[i] : Tensor());
        value_sizes.clear();
        p->value_sizes(attrs, shared, value_sizes);
        for (const auto& [sym, size] : value_sizes) {
          auto [it, fresh] = bound.emplace(sym, size);
          SPORE_CHECK(fresh || it->second == size, "[vmap] @", g.name(), ": ", p->name, " gives size ", dim_str(sym),
                      " the value ", size, " but an earlier node gave it ", it->second);
        }
      }
      if ((sized_attrs = bind_attrs(*p, attrs, bound))) attrs = sized_attrs.get();
    }
    auto& out = values[k];
    out.clear();
    if (!any) {
      // Every lane computes the same thing: do it once.
      if (cf) {
        for (Tensor& t : call_control_flow(*p, *static_cast<const ControlFlowAttrs*>(attrs), ins))
          out.push_back({std::move(t), false});
      } else {
        auto r = runtime::dispatch(*p, attrs, ins);
        for (int j = 0; j < r.n; ++j) out.push_back({std::move(r.t[j]), false});
      }
      continue;
    }
    if (cf && vmap_rules::is_control_flow_rule(p->vmap)) {
      std::vector<BatchedValue> args;
      for (ir::ValueRef v : n.inputs()) args.push_back(get(v));
      out = vmap_rules::vmap_control_flow(*p, attrs, args, batch);
      SPORE_ASSERT(out.size() == n.outputs().size(), "[vmap] the rule of '", n.op(), "' returned ", out.size(),
                   " outputs for a node with ", n.outputs().size());
      for (size_t j = 0; j < out.size(); ++j) check_output(n, j, out[j], batch);
      continue;
    }
    outs.clear();
    out_axes.clear();
    const VmapRule rule = p->vmap ? p->vmap : &vmap_rules::vmap_by_loop;
    rule(*p, attrs, ins, axes, outs, out_axes);
    SPORE_ASSERT(outs.size() == n.outputs().size() && out_axes.size() == outs.size(), "[vmap] the rule of '", n.op(),
                 "' returned ", outs.size(), " outputs for a node with ", n.outputs().size());
    for (size_t j = 0; j < outs.size(); ++j) {
      out.push_back(canonical(std::move(outs[j]), out_axes[j]));
      check_output(n, j, out.back(), batch);
    }
  }
  std::vector<BatchedValue> result;
  for (const ir::Output& o : g.outputs()) result.push_back(get(o.value));
  return result;
}

}  // namespace spore::transforms
