// SPDX-License-Identifier: Apache-2.0
#include "passes/dce.h"

#include "passes/effects.h"
#include "passes/graph_editor.h"

namespace spore::passes {

ir::GraphPtr eliminate_dead_code(const ir::GraphPtr& g) {
  const auto& nodes = g->nodes();
  std::vector<bool> live(nodes.size(), false);
  auto use = [&](ir::ValueRef v) {
    if (v.node != ir::ValueRef::kParam) live[static_cast<size_t>(v.node)] = true;
  };
  for (const ir::Output& o : g->outputs()) use(o.value);
  // Uses come after definitions, so one backward sweep sees every use of a node before the node.
  for (size_t k = nodes.size(); k-- > 0;) {
    if (!live[k] && !is_removable(*nodes[k])) live[k] = true;
    if (live[k])
      for (ir::ValueRef v : nodes[k]->inputs()) use(v);
  }
  GraphEditor ed(g);
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (!live[k]) continue;
    ir::NodePtr n = map_subgraphs(nodes[k], &eliminate_dead_code);
    ed.bind_node(k, ed.add(with_inputs(n, ed.map_inputs(*n))));
  }
  return ed.finish();
}

}  // namespace spore::passes
