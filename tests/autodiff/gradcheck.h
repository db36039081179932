// SPDX-License-Identifier: Apache-2.0
#pragma once
// The checks run on each case of the gradient-check table (grad_cases.h). Each returns the list
// of its failures (empty: the case passes) rather than failing a test itself, so the tests can
// also confirm that every check catches a deliberately wrong rule (gradcheck_test.cc).
//
// Tolerances. A finite-difference reference along a direction d is the central difference
// D(h) = <w, F(x+hd) - F(x-hd)> / 2h, extrapolated as (4 D(h) - D(2h)) / 3 (error O(h^4)).
// E = |D(h) - D(2h)| / 3 estimates the error of D(h), a bound on the reference's (truncation and
// rounding both show up in it). The scale is S = sum |w * (F(x+hd) - F(x-hd)) / 2h|, the magnitude of the terms the
// directional derivative sums; no analytic value enters it, so a wrong rule cannot loosen its
// own tolerance. R = kUlps * eps * sum |w * F(x+hd)| / h bounds the rounding of D(h) (it is what
// remains where the derivative is zero). A value passes when
// |value - reference| <= fd_rtol * S + R + E; the reference itself is rejected (the case fails,
// saying so) when E > fd_rtol * S + R: a kink within the step, or a kernel that is not
// float64-accurate.
// Analytic values computed two ways (jvp against vjp; the four second-order products) agree
// to kAgreeRtol of the larger sum of |terms| of the two inner products plus sum |w * F(x)|:
// only rounding separates them.
#include <set>
#include <string>
#include <vector>

#include "autodiff/grad_cases.h"

namespace spore::gradcheck {

inline constexpr double kAgreeRtol = 1e-10;
/// Rounding allowed per evaluation of <w, F(x)>, in units of eps * sum |w * F(x)|.
inline constexpr double kUlps = 64;
/// Step of the first-order differences, times max(1, max |x|) of the input moved.
inline constexpr double kStep1 = 1e-6;
/// Step of the differences of the gradient (second order): larger, since the gradient carries
/// more rounding than the function.
inline constexpr double kStep2 = 1e-5;

/// Positions differentiated: case.wrt, or every floating input.
std::vector<int> positions(const GradCase& c);

/// Primitives recorded when `c` runs under a tape tracking its differentiated inputs.
std::set<std::string> recorded_primitives(const GradCase& c);

/// Each primitive in case.prims is recorded on the tape.
std::vector<std::string> check_coverage(const GradCase& c);
/// Per input: reverse mode (vjp with only that input) and forward mode (jvp with only its
/// tangent) against finite differences. Cases of order 0 are skipped.
std::vector<std::string> check_first_order(const GradCase& c);
/// All inputs at once: <w, J d> from one jvp equals <J^T w, d> from one vjp.
std::vector<std::string> check_jvp_vjp_agree(const GradCase& c);
/// When c.order >= 2: v^T H d of L = <w, fn> by reverse-over-reverse, forward-over-reverse,
/// reverse-over-forward and forward-over-forward, each against finite differences of the gradient
/// and against reverse-over-reverse.
std::vector<std::string> check_second_order(const GradCase& c);

}  // namespace spore::gradcheck
