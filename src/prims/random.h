// SPDX-License-Identifier: Apache-2.0
#pragma once
// Random primitives (Effect::Random). Each is a pure function of its key (seed, offset) and
// each output element's row-major index i: element i draws Philox block (counter = offset + i,
// key = seed), see backends/cpu/philox.h. So results never depend on threads or tiling. The key
// is in the attributes, or, in a jit graph, comes from one extra last input holding the
// generator state (prims/random_key.h): then a compiled graph draws on every call what PyNative
// draws on that call.
#include <cstdint>

#include "core/primitive.h"

namespace spore::prims {

/// uniform: [low, high). normal: mean + std * z. truncated_normal: N(mean, std) restricted to
/// [a, b]. bernoulli_scalar: 1 with probability p. `a`/`b` are unused where not named.
struct RandomFillAttrs {
  Shape shape;
  DType dtype = DType::Float32;
  double p0 = 0, p1 = 1;  // uniform: low, high; normal/truncated_normal: mean, std; bernoulli: p
  double a = 0, b = 0;    // truncated_normal: bounds
  uint64_t seed = 0, offset = 0;
  static constexpr auto fields() {
    return std::make_tuple(field("shape", &RandomFillAttrs::shape), field("dtype", &RandomFillAttrs::dtype),
                           field("p0", &RandomFillAttrs::p0), field("p1", &RandomFillAttrs::p1),
                           field("a", &RandomFillAttrs::a), field("b", &RandomFillAttrs::b),
                           field("seed", &RandomFillAttrs::seed), field("offset", &RandomFillAttrs::offset));
  }
};

/// bernoulli of a tensor of probabilities (output: p's shape and dtype).
struct RandomKeyAttrs {
  uint64_t seed = 0, offset = 0;
  static constexpr auto fields() {
    return std::make_tuple(field("seed", &RandomKeyAttrs::seed), field("offset", &RandomKeyAttrs::offset));
  }
};

/// randint: integers in [low, high), exactly uniform (Lemire's method with retries on the
/// Philox counter's high word). permutation: 0..n-1 ordered by random 64-bit keys.
struct RandIntAttrs {
  Shape shape;
  DType dtype = DType::Int64;
  int64_t low = 0, high = 1;
  uint64_t seed = 0, offset = 0;
  static constexpr auto fields() {
    return std::make_tuple(field("shape", &RandIntAttrs::shape), field("dtype", &RandIntAttrs::dtype),
                           field("low", &RandIntAttrs::low), field("high", &RandIntAttrs::high),
                           field("seed", &RandIntAttrs::seed), field("offset", &RandIntAttrs::offset));
  }
};

/// The draw element `i` of every random primitive makes: 1 with probability p (u < p, u a
/// 53-bit uniform from the element's block). Shared with dropout so its mask is a bernoulli.
bool bernoulli_draw(uint64_t seed, uint64_t offset, uint64_t i, double p);

const Primitive& uniform_primitive();           // RandomFillAttrs, no data inputs
const Primitive& normal_primitive();            // RandomFillAttrs, no data inputs
const Primitive& truncated_normal_primitive();  // RandomFillAttrs, no data inputs
const Primitive& bernoulli_scalar_primitive();  // RandomFillAttrs (p0 = p), no data inputs
const Primitive& bernoulli_primitive();         // RandomKeyAttrs, input: probabilities
const Primitive& randint_primitive();           // RandIntAttrs, no data inputs
const Primitive& permutation_primitive();       // RandIntAttrs (shape {n}), no data inputs

}  // namespace spore::prims
