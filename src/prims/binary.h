// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "backends/cpu/binary_math.h"
#include "core/primitive.h"

namespace spore::prims {

/// add, sub, mul, div, maximum, minimum, pow, atan2: both inputs share one dtype (the public op
/// promoted them); the output has it too. div and atan2 are defined for floats only.
const Primitive& binary_primitive(cpu::BinaryOp op);

}  // namespace spore::prims
