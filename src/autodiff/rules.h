// SPDX-License-Identifier: Apache-2.0
#pragma once
// Registering jvp and vjp rules. Each family of primitives has one rules file under
// src/autodiff/rules/ with an install function listed in install_rules(); rules are written with
// public ops (spore/ops.h) so that the ops they emit are recorded by outer frames and every
// transform composes with every other to any depth.
//
// Conventions every rule follows (checked by the tape at run time and by tests/autodiff):
//  - a cotangent or tangent has exactly its primal's shape and dtype (sum over broadcast
//    dimensions, cast back from any wider compute dtype);
//  - an undefined tensor means zero: rules skip undefined tangents/cotangents and may leave an
//    output undefined rather than build zeros;
//  - a vjp rule fills in_cotangents[i] only where a.needs[i];
//  - a rule reads only the inputs/outputs its primitive declares in `residuals` (the tape keeps
//    nothing else alive); types of all of them are in a.in_types / a.out_types.
#include <string_view>

#include "core/primitive.h"

namespace spore::autodiff {

/// Sets a primitive's residual declaration and rules. Either rule may be null (a primitive
/// that is not differentiable in that mode); a zero-gradient primitive (floor, sign, argmax's
/// values) registers rules that leave everything undefined.
void def_rules(std::string_view prim, Residuals residuals, JvpRule jvp, VjpRule vjp);
/// Same, for a primitive given by reference.
void def_rules(const Primitive& prim, Residuals residuals, JvpRule jvp, VjpRule vjp);

/// Runs every family's install function once (called when the first frame opens; tests call it
/// to inspect the registry).
void install_rules();

// One per family (src/autodiff/rules/<family>.cc).
void install_elementwise_rules();  // unary, binary, ternary, cast/copy, compare, divmod, erfinv, predicates
void install_reduction_rules();    // reduce_*, logsumexp, var/std, argmax/argmin, cumsum/cumprod, softmax
void install_shape_rules();        // views, concat, pad, flip, roll, gather/scatter, sort/topk, tri, one_hot ...
void install_nn_rules();           // matmul, conv, pool, norms, embedding, interpolate, losses, dropout
void install_misc_rules();         // factories, random, stop_gradient

/// Residual helpers: bits for inputs/outputs.
constexpr uint32_t bit(int i) { return 1u << i; }

}  // namespace spore::autodiff
