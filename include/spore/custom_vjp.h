// SPDX-License-Identifier: Apache-2.0
#pragma once
// User-defined derivatives and recomputation.
//  - custom_vjp(fwd, bwd): fwd(x) returns (y, residuals); grad through the function calls
//    bwd(residuals, cotangent of y) for the cotangent of x (MindSpore's Cell.bprop). The
//    backward's own ops are differentiated by outer transforms with the residuals as constants.
//    Under jit(grad(f)) and vmap(grad(f)) the forward and the backward are traced into the
//    graph. Forward mode (jvp) through it is an error, as in JAX, and so is grad of vmap(f)
//    (the custom node cannot be batched yet; vmap(grad(f)) works).
//  - checkpoint(fn): keeps only fn's inputs for the backward pass and recomputes fn there, with
//    the random generator rewound so dropout masks replay exactly. Under jit it runs inline.
#include <functional>
#include <utility>

#include "spore/tree.h"

namespace spore {

using TreeFn1 = std::function<TensorTree(const TensorTree&)>;
using ForwardWithResiduals = std::function<std::pair<TensorTree, TensorTree>(const TensorTree& x)>;
using CustomBackward = std::function<TensorTree(const TensorTree& residuals, const TensorTree& cotangent)>;

TreeFn1 custom_vjp(ForwardWithResiduals fwd, CustomBackward bwd);
TreeFn1 checkpoint(TreeFn1 fn);

}  // namespace spore
