// SPDX-License-Identifier: Apache-2.0
#pragma once
// Control flow as primitives (shared/ARCHITECTURE.md, "Graph"): if, switch, while and scan hold
// closed sub-graphs. In PyNative the public functions (spore/control_flow.h) run plain C++
// control flow, so tapes record the path taken; under a symbolic trace they become these nodes.
// Running a node (the interpreter, or a graph inside a trace) interprets its sub-graphs through
// dispatch, so a tape differentiates the path the data takes.
//
// Operand layouts:
//   if:     (pred, operands...)           graphs {true_branch, false_branch}: operands -> outs
//   switch: (index, operands...)          graphs {branch_0 ... branch_n-1}; index clamped
//   while:  (carries...)                  graphs {cond: carries -> bool[], body: carries -> carries}
//   scan:   (carries..., xs...)           graphs {body: (carries..., x slices...) -> (carries..., ys...)}
//           outputs (carries..., ys stacked on a new leading axis of size `length`);
//           `reverse` walks the xs from the end (ys still indexed by position).
#include <vector>

#include "core/primitive.h"
#include "ir/graph.h"

namespace spore::transforms {

struct ControlFlowAttrs {
  int64_t num_carry = 0;  // while: all inputs; scan: the carried prefix
  int64_t length = 0;     // scan: iterations
  bool reverse = false;   // scan
  std::vector<ir::GraphPtr> graphs;  // the node's sub-graphs (printed as nested graphs, not fields)
  static constexpr auto fields() {
    return std::make_tuple(field("num_carry", &ControlFlowAttrs::num_carry), field("length", &ControlFlowAttrs::length),
                           field("reverse", &ControlFlowAttrs::reverse));
  }
};

const Primitive& if_primitive();
const Primitive& switch_primitive();
const Primitive& while_primitive();
const Primitive& scan_primitive();
bool is_control_flow(const Primitive& p);

/// The sub-graphs of a node's attributes (empty for ordinary primitives).
std::vector<ir::GraphPtr> subgraphs_of(const Primitive& p, const void* attrs);
/// A control-flow node's attributes with its sub-graphs put back (the text form keeps them
/// apart); other ops' attributes are returned as they are.
std::shared_ptr<const void> attrs_with_subgraphs(const Primitive& p, const void* attrs,
                                                 const std::vector<ir::GraphPtr>& graphs);
/// Output types of a control-flow node; throws a clear error when the sub-graphs disagree
/// (branches returning different types, a loop body changing a carried type).
std::vector<TensorType> control_flow_types(const Primitive& p, const ControlFlowAttrs& a,
                                           std::span<const TensorType> in);

/// Runs a control-flow primitive: recorded into the innermost symbolic trace when one is active,
/// else run now (its sub-graphs interpreted op by op).
std::vector<Tensor> call_control_flow(const Primitive& p, const ControlFlowAttrs& a, std::span<const Tensor> in);

}  // namespace spore::transforms
