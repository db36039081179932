// SPDX-License-Identifier: Apache-2.0
#include "transforms/interpreter.h"

#include <algorithm>
#include <map>

#include "core/attrs.h"
#include "runtime/dispatch.h"
#include "spore/error.h"
#include "transforms/control_flow.h"
#include "transforms/ir_bridge.h"
#include "transforms/symbol_binding.h"

namespace spore::transforms {

namespace {
// The sizes bound by the graph whose control-flow node is running on this thread: a body it
// interprets sees them (a value symbol bound outside and used inside; a body's parameters give
// only the symbols of their own shapes).
thread_local const SymbolSizes* t_outer_sizes = nullptr;

// After a control-flow node: the symbols of its result types that nothing bound here (a size a
// value gave inside the body) take the sizes its results have.
void bind_from_results(const ir::Node& n, const std::vector<Tensor>& out, SymbolSizes& bound) {
  for (size_t j = 0; j < out.size() && j < n.outputs().size(); ++j) {
    const auto* t = std::get_if<ir::TensorType>(&n.outputs()[j]);
    if (t == nullptr || !out[j].defined() || out[j].device().type == DeviceType::Meta) continue;
    for (size_t d = 0; d < t->shape.size() && d < static_cast<size_t>(out[j].dim()); ++d)
      if (t->shape[d].kind() == ir::Dim::Kind::Symbol) {
        const int64_t size = out[j].size(static_cast<int64_t>(d));
        auto [it, fresh] = bound.emplace(symbol_named(t->shape[d].name()), size);
        SPORE_CHECK(fresh || it->second == size, "[interpret] ", n.op(), " result ", j, " has size ", size, " where its type ",
                    "says ", t->shape[d].name(), ", which is ", it->second, " here");
      }
  }
}
}  // namespace

const SymbolSizes* enclosing_sizes() { return t_outer_sizes; }

std::vector<Tensor> interpret(const ir::Graph& g, std::span<const Tensor> inputs) {
  return interpret(g, inputs, NodeObserver{});
}

std::vector<Tensor> interpret(const ir::Graph& g, std::span<const Tensor> inputs, const NodeObserver& observe) {
  SPORE_CHECK(inputs.size() == g.params().size(), "[interpret] graph @", g.name(), " takes ", g.params().size(),
              " inputs, got ", inputs.size());
  std::vector<Tensor> params(inputs.begin(), inputs.end());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& want = std::get<ir::TensorType>(g.params()[i].type);
    const TensorType have = runtime::type_of(params[i]);
    bool ok = to_ir(have).dtype == want.dtype && want.shape.size() == have.shape.size();
    for (size_t d = 0; ok && d < want.shape.size(); ++d)
      ok = !want.shape[d].is_const() || want.shape[d].value() == have.shape[d];  // a symbol takes any size
    SPORE_CHECK(ok, "[interpret] input ", i, " of @",
                g.name(), " is ", dtype_name(have.dtype), shape_str(have.shape), "; the graph expects ",
                ir::type_str(want));
  }
  // A graph with symbolic input dimensions runs at this call's sizes (symbol_binding.h).
  SymbolSizes bound = bind_symbols(g, params, "interpret");
  if (t_outer_sizes != nullptr) bound.insert(t_outer_sizes->begin(), t_outer_sizes->end());  // (its own win)
  std::vector<std::pair<Dim, int64_t>> value_sizes;
  std::vector<std::vector<Tensor>> values(g.nodes().size());
  auto get = [&](ir::ValueRef v) -> const Tensor& {
    return v.node == ir::ValueRef::kParam ? params[static_cast<size_t>(v.index)]
                                          : values[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
  };
  std::vector<Tensor> ins;
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const ir::Node& n = *g.nodes()[k];
    if (n.op() == kConstantOp) {
      values[k] = {tensor_of(*static_cast<const ConstantAttrs*>(n.attrs()))};
      if (observe) observe(k, n, {}, values[k]);
      continue;
    }
    const Primitive* p = find_primitive(n.op());
    SPORE_CHECK(p != nullptr, "[interpret] op '", n.op(), "' is not a primitive this build knows");
    ins.clear();
    for (ir::ValueRef v : n.inputs()) ins.push_back(get(v));
    if (is_control_flow(*p)) {
      auto a = attrs_with_subgraphs(*p, n.attrs(), n.subgraphs());
      const SymbolSizes* outer = t_outer_sizes;
      t_outer_sizes = &bound;
      try {
        values[k] = call_control_flow(*p, *static_cast<const ControlFlowAttrs*>(a.get()), ins);
      } catch (...) {
        t_outer_sizes = outer;
        throw;
      }
      t_outer_sizes = outer;
      bind_from_results(n, values[k], bound);
      if (observe) observe(k, n, ins, values[k]);
      continue;
    }
    // A node whose attributes name sizes its input values give (bind_sizes, nonzero's count)
    // binds them for itself and every later node. Under an outer trace the values are unknown:
    // the node is traced with its symbols as they are.
    if (p->value_sizes != nullptr && std::none_of(ins.begin(), ins.end(), [](const Tensor& t) {
          return t.device().type == DeviceType::Meta;
        })) {
      value_sizes.clear();
      p->value_sizes(n.attrs(), ins, value_sizes);
      for (const auto& [sym, size] : value_sizes) {
        auto [it, fresh] = bound.emplace(sym, size);
        SPORE_CHECK(fresh || it->second == size, "[interpret] @", g.name(), ": ", p->name, " gives size ", dim_str(sym),
                    " the value ", size, " but an earlier node gave it ", it->second,
                    "; a graph made from two traces that share a symbol name cannot run");
      }
    }
    const std::shared_ptr<const void> bound_attrs = bind_attrs(*p, n.attrs(), bound);
    auto out = runtime::dispatch(*p, bound_attrs ? bound_attrs.get() : n.attrs(), ins);
    values[k].assign(out.t.begin(), out.t.begin() + out.n);
    if (observe) observe(k, n, ins, values[k]);
  }
  std::vector<Tensor> result;
  for (const ir::Output& o : g.outputs()) result.push_back(get(o.value));
  return result;
}

}  // namespace spore::transforms
