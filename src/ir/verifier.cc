// SPDX-License-Identifier: Apache-2.0
#include "ir/verifier.h"

#include <set>

#include "ir/error.h"

namespace spore::ir {
namespace {

std::string ref_str(ValueRef v) {
  return v.node == ValueRef::kParam ? cat("parameter ", v.index) : cat("output ", v.index, " of node ", v.node);
}

// A constant extent below zero can only be a bug upstream; symbolic ones are checked at run time.
// A layout must be an identifier so that the text form can hold it.
void check_type(const Graph& g, const Type& t, const std::string& where) {
  if (is_token(t)) return;
  const auto& tt = std::get<TensorType>(t);
  if (!tt.layout.empty() && !is_identifier(tt.layout))
    throw Error(cat("graph '", g.name(), "': ", where, " has layout '", tt.layout, "', which is not an identifier"));
  for (const Dim& d : tt.shape)
    if (d.is_const() && d.value() < 0)
      throw Error(cat("graph '", g.name(), "': ", where, " has type ", type_str(t), " with a negative dimension"));
}

void check_params(const Graph& g, bool nested) {
  for (size_t i = 0; i < g.params().size(); ++i) {
    const Param& p = g.params()[i];
    check_type(g, p.type, cat("parameter ", i));
    if (static_cast<int>(p.role) > static_cast<int>(Role::Constant))
      throw Error(cat("graph '", g.name(), "': parameter ", i, " has an invalid role ", static_cast<int>(p.role)));
    if (p.role != Role::Data && is_token(p.type))
      throw Error(cat("graph '", g.name(), "': parameter ", i, " is a token with role ", role_name(p.role),
                      "; tokens are data"));
    // State enters a sub-graph as an explicit operand of its node, never as the sub-graph's own.
    if (nested && p.role != Role::Data)
      throw Error(cat("sub-graph '", g.name(), "': parameter ", i, " has role ", role_name(p.role),
                      "; sub-graph parameters are data (pass state as operands of the node)"));
  }
}

void check_uses(const Graph& g, size_t node, const std::vector<ValueRef>& uses, bool nested) {
  for (ValueRef v : uses) {
    bool later = v.node != ValueRef::kParam && v.node >= 0 && static_cast<size_t>(v.node) >= node &&
                 static_cast<size_t>(v.node) < g.nodes().size();
    if (later && node < g.nodes().size())
      throw Error(cat("graph '", g.name(), "': node ", node, " (", g.nodes()[node]->op(), ") uses ", ref_str(v),
                      " before it is defined; nodes must be in topological order"));
    if (g.defines(v)) continue;
    std::string user = node < g.nodes().size() ? cat("node ", node, " (", g.nodes()[node]->op(), ")") : "an output";
    if (nested)
      throw Error(cat("sub-graph '", g.name(), "' is not closed: ", user, " uses ", ref_str(v),
                      ", which it does not define; pass outer values as explicit operands"));
    throw Error(cat("graph '", g.name(), "': ", user, " uses ", ref_str(v), ", which is not defined (dangling value)"));
  }
}

void check_outputs(const Graph& g, bool nested) {
  check_uses(g, g.nodes().size(), [&] {
    std::vector<ValueRef> v;
    for (const auto& o : g.outputs()) v.push_back(o.value);
    return v;
  }(), nested);
  std::set<int32_t> written;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Output& o = g.outputs()[i];
    if (!o.updates) continue;
    int32_t j = *o.updates;
    if (j < 0 || static_cast<size_t>(j) >= g.params().size())
      throw Error(cat("graph '", g.name(), "': output ", i, " updates input ", j, ", but the graph has ",
                      g.params().size(), " inputs"));
    const Param& p = g.params()[j];
    if (p.role != Role::Parameter && p.role != Role::Buffer)
      throw Error(cat("graph '", g.name(), "': output ", i, " updates input ", j, " of role ", role_name(p.role),
                      "; only parameters and buffers are state"));
    if (!(g.type_of(o.value) == p.type))
      throw Error(cat("graph '", g.name(), "': output ", i, " has type ", type_str(g.type_of(o.value)),
                      " but updates input ", j, " of type ", type_str(p.type), "; a state write keeps the type"));
    if (!written.insert(j).second)
      throw Error(cat("graph '", g.name(), "': input ", j, " is updated by two outputs; keep one write"));
  }
}

void verify_graph(const Graph& g, bool nested) {
  check_params(g, nested);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = *g.nodes()[i];
    check_uses(g, i, n.inputs(), nested);
    for (const auto& t : n.outputs()) check_type(g, t, cat("node ", i, " (", n.op(), ")"));
    std::vector<Type> types;
    for (ValueRef v : n.inputs()) types.push_back(g.type_of(v));
    // Sub-graphs first: the op's check reads their signatures and may assume them well formed.
    for (const auto& sub : n.subgraphs()) verify_graph(*sub, true);
    check_node(n, types);
  }
  check_outputs(g, nested);
}

}  // namespace

void check_node(const Node& n, std::span<const Type> input_types) {
  internal_check(input_types.size() == n.inputs().size(), "check_node: one type per input");
  if (needs_token(n.info().effect)) {
    bool has = false;
    for (const auto& t : input_types) has = has || is_token(t);
    if (!has) throw Error(cat("node '", n.op(), "' has an ordered effect but takes no token; chain a token input"));
  }
  if (n.info().check) n.info().check(NodeSig{n.op(), n.attrs(), input_types, n.outputs(), n.subgraphs()});
}

void verify(const Graph& g) { verify_graph(g, false); }

void verify_nested(const Graph& g) { verify_graph(g, true); }

}  // namespace spore::ir
