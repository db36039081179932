// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// Rows of a table: inputs weight (V, D) of any dtype and int64 indices of any shape; output
/// indices.shape + (D,). An index outside [0, V) is an error naming it.
const Primitive& embedding_primitive();

}  // namespace spore::prims
