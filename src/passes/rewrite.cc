// SPDX-License-Identifier: Apache-2.0
#include "passes/rewrite.h"

#include "passes/effects.h"
#include "spore/error.h"

namespace spore::passes {
namespace {

// Bounds that only a rule set that undoes its own rewrites can reach.
constexpr int kMaxRewritesPerNode = 64;
constexpr int kMaxSweeps = 16;

class Engine {
 public:
  explicit Engine(std::span<const Rule> rules) : rules_(rules) {}

  // One topological sweep. A node's inputs are final when it is reached, and rules look only at
  // a node and its producers, so rewriting each node to its own fixed point reaches the graph's.
  ir::GraphPtr sweep(const ir::GraphPtr& g) {
    GraphEditor ed(g);
    for (size_t k = 0; k < g->nodes().size(); ++k) {
      const ir::NodePtr& old = g->nodes()[k];
      ir::NodePtr n = old;
      if (!n->subgraphs().empty()) {
        std::vector<ir::GraphPtr> graphs;
        for (const ir::GraphPtr& sg : n->subgraphs()) graphs.push_back(run(sg));
        n = with_subgraphs(n, std::move(graphs));
      }
      n = with_inputs(n, ed.map_inputs(*n));
      ed.bind_node(k, rewrite_node(ed, std::move(n)));
    }
    return ed.finish();
  }

  ir::GraphPtr run(const ir::GraphPtr& g) {
    ir::GraphPtr cur = g;
    for (int i = 0; i < kMaxSweeps; ++i) {
      ir::GraphPtr next = sweep(cur);
      if (next == cur) return cur;
      cur = std::move(next);
    }
    SPORE_ASSERT(false, "[rewrite] the rules did not reach a fixed point on @", g->name(), " after ", kMaxSweeps,
                 " sweeps; two rules undo each other");
    return cur;
  }

 private:
  std::vector<ir::ValueRef> rewrite_node(GraphEditor& ed, ir::NodePtr n) {
    bool fresh = false;  // n was made by a rule: check its types when adding it
    for (int step = 0; step < kMaxRewritesPerNode; ++step) {
      if (n->outputs().size() != 1 || !has_rule(n->op()) || !is_pure(*n)) break;
      std::optional<Replacement> r;
      for (const Rule& rule : rules_) {
        if (n->op() != rule.op) continue;
        r = rule.apply(Match{*n, ed});
        if (r && fits(ed, *n, *r)) break;
        r.reset();
      }
      if (!r) break;
      if (const auto* v = std::get_if<ir::ValueRef>(&*r)) return {*v};
      n = std::get<ir::NodePtr>(std::move(*r));
      fresh = true;
    }
    return fresh ? ed.add_checked(std::move(n)) : ed.add(std::move(n));
  }

  bool has_rule(const std::string& op) const {
    for (const Rule& rule : rules_)
      if (op == rule.op) return true;
    return false;
  }

  // The type guard: a replacement must have exactly the node's output type.
  static bool fits(const GraphEditor& ed, const ir::Node& n, const Replacement& r) {
    if (const auto* v = std::get_if<ir::ValueRef>(&r)) return ed.type_of(*v) == n.outputs()[0];
    const ir::Node& m = *std::get<ir::NodePtr>(r);
    return m.outputs().size() == 1 && m.outputs()[0] == n.outputs()[0];
  }

  std::span<const Rule> rules_;
};

}  // namespace

ir::GraphPtr rewrite(const ir::GraphPtr& g, std::span<const Rule> rules) { return Engine(rules).run(g); }

}  // namespace spore::passes
