// SPDX-License-Identifier: Apache-2.0
#include "ir/graph.h"

#include "ir/error.h"

namespace spore::ir {

const char* role_name(Role r) {
  switch (r) {
    case Role::Data: return "data";
    case Role::Parameter: return "parameter";
    case Role::Buffer: return "buffer";
    case Role::Constant: return "constant";
  }
  return "?";
}

Node::Node(std::string op, std::shared_ptr<const void> attrs, std::vector<ValueRef> inputs,
           std::vector<Type> outputs, std::string scope, std::vector<GraphPtr> subgraphs)
    : op_(std::move(op)),
      info_(find_op(op_)),
      attrs_(std::move(attrs)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      scope_(std::move(scope)),
      subgraphs_(std::move(subgraphs)) {
  if (!info_) throw Error(cat("unknown op '", op_, "'; register it with ir::register_op first"));
  bool takes_attrs = static_cast<bool>(info_->print_attrs);
  if (takes_attrs && !attrs_) throw Error(cat("node '", op_, "' needs attributes but got none"));
  if (!takes_attrs && attrs_) throw Error(cat("node '", op_, "' takes no attributes but got some"));
  if (outputs_.empty()) throw Error(cat("node '", op_, "' has no outputs; every node defines at least one value"));
  for (char c : scope_)
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\')
      throw Error(cat("node '", op_, "': scope '", scope_, "' contains a control character, quote or backslash"));
  for (const auto& g : subgraphs_)
    if (!g) throw Error(cat("node '", op_, "': a sub-graph is null"));
  if (needs_token(info_->effect)) {
    auto has_token = [](const std::vector<Type>& ts) {
      for (const auto& t : ts)
        if (is_token(t)) return true;
      return false;
    };
    // Ordered effects are chained through tokens, so passes can never reorder or drop them;
    // the token input is checked with the input types (builder, verifier).
    if (!has_token(outputs_))
      throw Error(cat("node '", op_, "' has an ordered effect but returns no token; add a token output"));
  }
}

bool Node::operator==(const Node& o) const {
  if (op_ != o.op_ || inputs_ != o.inputs_ || outputs_ != o.outputs_ || scope_ != o.scope_) return false;
  if (!attrs_ != !o.attrs_) return false;
  if (attrs_ && !info_->equal_attrs(attrs_.get(), o.attrs_.get())) return false;
  if (subgraphs_.size() != o.subgraphs_.size()) return false;
  for (size_t i = 0; i < subgraphs_.size(); ++i)
    if (!(*subgraphs_[i] == *o.subgraphs_[i])) return false;
  return true;
}

Graph::Graph(std::string name, std::vector<Param> params, std::vector<NodePtr> nodes, std::vector<Output> outputs)
    : name_(std::move(name)), params_(std::move(params)), nodes_(std::move(nodes)), outputs_(std::move(outputs)) {
  if (!is_identifier(name_)) throw Error(cat("graph name '", name_, "' is not an identifier"));
  for (const auto& n : nodes_)
    if (!n) throw Error(cat("graph '", name_, "' holds a null node"));
}

bool Graph::defines(ValueRef v) const {
  if (v.node == ValueRef::kParam) return v.index >= 0 && static_cast<size_t>(v.index) < params_.size();
  if (v.node < 0 || static_cast<size_t>(v.node) >= nodes_.size()) return false;
  return v.index >= 0 && static_cast<size_t>(v.index) < nodes_[v.node]->outputs().size();
}

const Type& Graph::type_of(ValueRef v) const {
  internal_check(defines(v), "Graph::type_of on a value the graph does not define");
  return v.node == ValueRef::kParam ? params_[v.index].type : nodes_[v.node]->outputs()[v.index];
}

bool Graph::operator==(const Graph& o) const {
  if (name_ != o.name_ || params_ != o.params_ || outputs_ != o.outputs_ || nodes_.size() != o.nodes_.size())
    return false;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!(*nodes_[i] == *o.nodes_[i])) return false;
  return true;
}

}  // namespace spore::ir
