// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reverse mode of a while with WhileOptions::checkpoint_every = k (spore/control_flow.h):
// checkpoints every k-th trip, recomputation of the rest (control_flow_checkpoint.cc).
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/primitive.h"
#include "transforms/control_flow.h"

namespace spore::transforms {

/// The node a tape differentiates (control_flow_residuals.cc): a stacking while over segments of
/// at most k trips that outputs the changing carries entering each segment and its trip count as
/// its residuals; its plan's backward is the reversed scan over them that replays one segment a
/// step.
std::shared_ptr<ControlFlowAttrs> checkpointed_loop(const ControlFlowAttrs& a, std::span<const Tensor> in);

/// The vjp of a checkpointed while that was not built with residuals (read back from text or a
/// model file): the segment loop runs again to make the checkpoints, then the same reversed scan.
/// False when the loop has nothing to checkpoint (every carry passes through unchanged).
bool while_vjp_checkpointed(const VjpArgs& a, std::span<Tensor> in_ct);

/// Whether PyNative tapes (and no forward-mode frame or symbolic trace) are open: then a
/// checkpointed while runs as one recorded node.
bool reverse_tapes_open();

/// PyNative: a checkpointed while (not built for reverse mode yet) whose operands a tape tracks
/// runs as one node built to output its checkpoints, recorded on the tapes; returns its outputs
/// (the loop's carries). Empty when that does not apply (the caller runs the loop eagerly).
std::optional<std::vector<Tensor>> run_recorded_checkpointed(const ControlFlowAttrs& a, std::span<const Tensor> in);

}  // namespace spore::transforms
