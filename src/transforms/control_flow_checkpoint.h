// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reverse mode of a while with WhileOptions::checkpoint_every = k (spore/control_flow.h):
// checkpoints every k-th trip, recomputation of the rest (control_flow_checkpoint.cc).
#include <memory>
#include <span>

#include "core/primitive.h"
#include "transforms/control_flow.h"

namespace spore::transforms {

/// The node a tape differentiates (control_flow_residuals.cc): a stacking while over segments of
/// at most k trips that outputs the changing carries entering each segment as its residuals; its
/// plan's backward is the reversed scan over them that recomputes one segment a step.
std::shared_ptr<ControlFlowAttrs> checkpointed_loop(const ControlFlowAttrs& a, std::span<const Tensor> in);

/// The vjp of a checkpointed while that was not built with residuals (read back from text or a
/// model file): the segment loop runs again to make the checkpoints, then the same reversed scan.
/// False when the loop has nothing to checkpoint (every carry passes through unchanged).
bool while_vjp_checkpointed(const VjpArgs& a, std::span<Tensor> in_ct);

}  // namespace spore::transforms
