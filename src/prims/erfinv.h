// SPDX-License-Identifier: Apache-2.0
#pragma once
// erfinv and the inverse normal CDF in double precision (also used by truncated_normal).
#include "core/primitive.h"

namespace spore::prims {

/// The inverse of the standard normal CDF, Phi^-1(p), by Wichura's AS241 (PPND16), accurate to
/// about 1e-16 relative. p = 0 gives -inf, p = 1 gives +inf, p outside [0, 1] or NaN gives NaN.
double ndtri(double p);

/// erfinv(x) to float64 accuracy: an AS241 start refined by Newton steps on std::erf (std::erfc
/// near +-1, where 1 - |x| is exact). erfinv(+-1) = +-inf; |x| > 1 or NaN gives NaN.
double erfinv_f64(double x);

/// The erfinv primitive: one float input, same dtype out (16-bit floats go through float32).
const Primitive& erfinv_primitive();

}  // namespace spore::prims
