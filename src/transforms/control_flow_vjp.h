// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pieces of the control-flow vjp rules (control_flow_rules.cc) that the checkpointed while
// (control_flow_checkpoint.cc) shares.
#include <span>
#include <vector>

#include "core/primitive.h"
#include "ir/graph.h"
#include "spore/tensor.h"

namespace spore::transforms::cf_vjp {

/// The vjp of `g` (run by the interpreter) at `x`: cotangents for the positions `wrt` of x, given
/// cotangents for the float outputs of g (in order).
std::vector<Tensor> graph_vjp(const ir::Graph& g, std::span<const Tensor> x, const std::vector<int>& wrt,
                              std::span<const Tensor> out_cts);
/// Cotangents of a node's float outputs in [begin, end) (zeros where undefined), in output order.
std::vector<Tensor> float_cts(const VjpArgs& a, size_t begin, size_t end);

}  // namespace spore::transforms::cf_vjp
