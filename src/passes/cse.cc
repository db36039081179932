// SPDX-License-Identifier: Apache-2.0
#include "passes/cse.h"

#include <functional>
#include <unordered_map>

#include "passes/effects.h"
#include "passes/graph_editor.h"

namespace spore::passes {
namespace {

// Hashes what is cheap to hash; attributes and sub-graphs are compared only on a hash hit.
size_t shallow_hash(const ir::Node& n) {
  size_t h = std::hash<std::string>{}(n.op());
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (ir::ValueRef v : n.inputs()) {
    mix(static_cast<size_t>(static_cast<uint32_t>(v.node)));
    mix(static_cast<size_t>(v.index));
  }
  mix(n.outputs().size());
  mix(n.subgraphs().size());
  return h;
}

bool same_graph(const ir::Graph& a, const ir::Graph& b);

// Attribute structs compare floats with ==, which equates -0 and +0 (constant{f=-0} would
// become constant{f=0}); the exact text form tells them apart.
bool same_attrs(const ir::Node& a, const ir::Node& b) {
  if (!a.attrs() != !b.attrs()) return false;
  if (!a.attrs()) return true;
  const ir::OpInfo& info = a.info();
  return info.equal_attrs(a.attrs(), b.attrs()) && info.print_attrs(a.attrs()) == info.print_attrs(b.attrs());
}

bool same_computation(const ir::Node& a, const ir::Node& b) {
  if (a.op() != b.op() || a.inputs() != b.inputs() || a.outputs() != b.outputs() || !same_attrs(a, b)) return false;
  if (a.subgraphs().size() != b.subgraphs().size()) return false;
  for (size_t i = 0; i < a.subgraphs().size(); ++i)
    if (a.subgraphs()[i] != b.subgraphs()[i] && !same_graph(*a.subgraphs()[i], *b.subgraphs()[i])) return false;
  return true;
}

// Graph::operator== also compares names and scopes, which do not change what a graph computes.
bool same_graph(const ir::Graph& a, const ir::Graph& b) {
  if (a.params() != b.params() || a.outputs() != b.outputs() || a.nodes().size() != b.nodes().size()) return false;
  for (size_t k = 0; k < a.nodes().size(); ++k)
    if (!same_computation(*a.nodes()[k], *b.nodes()[k])) return false;
  return true;
}

}  // namespace

ir::GraphPtr eliminate_common_subexpressions(const ir::GraphPtr& g) {
  GraphEditor ed(g);
  std::unordered_multimap<size_t, std::vector<ir::ValueRef>> seen;  // hash -> outputs of a kept node
  for (size_t k = 0; k < g->nodes().size(); ++k) {
    ir::NodePtr n = map_subgraphs(g->nodes()[k], &eliminate_common_subexpressions);
    n = with_inputs(n, ed.map_inputs(*n));
    if (!is_pure(*n)) {
      ed.bind_node(k, ed.add(n));
      continue;
    }
    const size_t h = shallow_hash(*n);
    bool merged = false;
    for (auto [it, end] = seen.equal_range(h); it != end && !merged; ++it) {
      if (!same_computation(*ed.producer(it->second[0]), *n)) continue;
      ed.bind_node(k, it->second);
      merged = true;
    }
    if (merged) continue;
    auto outs = ed.add(n);
    ed.bind_node(k, outs);
    seen.emplace(h, std::move(outs));
  }
  return ed.finish();
}

}  // namespace spore::passes
