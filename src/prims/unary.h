// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "backends/cpu/unary_math.h"
#include "core/primitive.h"

namespace spore::prims {

/// Attributes of the unary primitives: the two parameters some of them take
/// (leaky_relu: a = slope; elu: a = alpha; softplus: a = beta, b = threshold).
struct UnaryAttrs {
  double a = 0;
  double b = 0;
  static constexpr auto fields() { return std::make_tuple(field("a", &UnaryAttrs::a), field("b", &UnaryAttrs::b)); }
};

const Primitive& unary_primitive(cpu::UnaryOp op);
/// True for the unary ops defined on integer tensors (neg, abs, sign, square, relu).
bool unary_supports_integers(cpu::UnaryOp op);

}  // namespace spore::prims
