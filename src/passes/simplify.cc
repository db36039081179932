// SPDX-License-Identifier: Apache-2.0
#include "passes/simplify.h"

#include <cmath>

#include "passes/rewrite.h"
#include "prims/views.h"

namespace spore::passes {
namespace {

using transforms::ConstantAttrs;

bool is_one(const ConstantAttrs* c) { return c && (is_floating(c->dtype) ? c->f == 1.0 : c->i == 1); }
// x + z == x for every x only when z is -0 (or an integer 0): +0 turns -0 into +0.
bool is_additive_identity(const ConstantAttrs* c) {
  return c && (is_floating(c->dtype) ? c->f == 0.0 && std::signbit(c->f) : c->i == 0);
}
// x - z == x for every x only when z is +0 (or an integer 0).
bool is_subtractive_identity(const ConstantAttrs* c) {
  return c && (is_floating(c->dtype) ? c->f == 0.0 && !std::signbit(c->f) : c->i == 0);
}

std::optional<Replacement> mul_one(const Match& m) {
  if (is_one(m.literal(1))) return m.input(0);
  if (is_one(m.literal(0))) return m.input(1);
  return std::nullopt;
}

std::optional<Replacement> add_zero(const Match& m) {
  if (is_additive_identity(m.literal(1))) return m.input(0);
  if (is_additive_identity(m.literal(0))) return m.input(1);
  return std::nullopt;
}

std::optional<Replacement> sub_zero(const Match& m) {
  if (is_subtractive_identity(m.literal(1))) return m.input(0);
  return std::nullopt;
}

std::optional<Replacement> div_one(const Match& m) {
  if (is_one(m.literal(1))) return m.input(0);
  return std::nullopt;
}

std::optional<Replacement> neg_neg(const Match& m) {
  const ir::Node* inner = m.producer(0);
  if (inner && inner->op() == "neg") return inner->inputs()[0];
  return std::nullopt;
}

// x^2 as x * x: the value the pow kernel gives for an exponent of 2 (backends/cpu/binary_math.h,
// so the rewrite is bitwise), one multiply instead of a transcendental call, and a product the
// kernel generator emits (it has no pow): the variance in ONNX files' layer norms
// (Pow(x - mean, 2)).
std::optional<Replacement> pow_two(const Match& m) {
  const ConstantAttrs* e = m.literal(1);
  if (!e || !is_floating(e->dtype) || e->f != 2.0) return std::nullopt;
  return std::make_shared<const ir::Node>("mul", std::make_shared<const NoAttrs>(),
                                          std::vector<ir::ValueRef>{m.input(0), m.input(0)}, m.node.outputs(),
                                          m.node.scope());
}

// reshape, broadcast_to and cast are the identity when the type does not change; the engine's
// type guard rejects the proposal whenever it would.
std::optional<Replacement> same_type_is_identity(const Match& m) { return m.input(0); }

std::optional<Replacement> identity_permute(const Match& m) {
  const auto& axes = m.attrs<prims::PermuteAttrs>().axes;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != static_cast<int64_t>(i)) return std::nullopt;
  return m.input(0);
}

std::optional<Replacement> reshape_reshape(const Match& m) {
  const ir::Node* inner = m.producer(0);
  if (!inner || inner->op() != "reshape") return std::nullopt;
  return std::make_shared<const ir::Node>(m.node.op(), m.node.attrs_ptr(), std::vector<ir::ValueRef>{inner->inputs()[0]},
                                          m.node.outputs(), m.node.scope());
}

// The table, tried in order per node; the first rule whose replacement fits is applied.
constexpr Rule kRules[] = {
    {"mul_one", "mul", &mul_one},
    {"add_zero", "add", &add_zero},
    {"sub_zero", "sub", &sub_zero},
    {"div_one", "div", &div_one},
    {"neg_neg", "neg", &neg_neg},
    {"pow_two", "pow", &pow_two},
    {"reshape_same_shape", "reshape", &same_type_is_identity},
    {"reshape_reshape", "reshape", &reshape_reshape},
    {"broadcast_to_same_shape", "broadcast_to", &same_type_is_identity},
    {"permute_identity", "permute", &identity_permute},
    {"cast_same_dtype", "cast", &same_type_is_identity},
};

}  // namespace

ir::GraphPtr simplify(const ir::GraphPtr& g) { return rewrite(g, kRules); }

}  // namespace spore::passes
