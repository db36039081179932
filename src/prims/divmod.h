// SPDX-License-Identifier: Apache-2.0
#pragma once
// Python-style division: floor_divide (rounds toward -inf) and remainder (sign of the divisor).
#include <cstdint>

#include "core/primitive.h"

namespace spore::prims {

enum class DivModOp : uint8_t { floor_divide, remainder, kCount };

/// Both inputs share one float or integer dtype (the op promoted them); the output has it too.
/// Integer division by zero throws spore::Error ("ZeroDivisionError", as PyTorch).
const Primitive& divmod_primitive(DivModOp op);

}  // namespace spore::prims
