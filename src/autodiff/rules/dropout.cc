// SPDX-License-Identifier: Apache-2.0
// Rules of dropout. The mask is a pure function of the key in the attributes and of the
// element index, so both rules apply the same primitive, same attributes, to the tangent or
// cotangent: y = mask * x / (1 - p) is linear in x. This stays exact where x is 0 (a saved
// output could not tell a dropped element from a kept zero), at p = 0, and to any order (the
// rule's own output is a dropout again).
//
// It is the one nn rule that calls a primitive rather than a public op: ops::dropout draws a
// fresh key from the generator, and no public op takes an explicit one.
#include "autodiff/rules/nn_parts.h"
#include "prims/dropout.h"
#include "runtime/dispatch.h"

namespace spore::autodiff {
namespace {

using prims::DropoutAttrs;

Tensor same_mask(const void* attrs, const Tensor& t) {
  return runtime::call(prims::dropout_primitive(), *static_cast<const DropoutAttrs*>(attrs), {t});
}

void dropout_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = same_mask(a.attrs, a.tangents[0]);
}

void dropout_vjp(const VjpArgs& a, std::span<Tensor> in) { in[0] = same_mask(a.attrs, a.cotangents[0]); }

}  // namespace

void install_dropout_rules() { def_rules(prims::dropout_primitive(), {}, dropout_jvp, dropout_vjp); }

}  // namespace spore::autodiff
