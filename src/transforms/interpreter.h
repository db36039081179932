// SPDX-License-Identifier: Apache-2.0
#pragma once
// The IR interpreter: runs any Graph op by op through the one dispatch on the CPU kernels. It is
// the reference every compiled plan must match, and since it dispatches, running a graph under
// grad or jvp differentiates it with the same rules as eager code.
#include <span>
#include <vector>

#include "ir/graph.h"
#include "spore/tensor.h"

namespace spore::transforms {

/// Runs `g` on `inputs` (one per graph input, types checked) and returns its outputs.
std::vector<Tensor> interpret(const ir::Graph& g, std::span<const Tensor> inputs);

}  // namespace spore::transforms
