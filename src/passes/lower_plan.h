// SPDX-License-Identifier: Apache-2.0
#pragma once
// Lowering: an optimized graph to a runtime::Plan (runtime/plan.h) for one input signature.
// Types are inferred once for the concrete inputs, kernels chosen as dispatch would choose them
// and prepared once, views turned into strides and offsets, and the intermediates laid out in
// one arena by memory planning (plan_memory.h). A state output (`updates` j) is written straight
// into input j's buffer (donation) when every other read of input j comes first, or the step
// making it is an elementwise kernel that may write over input j in place; otherwise the plan
// returns it and the caller copies it back.
#include <memory>
#include <span>

#include "ir/graph.h"
#include "runtime/plan.h"

namespace spore::passes {

/// Lowers `g` for `inputs` (one per graph input; only their dtypes and shapes are used, and the
/// plan assumes contiguous inputs). Throws spore::Error for an op with no CPU kernel. With
/// `family` (made on first use) and a graph over one symbolic dimension, the plan shares the
/// memory layout and arena of the family's other sizes when it can (plan_family.h).
std::shared_ptr<runtime::Plan> lower_plan(const ir::Graph& g, std::span<const Tensor> inputs,
                                          std::shared_ptr<runtime::PlanFamily>* family = nullptr);

}  // namespace spore::passes
