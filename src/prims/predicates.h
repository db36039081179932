// SPDX-License-Identifier: Apache-2.0
#pragma once
// Unary predicates: any input dtype, bool output.
#include <cstdint>

#include "core/primitive.h"

namespace spore::prims {

/// isnan, isinf, isfinite (integers and bool: never NaN or Inf) and logical_not (x == 0).
enum class PredicateOp : uint8_t { isnan, isinf, isfinite, logical_not, kCount };

const Primitive& predicate_primitive(PredicateOp op);

}  // namespace spore::prims
