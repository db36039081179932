// SPDX-License-Identifier: Apache-2.0
#pragma once
// How jit reaches the lowering to a compiled plan (src/passes/lower_plan.h), which sits above
// src/transforms in the include graph: lower_plan.cc registers itself here at start-up, as the
// pass pipeline does in graph_optimizer.h; unset, jit interprets its graphs.
#include <memory>
#include <span>

#include "ir/graph.h"
#include "runtime/plan.h"

namespace spore::transforms {

/// Lowers `g` for `inputs`; `family` (may be null; made on first use) lets the plans of one
/// graph over a symbolic dimension share a memory layout and arena.
using PlanLowerer = std::shared_ptr<runtime::Plan> (*)(const ir::Graph& g, std::span<const Tensor> inputs,
                                                       std::shared_ptr<runtime::PlanFamily>* family);
void set_plan_lowerer(PlanLowerer f);
/// The registered lowering, or null.
PlanLowerer plan_lowerer();

}  // namespace spore::transforms
