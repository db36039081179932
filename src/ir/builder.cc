// SPDX-License-Identifier: Apache-2.0
#include "ir/builder.h"

#include "ir/error.h"
#include "ir/verifier.h"

namespace spore::ir {

GraphBuilder::GraphBuilder(std::string name) : name_(std::move(name)) {
  if (!is_identifier(name_)) throw Error(cat("graph name '", name_, "' is not an identifier"));
}

void GraphBuilder::set_role(int32_t index, Role role) {
  if (index < 0 || static_cast<size_t>(index) >= params_.size())
    throw Error(cat("graph '", name_, "': no input ", index, " to change the role of"));
  params_[static_cast<size_t>(index)].role = role;
}

ValueRef GraphBuilder::param(Type type, Role role) {
  if (role != Role::Data && is_token(type))
    throw Error(cat("graph '", name_, "': a token parameter must have role data, not ", role_name(role)));
  params_.push_back({std::move(type), role});
  return {ValueRef::kParam, static_cast<int32_t>(params_.size() - 1)};
}

void GraphBuilder::check_defined(ValueRef v, const std::string& what) const {
  bool ok = v.node == ValueRef::kParam
                ? v.index >= 0 && static_cast<size_t>(v.index) < params_.size()
                : v.node >= 0 && static_cast<size_t>(v.node) < nodes_.size() && v.index >= 0 &&
                      static_cast<size_t>(v.index) < nodes_[v.node]->outputs().size();
  if (!ok)
    throw Error(cat("graph '", name_, "': ", what, " refers to value (", v.node, ", ", v.index,
                    "), which this builder has not defined; sub-graph values belong to their own builder"));
}

std::vector<ValueRef> GraphBuilder::add(const std::string& op, std::shared_ptr<const void> attrs,
                                        std::vector<ValueRef> inputs, std::vector<Type> outputs, std::string scope,
                                        std::vector<GraphPtr> subgraphs) {
  std::vector<Type> in_types;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_defined(inputs[i], cat("input ", i, " of '", op, "'"));
    in_types.push_back(type_of(inputs[i]));
  }
  auto node = std::make_shared<const Node>(op, std::move(attrs), std::move(inputs), std::move(outputs),
                                           std::move(scope), std::move(subgraphs));
  // Sub-graphs may come from anywhere (a pass, a parser), not only from a verified build().
  for (const auto& sub : node->subgraphs()) verify_nested(*sub);
  check_node(*node, in_types);
  nodes_.push_back(node);
  std::vector<ValueRef> outs;
  for (size_t k = 0; k < node->outputs().size(); ++k)
    outs.push_back({static_cast<int32_t>(nodes_.size() - 1), static_cast<int32_t>(k)});
  return outs;
}

ValueRef GraphBuilder::add1(const std::string& op, std::shared_ptr<const void> attrs, std::vector<ValueRef> inputs,
                            Type output, std::string scope, std::vector<GraphPtr> subgraphs) {
  return add(op, std::move(attrs), std::move(inputs), {std::move(output)}, std::move(scope), std::move(subgraphs))[0];
}

void GraphBuilder::output(ValueRef v, std::optional<int32_t> updates) {
  check_defined(v, cat("output ", outputs_.size()));
  outputs_.push_back({v, updates});
}

const Type& GraphBuilder::type_of(ValueRef v) const {
  check_defined(v, "type_of");
  return v.node == ValueRef::kParam ? params_[v.index].type : nodes_[v.node]->outputs()[v.index];
}

GraphPtr GraphBuilder::build() {
  auto g = std::make_shared<const Graph>(name_, params_, nodes_, outputs_);
  verify(*g);  // aliases and sub-graphs are only checkable on the whole graph
  return g;
}

}  // namespace spore::ir
