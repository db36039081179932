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
//           with `stack` (reverse mode's forward pass) the body returns (carries..., extras...)
//           and the node outputs (carries..., trip count int64[], each extra stacked over the
//           trips on a leading axis of the run-time size `trip_symbol`): a scan whose length the
//           data decides, its extras playing the ys (residuals, or the carries entering a trip)
//   scan:   (carries..., xs...)           graphs {body: (carries..., x slices...) -> (carries..., ys...)}
//           outputs (carries..., ys stacked on a new leading axis of size `length`; length -1:
//           the xs' leading size, known when the node runs, e.g. a while loop's trip count);
//           `reverse` walks the xs from the end (ys still indexed by position).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/primitive.h"
#include "ir/graph.h"

namespace spore::transforms {

/// How a node built for reverse mode passes its vjp's residuals out (control_flow_residuals.cc):
/// the node's outputs past `num_outputs` are residuals, and `bwd` are the graphs of its vjp that
/// take them. Valid only for the sub-graphs `fwd` it was built with (a transform that rewrites
/// the graphs drops it); not part of the text form, where such a node is an ordinary one with
/// more outputs.
struct ResidualPlan {
  size_t num_outputs = 0;
  size_t first_residual = 0;          // the first residual output (while: after its trip count)
  std::vector<int> wrt;               // operand positions (after the predicate/index; scan: inputs) the bwd graphs give cotangents of
  std::vector<ir::GraphPtr> fwd;      // the node's sub-graphs this plan belongs to
  std::vector<ir::GraphPtr> bwd;      // if/switch: one per branch; scan: the reversed body
  std::vector<int> invariant;         // scan: loop-invariant carries handed to the bwd scan as carries
};

struct ControlFlowAttrs {
  int64_t num_carry = 0;  // while: all inputs; scan: the carried prefix
  int64_t length = 0;     // scan: iterations
  bool reverse = false;   // scan
  bool stack = false;     // while: also output the trip count and the body's stacked extras
  std::string trip_symbol;  // while with stack: the symbol naming the trip count dimension
  /// while: 0 keeps every trip's residuals for reverse mode; k > 0 keeps the carries entering
  /// every k-th trip and recomputes each segment in the backward (control_flow_checkpoint.cc).
  int64_t checkpoint_every = 0;
  std::vector<ir::GraphPtr> graphs;  // the node's sub-graphs (printed as nested graphs, not fields)
  std::shared_ptr<const ResidualPlan> plan;  // set when built with residual outputs
  static constexpr auto fields() {
    return std::make_tuple(field("num_carry", &ControlFlowAttrs::num_carry), field("length", &ControlFlowAttrs::length),
                           field("reverse", &ControlFlowAttrs::reverse), field("stack", &ControlFlowAttrs::stack),
                           field("trip_symbol", &ControlFlowAttrs::trip_symbol),
                           optional_field("checkpoint_every", &ControlFlowAttrs::checkpoint_every));
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

/// A closed graph of `fn` over inputs of the given types (traced symbolically; the function may
/// use only its inputs and literals).
ir::GraphPtr trace_graph(const std::string& name, std::span<const TensorType> in,
                         const std::function<std::vector<Tensor>(std::span<const Tensor>)>& fn);

/// The node's plan when it belongs to the node's current sub-graphs, else null.
const ResidualPlan* plan_of(const ControlFlowAttrs& a);
/// For a node about to be traced while a tape inside the trace tracks some of its float
/// operands: the attributes of the same node that also outputs its vjp's residuals (if and
/// switch), or stacks them per step (scan, while). Null when no tape tracks an operand or when
/// `a` already has a plan.
std::shared_ptr<ControlFlowAttrs> with_residuals(const Primitive& p, const ControlFlowAttrs& a,
                                                 std::span<const Tensor> in);

/// Installs the jvp and vjp rules of if/switch/while/scan (called with the other rules).
void install_control_flow_rules();

/// Runs a control-flow primitive: recorded into the innermost symbolic trace when one is active,
/// else run now (its sub-graphs interpreted op by op).
std::vector<Tensor> call_control_flow(const Primitive& p, const ControlFlowAttrs& a, std::span<const Tensor> in);

}  // namespace spore::transforms
