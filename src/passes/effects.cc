// SPDX-License-Identifier: Apache-2.0
#include "passes/effects.h"

namespace spore::passes {
namespace {

template <class Ok>
bool all_nodes(const ir::Node& n, Ok ok) {
  if (!ok(n.info().effect)) return false;
  for (const ir::GraphPtr& g : n.subgraphs())
    for (const ir::NodePtr& m : g->nodes())
      if (!all_nodes(*m, ok)) return false;
  return true;
}

}  // namespace

bool is_pure(const ir::Node& n) {
  return all_nodes(n, [](ir::Effect e) { return e == ir::Effect::Pure; });
}

bool is_removable(const ir::Node& n) {
  return all_nodes(n, [](ir::Effect e) { return e == ir::Effect::Pure || e == ir::Effect::Random; });
}

}  // namespace spore::passes
