// SPDX-License-Identifier: Apache-2.0
#pragma once
// How jit reaches the compiler. src/passes sits above src/transforms in the include graph (its
// passes use the IR bridge and the interpreter), so the pass pipeline registers itself here at
// start-up and jit calls it through this pointer; unset, graphs run as traced.
#include "ir/graph.h"

namespace spore::transforms {

using GraphOptimizer = ir::GraphPtr (*)(const ir::GraphPtr& g);
void set_graph_optimizer(GraphOptimizer f);
/// The registered optimizer, or null.
GraphOptimizer graph_optimizer();

}  // namespace spore::transforms
