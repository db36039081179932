// SPDX-License-Identifier: Apache-2.0
#pragma once
// Linearization of a closed graph: its vjp split into a forward part that also returns the
// residuals the backward needs, and a backward part that takes them. Control-flow nodes built for
// reverse mode use it to pass residuals out of the forward node (if/switch) or to stack them per
// iteration (scan), instead of recomputing the forward from the node's inputs.
//
// How: the graph is interpreted under a symbolic trace with a tape open (the ordinary autodiff,
// so every primitive's own vjp rule and residual declaration serve); the tape's saved tensors
// become extra outputs of the traced forward. The backward rebinds the same tape's saved tensors
// to the values it is handed and runs the tape backward in the caller's trace.
#include <functional>
#include <span>
#include <vector>

#include "core/primitive.h"
#include "ir/graph.h"

namespace spore::transforms {

struct Linearized {
  /// g's inputs -> (g's outputs..., residuals...).
  ir::GraphPtr fwd;
  std::vector<TensorType> residual_types;
  /// Emits (into the caller's trace) the cotangents of the inputs `wrt`, zeros where none
  /// arrive. `inputs` / `outputs`: g's inputs and outputs at the positions linearize was told
  /// to keep (others may be undefined); `residuals`: values of fwd's extra outputs; `cts`: one
  /// per output of g (undefined = zero; integer outputs take none).
  std::function<std::vector<Tensor>(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                                    std::span<const Tensor> residuals, std::span<const Tensor> cts)>
      backward;
};

/// Linearizes `g` (inputs of types `in`) for the cotangents of inputs `wrt` (float positions).
/// A saved tensor that is g's input i with keep_in[i], or its output j with keep_out[j], is read
/// from the backward's `inputs` / `outputs` rather than passed out as a residual.
Linearized linearize(const ir::Graph& g, std::span<const TensorType> in, std::span<const int> wrt,
                     const std::vector<bool>& keep_in, const std::vector<bool>& keep_out);

}  // namespace spore::transforms
