// SPDX-License-Identifier: Apache-2.0
#pragma once
// The emitted kernels' math helpers as C++ source (no libm, no #include): ports of the xsimd 8.1
// routines the loop interpreter's tile ops run (exp and erf, float and double), with the same
// constants, the same fma placement and the same range cut-offs, so that a compiled kernel
// agrees with the interpreter lane for lane up to the host compiler's rounding of what xsimd
// leaves to it.
#include <set>
#include <string>

namespace spore::codegen {

/// Source of the named helpers ("exp_f32", "erf_f64", ...) and of those they call, each a
/// `static inline` function `spore_<name>`; unknown names are an internal error.
std::string emit_math_helpers(const std::set<std::string>& names);

}  // namespace spore::codegen
