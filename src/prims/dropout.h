// SPDX-License-Identifier: Apache-2.0
#pragma once
// Dropout as one Effect::Random primitive, so traces see one node whose mask is a pure function
// of its key: out[i] = bernoulli_draw(key, i, p) ? 0 : x[i] / (1 - p).
#include <cstdint>

#include "core/primitive.h"

namespace spore::prims {

/// p in [0, 1); (seed, offset) is the Philox key (in a jit graph: the delta from the key input
/// that follows x, see prims/random_key.h). The mask equals bernoulli(p) drawn with the
/// same key, so the vjp is this primitive applied to the cotangent with the same attributes.
struct DropoutAttrs {
  double p = 0.5;
  uint64_t seed = 0, offset = 0;
  static constexpr auto fields() {
    return std::make_tuple(field("p", &DropoutAttrs::p), field("seed", &DropoutAttrs::seed),
                           field("offset", &DropoutAttrs::offset));
  }
};

const Primitive& dropout_primitive();

}  // namespace spore::prims
