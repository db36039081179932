// SPDX-License-Identifier: Apache-2.0
#include "passes/hoist_updates.h"

#include <algorithm>

#include "passes/effects.h"
#include "passes/graph_editor.h"

namespace spore::passes {
namespace {
// The most parameters one update node may write through its results (Adam with amsgrad writes
// a parameter and four states).
constexpr size_t kMaxWrites = 8;

// True when the node has results and each is a tensor of one element (a hyper-parameter's
// value, or any one-element value such as a single reduction of a weight).
bool scalar_results(const ir::Node& nd) {
  if (nd.outputs().empty()) return false;
  for (const ir::Type& t : nd.outputs()) {
    const auto* tt = std::get_if<ir::TensorType>(&t);
    if (!tt) return false;
    for (const ir::Dim& d : tt->shape)
      if (!d.is_const() || d.value() != 1) return false;
  }
  return true;
}
}  // namespace

ir::GraphPtr hoist_updates(const ir::GraphPtr& g) {
  const auto& nodes = g->nodes();
  const auto n = static_cast<int64_t>(nodes.size());
  if (n == 0) return g;
  // Which results reach only state-update outputs (directly or through other such nodes), and
  // how many parameters they write that way, up to kMaxWrites + 1. A training step's whole
  // backward reaches only state outputs too, but each of its nodes reaches the parameters of
  // every layer before it; an optimizer's arithmetic reaches one parameter and its state.
  std::vector<char> other_use(nodes.size(), 0);
  std::vector<std::vector<int32_t>> reach(nodes.size());
  auto add_reach = [](std::vector<int32_t>& to, int32_t j) {
    if (to.size() <= kMaxWrites && std::find(to.begin(), to.end(), j) == to.end()) to.push_back(j);
  };
  for (const ir::Output& o : g->outputs()) {
    if (o.value.node == ir::ValueRef::kParam) continue;
    const auto i = static_cast<size_t>(o.value.node);
    if (o.updates) add_reach(reach[i], *o.updates);
    else other_use[i] = 1;
  }
  std::vector<char> update(nodes.size(), 0);
  // Uses come after definitions: one backward sweep sees every user of a node before the node.
  for (int64_t k = n; k-- > 0;) {
    const ir::Node& nd = *nodes[static_cast<size_t>(k)];
    const auto i = static_cast<size_t>(k);
    update[i] = !other_use[i] && !reach[i].empty() && reach[i].size() <= kMaxWrites && is_pure(nd);
    for (ir::ValueRef v : nd.inputs()) {
      if (v.node == ir::ValueRef::kParam) continue;
      const auto d = static_cast<size_t>(v.node);
      if (!update[i]) other_use[d] = 1;
      else
        for (int32_t j : reach[i]) add_reach(reach[d], j);
    }
  }
  // One-element values of graph inputs alone (of any role; through other such values) that are
  // no update node themselves but that an update reads go first of all. The case: a scheduled
  // momentum cast to the parameters' dtype once (CSE'd) and read by every update, so by more
  // than one update node may serve. Traced with the first update, after the whole backward, it
  // would hold every update, and every weight gradient that goes with one, to the step's end,
  // and with them the activations those gradients read.
  std::vector<char> front(nodes.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    const auto i = static_cast<size_t>(k);
    const ir::Node& nd = *nodes[i];
    // A fused group of scalars (fusion runs first at level 2) moves as its body would; is_pure
    // looks into sub-graphs.
    if (update[i] || !is_pure(nd) || !scalar_results(nd)) continue;
    front[i] = std::all_of(nd.inputs().begin(), nd.inputs().end(), [&](ir::ValueRef v) {
      return v.node == ir::ValueRef::kParam || front[static_cast<size_t>(v.node)];
    });
  }
  // Only those an update reads (directly or through another such scalar) move; the rest keep
  // their place.
  std::vector<char> feeds_update(nodes.size(), 0);
  for (int64_t k = n; k-- > 0;) {
    const auto i = static_cast<size_t>(k);
    front[i] = front[i] && feeds_update[i];
    if (!update[i] && !front[i]) continue;
    for (ir::ValueRef v : nodes[i]->inputs())
      if (v.node != ir::ValueRef::kParam) feeds_update[static_cast<size_t>(v.node)] = 1;
  }
  // The parameters each update node writes (through an output), and each parameter's readers.
  std::vector<std::vector<int32_t>> writes(nodes.size());
  for (const ir::Output& o : g->outputs())
    if (o.updates && o.value.node != ir::ValueRef::kParam && update[static_cast<size_t>(o.value.node)])
      writes[static_cast<size_t>(o.value.node)].push_back(*o.updates);
  std::vector<std::vector<int64_t>> readers(g->params().size());
  for (int64_t k = 0; k < n; ++k)
    for (ir::ValueRef v : nodes[static_cast<size_t>(k)]->inputs())
      if (v.node == ir::ValueRef::kParam) readers[static_cast<size_t>(v.index)].push_back(k);
  // anchor[k]: the other node an update node goes right after (-1: before every other node);
  // n: it stays at the end, in its original order. Anchors only grow, so the two sweeps below
  // repeat until none moves: a node that writes no parameter goes with its first user (made any
  // earlier, its result would only wait; a node of parameters alone would go first of all), and
  // a writer of parameter j then follows that node again if it reads j.
  std::vector<int64_t> anchor(nodes.size(), -1);
  for (bool moved = true; moved;) {
    moved = false;
    for (int64_t k = 0; k < n; ++k) {
      const auto i = static_cast<size_t>(k);
      if (!update[i]) continue;
      int64_t a = anchor[i];
      auto after = [&](int64_t d) {
        const auto di = static_cast<size_t>(d);
        if (!front[di]) a = std::max(a, update[di] ? anchor[di] : d);
      };
      for (ir::ValueRef v : nodes[i]->inputs())
        if (v.node != ir::ValueRef::kParam) after(v.node);
      for (int32_t j : writes[i])
        for (int64_t r : readers[static_cast<size_t>(j)]) {
          if (r == k || front[static_cast<size_t>(r)]) continue;  // a front node reads it first
          // A later update node reading the old value: keep this one where it is relative to it.
          if (r > k && update[static_cast<size_t>(r)]) a = n;
          else if (r < k) after(r);
          else a = std::max(a, r);
        }
      moved = moved || a != anchor[i];
      anchor[i] = a;
    }
    std::vector<int64_t> first_user(nodes.size(), n);
    for (int64_t k = n; k-- > 0;) {
      const auto i = static_cast<size_t>(k);
      if (!update[i]) continue;
      if (writes[i].empty() && first_user[i] > anchor[i]) {
        anchor[i] = first_user[i];
        moved = true;
      }
      for (ir::ValueRef v : nodes[i]->inputs())
        if (v.node != ir::ValueRef::kParam && update[static_cast<size_t>(v.node)])
          first_user[static_cast<size_t>(v.node)] = std::min(first_user[static_cast<size_t>(v.node)], anchor[i]);
    }
  }
  GraphEditor ed(g);
  auto emit = [&](int64_t k) {
    const ir::NodePtr& nd = nodes[static_cast<size_t>(k)];
    ed.bind_node(static_cast<size_t>(k), ed.add(with_inputs(nd, ed.map_inputs(*nd))));
  };
  // Update nodes by anchor + 1 (0: first of all; n: after the last node), each in original order.
  std::vector<std::vector<int64_t>> after_node(nodes.size() + 1);
  for (int64_t k = 0; k < n; ++k)
    if (update[static_cast<size_t>(k)]) after_node[static_cast<size_t>(std::min(anchor[static_cast<size_t>(k)], n - 1) + 1)].push_back(k);
  for (int64_t k = 0; k < n; ++k)
    if (front[static_cast<size_t>(k)]) emit(k);
  for (int64_t k = 0; k <= n; ++k) {
    if (k > 0 && !update[static_cast<size_t>(k - 1)] && !front[static_cast<size_t>(k - 1)]) emit(k - 1);
    for (int64_t u : after_node[static_cast<size_t>(k)]) emit(u);
  }
  return ed.finish();
}

}  // namespace spore::passes
