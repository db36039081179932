// SPDX-License-Identifier: Apache-2.0
#pragma once
// Copying between strided buffers of one shape and dtype, in runs of the destination's memory
// order (the CPU elementwise loop): what ops::copy_ does into a dense destination.
#include "core/primitive.h"

namespace spore::prims {

/// True when `b` covers its elements' span without gaps or overlap, in some dim order
/// (row-major, channels-last, a permutation): a layout the elementwise loop writes in runs.
bool is_dense(const Buffer& b);

/// Copies `src` (any strides, 0 for broadcast dims) into the dense `dst` of the same shape and
/// dtype. The two must not overlap.
void strided_copy(const Buffer& src, const Buffer& dst);

}  // namespace spore::prims
