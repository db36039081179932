// SPDX-License-Identifier: Apache-2.0
#pragma once
// Registering vmap rules, and the helpers they share. One rules file per family under
// src/transforms/vmap_rules/ with an install function listed in install_vmap_rules().
//
// The rule contract (core/primitive.h, VmapRule), in vmap's canonical form:
//  - in_axes[i] is 0 (input i is batched along its leading axis; every batched input has the
//    same batch size) or -1 (input i is the same for every lane and has its per-example shape);
//    at least one input is batched;
//  - the rule fills `out` (one tensor per output of the primitive) and `out_axes` (the batch
//    axis of each output, or -1 for an output that is the same for every lane); the interpreter
//    moves any other axis to 0;
//  - the rule emits only ops through the one dispatch (public ops, or runtime::dispatch of a
//    primitive), never kernels, so outer tapes and traces record it: grad of vmap, jit of vmap
//    and vmap of vmap need no special code;
//  - output i of lane b equals the primitive applied to lane b of the inputs (the interpreter
//    checks shapes and dtypes against the traced graph).
//
// A primitive without a rule runs by the loop fallback (vmap_by_loop): lane by lane, stacked.
// It is correct but slow; the registry report lists which primitives use it.
//
// Randomness: random primitives carry their key in their attributes, so under vmap every lane
// draws the same numbers (as JAX with an unbatched key): a no-input draw (uniform, normal, ...)
// is unbatched and broadcasts; dropout applies one mask, drawn for the per-example shape, to
// every lane; bernoulli with batched probabilities compares every lane against the same draws.
// For independent lanes, draw outside vmap with the batch shape and pass the draws in batched.
//
// In-place ops: none are primitives, so no traced graph holds one. The public in-place updates
// (copy_, add_, mul_, fill_) refuse traced tensors, so inside vmap they are an error that says
// to return the new value instead; batch_norm's running-statistics update is an eager write the
// public op skips under a trace, so it does not happen inside vmap.
#include <string>
#include <string_view>
#include <vector>

#include "core/primitive.h"
#include "runtime/dispatch.h"
#include "spore/ops.h"
#include "transforms/vmap_interpreter.h"

namespace spore::transforms::vmap_rules {

inline constexpr int kNotBatched = -1;

/// Sets a primitive's vmap rule.
void def_vmap(std::string_view prim, VmapRule rule);
void def_vmap(const Primitive& prim, VmapRule rule);

/// Runs every family's install function once (vmap calls it; tests call it to inspect the
/// registry).
void install_vmap_rules();

void install_elementwise_vmap_rules();  // unary, binary, ternary, compare, divmod, predicates, cast/copy, masked_fill
void install_reduction_vmap_rules();    // reduce_*, var/std/logsumexp, argmax/argmin, cumsum/cumprod, softmax, sort/topk
void install_shape_vmap_rules();        // views, concat, pad/flip/roll, gather/scatter, tri, one_hot, embedding
void install_nn_vmap_rules();           // matmul, conv, pool, interpolate, norms, losses
void install_random_vmap_rules();       // dropout, bernoulli (lanes share numbers)
void install_control_flow_vmap_rules();  // if, switch, while, scan

/// The control-flow primitives (if, switch, while, scan): batched on the interpreter's values,
/// so ragged stacks reach the scans that consume them. Their VmapRule slot holds an adapter;
/// is_control_flow_rule tells the interpreter to call this instead.
std::vector<BatchedValue> vmap_control_flow(const Primitive& p, const void* attrs, std::span<const BatchedValue> in,
                                            int64_t batch);
bool is_control_flow_rule(VmapRule rule);

/// The fallback: runs the primitive once per lane (lane b of each batched input) and stacks the
/// outputs. Registered explicitly where a real rule would not pay (bernoulli, nonzero).
void vmap_by_loop(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                  std::vector<Tensor>& out, std::vector<int>& out_axes);

/// One line per primitive (rule, loop, or "no inputs": never batched) and the totals.
std::string registry_report();
/// Primitives with tensor inputs that have no rule of their own (they run by the loop).
std::vector<std::string> primitives_using_loop();

// ---- helpers for rules ----------------------------------------------------------------------

/// The batch size: the leading extent of the first batched input.
int64_t batch_size(std::span<const Tensor> in, std::span<const int> in_axes);
/// The per-example rank of an input.
inline int64_t example_rank(const Tensor& t, int axis) { return t.dim() - (axis >= 0 ? 1 : 0); }
/// A batched tensor (B, s...) as (B, 1, ..., 1, s...) with per-example rank `rank`, so it
/// broadcasts against per-example operands of that rank the way the lane's value would.
Tensor lift(const Tensor& t, int64_t rank);
/// Input i batched along axis 0: an unbatched input is broadcast to (B, s...) (a view).
Tensor batched(const Tensor& t, int axis, int64_t batch);
/// (B, n, rest...) -> (B * n, rest...) and back: folds the vmap batch into a leading dimension
/// the primitive already has (N of conv, pool, losses).
Tensor fold(const Tensor& t);
Tensor unfold(const Tensor& t, int64_t batch);
/// Dispatches a primitive; returns every output.
std::vector<Tensor> call(const Primitive& p, const void* attrs, std::span<const Tensor> in);
/// Shifts normalized axes past the batch axis.
template <class V>
V shifted(V axes) {
  for (auto& a : axes) a += 1;
  return axes;
}
/// All outputs batched along axis 0.
inline void all_batched(const std::vector<Tensor>& out, std::vector<int>& out_axes) { out_axes.assign(out.size(), 0); }

}  // namespace spore::transforms::vmap_rules
