// SPDX-License-Identifier: Apache-2.0
#pragma once
// Gradient clipping with torch.nn.utils' semantics, written with ops so it also runs inside a
// compiled train step.
#include <vector>

#include "spore/tensor.h"

namespace spore::optim {

/// Scales every gradient in place by min(1, max_norm / (total_norm + 1e-6)), where total_norm is
/// the norm_type-norm of all gradients together (INFINITY for the max norm). Returns the total
/// norm (before clipping) as a 0-d tensor. Undefined gradients are skipped.
Tensor clip_grad_norm_(std::vector<Tensor>& grads, double max_norm, double norm_type = 2.0);

/// Clamps every gradient in place to [-clip, clip]. Undefined gradients are skipped.
void clip_grad_value_(std::vector<Tensor>& grads, double clip);

}  // namespace spore::optim
