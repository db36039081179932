// SPDX-License-Identifier: Apache-2.0
#pragma once
// The elementwise rules are split by arity (unary.cc, binary.cc, ternary.cc); elementwise.cc's
// install_elementwise_rules() calls these and holds the few that fit none (cast, copy,
// masked_fill). Private to src/autodiff/rules.
#include "autodiff/rules/util.h"

namespace spore::autodiff {

void install_unary_rules();    // the unary float primitives and erfinv
void install_binary_rules();   // add ... atan2, floor_divide, remainder
void install_ternary_rules();  // where, clamp, lerp

namespace rules {

/// A weak 0 that takes the dtype of the tensor it meets (where(m, g, zero()) keeps g's dtype).
inline Tensor zero() { return ops::weak_scalar(0.0); }
inline Tensor lit(double v) { return ops::weak_scalar(v); }

/// g where keep, else 0: a mask that routes a cotangent (or tangent) and is not differentiated.
inline Tensor keep_where(const Tensor& keep, const Tensor& g) { return ops::where(keep, g, zero()); }

/// Rules of a primitive whose derivative is zero wherever it exists (floor, sign, floor_divide):
/// registered so that gradients pass through as zero instead of failing.
inline void zero_jvp(const JvpArgs&, std::span<Tensor>) {}
inline void zero_vjp(const VjpArgs&, std::span<Tensor>) {}

}  // namespace rules
}  // namespace spore::autodiff
