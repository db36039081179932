// SPDX-License-Identifier: Apache-2.0
#pragma once
// Control-flow sub-graphs (if/switch branches, while's cond and body, scan's body) as plans.
// Inside a plan's control-flow step (runtime::tls_plan_control_flow), a sub-graph runs as a
// plan lowered once per sub-graph and input types and kept for the process: fused kernels,
// arena, no per-op dispatch, once per trip. Elsewhere (PyNative, where open tapes must see the
// ops; the interpreter) and for sub-graphs the lowering refuses (values of run-time shape), it
// is interpreted op by op.
#include <span>
#include <vector>

#include "ir/graph.h"
#include "spore/tensor.h"

namespace spore::transforms {

/// `g` on `inputs`: through its plan inside a plan's control-flow step, else interpreted
/// (always with SPORE_SUBGRAPH_PLANS=0).
std::vector<Tensor> run_subgraph(const ir::GraphPtr& g, std::span<const Tensor> inputs);

/// How many sub-graph plans were lowered so far (tests).
int64_t subgraph_plans_lowered();

}  // namespace spore::transforms
