// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the elementwise primitives: unary.cc, binary.cc and ternary.cc by arity,
// and here the ones that copy values (cast, copy, masked_fill). Comparisons, logical and bitwise
// ops and the predicates (isnan ...) give non-float outputs, so they take no rules.
#include "autodiff/rules/elementwise_parts.h"
#include "prims/cast.h"

namespace spore::autodiff {
namespace {

using rules::zero;

// A cast is differentiable between float dtypes only: the cotangent goes back to the input's
// dtype; an integer or bool output carries no gradient (its tangent stays undefined).
void cast_jvp(const JvpArgs& a, std::span<Tensor> out) {
  const DType to = static_cast<const prims::CastAttrs*>(a.attrs)->dtype;
  if (a.tangents[0].defined() && is_floating(to)) out[0] = a.tangents[0].to(to);
}
void cast_vjp(const VjpArgs& a, std::span<Tensor> in) {
  if (is_floating(a.out_types[0].dtype)) in[0] = a.cotangents[0].to(a.in_types[0].dtype);
}

void copy_jvp(const JvpArgs& a, std::span<Tensor> out) { out[0] = a.tangents[0]; }
void copy_vjp(const VjpArgs& a, std::span<Tensor> in) { in[0] = a.cotangents[0]; }

// out = mask ? value : x, the value an attribute: only x gets a gradient, where not masked.
void masked_fill_jvp(const JvpArgs& a, std::span<Tensor> out) {
  if (a.tangents[0].defined()) out[0] = ops::where(a.inputs[1], zero(), a.tangents[0]);
}
void masked_fill_vjp(const VjpArgs& a, std::span<Tensor> in) {
  in[0] = ops::where(a.inputs[1], zero(), a.cotangents[0]);
}

}  // namespace

void install_elementwise_rules() {
  install_unary_rules();
  install_binary_rules();
  install_ternary_rules();
  def_rules("cast", {}, cast_jvp, cast_vjp);
  def_rules("copy", {}, copy_jvp, copy_vjp);
  def_rules("masked_fill", {bit(1), 0}, masked_fill_jvp, masked_fill_vjp);
}

}  // namespace spore::autodiff
