// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// Attributes of softmax and log_softmax: the axis normalized over (non-negative).
struct SoftmaxAttrs {
  int64_t axis = 0;
  static constexpr auto fields() { return std::make_tuple(field("axis", &SoftmaxAttrs::axis)); }
};

/// exp(x - max) / sum(exp(x - max)) along attrs.axis; same shape and dtype (floating only).
const Primitive& softmax_primitive();
/// x - max - log(sum(exp(x - max))) along attrs.axis.
const Primitive& log_softmax_primitive();

}  // namespace spore::prims
