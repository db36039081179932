// SPDX-License-Identifier: Apache-2.0
#pragma once
// Inference batch_norm on channels-last tensors (N, C, *) stored as (N, *, C): what a compiled
// plan hands it when its layout pass keeps conv activations channels-last (passes/plan_layout.h).
// The tensor is then rows of C contiguous channels, each normalized with per-channel vectors.
#include <span>

#include "core/primitive.h"
#include "prims/batch_norm.h"

namespace spore::prims {

/// Whether `b` is stored channels-last: its strides are channels_last_strides of its shape.
bool stored_channels_last(const Buffer& b);

/// Inference batch norm of channels-last float32/float64 x into channels-last y (attrs with
/// training false; inputs and outputs as the primitive's).
void batch_norm_channels_last(const BatchNormAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out);

}  // namespace spore::prims
