// SPDX-License-Identifier: Apache-2.0
#pragma once
// The batching interpreter behind vmap (shared/ARCHITECTURE.md, "Nesting": vmap traces
// symbolically). vmap traces the function once on per-example types; this runs that graph on
// the real, batched values: each node's primitive gets its vmap rule called with the batched
// inputs, and the rule emits ordinary ops through the one dispatch. So an outer grad's tape
// records them (grad of vmap), an outer jit's trace records them (jit of vmap), and a grad
// traced into the graph (vmap of grad) is batched like any other op: per-example gradients.
//
// Canonical form: a batched value has its batch axis at 0; an unbatched value is the same for
// every lane and keeps its per-example shape. Nodes whose inputs are all unbatched run as they
// are (dispatch, or the control-flow call), so loop-invariant work is done once.
#include <span>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "spore/tensor.h"

namespace spore::transforms {

/// A value under vmap: `t` is batched along axis 0 (size = the batch) or shared by every lane.
/// `ragged` (bool (B, T), rarely set) marks a stack whose lanes have different lengths along
/// axis 1: a while loop's per-iteration carries when lanes ran different trip counts. Entry
/// (b, t) exists when ragged[b][t]; the others are padding (the lane's frozen carry). Scans over
/// such stacks (the loop's reverse pass) skip the padding; other ops see padded values.
struct BatchedValue {
  BatchedValue() = default;
  BatchedValue(Tensor t_, bool batched_, Tensor ragged_ = {})
      : t(std::move(t_)), batched(batched_), ragged(std::move(ragged_)) {}
  Tensor t;
  bool batched = false;
  Tensor ragged;
};

/// Runs the per-example graph `g` on `inputs` (one per graph input). Outputs keep the rules'
/// batchedness: an output no batched input reaches stays unbatched.
std::vector<BatchedValue> run_batched(const ir::Graph& g, std::span<const BatchedValue> inputs, int64_t batch);

/// Which outputs of `g` may be batched when the inputs flagged in `batched` are: an output is
/// batched when any batched input reaches it (so a superset of what run_batched gives; loops
/// use it to fix their carries' batchedness before running).
std::vector<bool> batched_outputs(const ir::Graph& g, const std::vector<bool>& batched);

/// `v` batched along axis 0 with `batch` lanes: an unbatched value is broadcast (a view).
Tensor materialize(const BatchedValue& v, int64_t batch);

}  // namespace spore::transforms
