// SPDX-License-Identifier: Apache-2.0
#include "passes/cse.h"

#include <functional>
#include <string>
#include <unordered_map>

#include "passes/effects.h"
#include "passes/graph_editor.h"
#include "prims/pool.h"

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

// A max pool without indices, and the same pool with them later over the same input (autodiff's
// backward of a max pool asks for the indices): the later node's first result is the earlier
// one's, so the earlier node computes both and the later one merges into it below. Keys: the
// input as first traced and the attributes printed with_indices=false.
std::unordered_map<std::string, size_t> pools_with_indices(const ir::Graph& g) {
  std::unordered_map<std::string, size_t> later;
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const ir::Node& n = *g.nodes()[k];
    if (n.op() != "pool2d" || n.inputs().size() != 1 || !n.attrs()) continue;
    const auto& a = *static_cast<const prims::Pool2dAttrs*>(n.attrs());
    if (!a.with_indices) continue;
    prims::Pool2dAttrs plain = a;
    plain.with_indices = false;
    const ir::ValueRef x = n.inputs()[0];
    later.emplace(std::to_string(x.node) + ":" + std::to_string(x.index) + ":" + n.info().print_attrs(&plain), k);
  }
  return later;
}

}  // namespace

ir::GraphPtr eliminate_common_subexpressions(const ir::GraphPtr& g) {
  GraphEditor ed(g);
  std::unordered_multimap<size_t, std::vector<ir::ValueRef>> seen;  // hash -> outputs of a kept node
  const auto with_indices = pools_with_indices(*g);
  for (size_t k = 0; k < g->nodes().size(); ++k) {
    ir::NodePtr n = map_subgraphs(g->nodes()[k], &eliminate_common_subexpressions);
    if (!with_indices.empty() && n->op() == "pool2d" && n->inputs().size() == 1 && n->attrs()) {
      const ir::ValueRef x = n->inputs()[0];
      const auto it = with_indices.find(std::to_string(x.node) + ":" + std::to_string(x.index) + ":" +
                                        n->info().print_attrs(n->attrs()));
      if (it != with_indices.end() && it->second < k) {
        // The pool with indices came first: its first result is this one.
        ed.bind_node(k, std::vector<ir::ValueRef>{ed.map({static_cast<int32_t>(it->second), 0})});
        continue;
      }
      if (it != with_indices.end()) {
        // This pool computes the later one's values and indices (or merges into an earlier pool
        // that already does); its own result is the first. It keeps its own (the forward's)
        // scope, which profiles and exported node names show.
        const ir::Node& later = *g->nodes()[it->second];
        const ir::NodePtr both = std::make_shared<const ir::Node>(later.op(), later.attrs_ptr(), ed.map_inputs(*n),
                                                                  later.outputs(), n->scope());
        const size_t h = shallow_hash(*both);
        std::vector<ir::ValueRef> outs;
        for (auto [e, end] = seen.equal_range(h); e != end && outs.empty(); ++e)
          if (same_computation(*ed.producer(e->second[0]), *both)) outs = e->second;
        if (outs.empty()) {
          outs = ed.add(both);
          seen.emplace(h, outs);
        }
        ed.bind_node(k, std::span<const ir::ValueRef>(outs.data(), 1));
        continue;
      }
    }
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
