// SPDX-License-Identifier: Apache-2.0
#pragma once
// The IR interpreter: runs any Graph op by op through the one dispatch on the CPU kernels. It is
// the reference every compiled plan must match, and since it dispatches, running a graph under
// grad or jvp differentiates it with the same rules as eager code.
#include <functional>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "spore/tensor.h"

namespace spore::transforms {

/// Runs `g` on `inputs` (one per graph input, types checked) and returns its outputs.
std::vector<Tensor> interpret(const ir::Graph& g, std::span<const Tensor> inputs);

/// Sees every top-level node's inputs and outputs as they are computed (`spore compare` matches
/// outputs between two models, `spore info` prices each node); `k` is the index in g.nodes().
/// The observer may replace outputs (same types): later nodes read what it leaves, which is how
/// `spore compare` emulates storing every intermediate in a lower precision.
using NodeObserver = std::function<void(size_t k, const ir::Node& n, std::span<const Tensor> inputs,
                                        std::span<Tensor> outputs)>;
std::vector<Tensor> interpret(const ir::Graph& g, std::span<const Tensor> inputs, const NodeObserver& observe);

}  // namespace spore::transforms
