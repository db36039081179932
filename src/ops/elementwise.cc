// SPDX-License-Identifier: Apache-2.0
// Public elementwise ops: check, promote, then call the unary/binary primitives.
#include "spore/ops/elementwise.h"

#include "ops/promote.h"
#include "prims/binary.h"
#include "prims/cast.h"
#include "prims/compare.h"
#include "prims/factories.h"
#include "prims/unary.h"
#include "runtime/dispatch.h"
#include "spore/ops/creation.h"

namespace spore::ops {

using cpu::BinaryOp;
using cpu::UnaryOp;
using prims::UnaryAttrs;

namespace {

Tensor unary(UnaryOp op, const char* name, const Tensor& x, UnaryAttrs attrs = {}) {
  SPORE_CHECK(x.defined(), "[", name, "] input is an undefined tensor");
  SPORE_CHECK(x.dtype() != DType::Bool || op == UnaryOp::abs, "[", name,
              "] is not defined for bool tensors; cast to an integer or float dtype first");
  const bool keep_int = prims::unary_supports_integers(op) || op == UnaryOp::floor || op == UnaryOp::ceil ||
                        op == UnaryOp::round || op == UnaryOp::trunc;
  if (is_integral(x.dtype(), true) && keep_int) {
    if (x.dtype() == DType::Bool) return copy(x);  // abs(bool)
    if (op == UnaryOp::floor || op == UnaryOp::ceil || op == UnaryOp::round || op == UnaryOp::trunc) return copy(x);
    return runtime::call(prims::unary_primitive(op), attrs, {x});
  }
  return runtime::call(prims::unary_primitive(op), attrs, {to_dtype(x, float_type(x.dtype()))});
}

Tensor binary(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, bool float_only = false) {
  SPORE_CHECK(a.defined() && b.defined(), "[", name, "] an input is an undefined tensor");
  DType t = result_type(a, b);
  if (float_only) t = float_type(t);
  if (t == DType::Bool && (op == BinaryOp::sub || op == BinaryOp::pow))
    throw Error(detail::cat("[", name, "] is not defined for two bool tensors; cast them to an integer dtype first"));
  return runtime::call(prims::binary_primitive(op), NoAttrs{}, {to_dtype(a, t), to_dtype(b, t)});
}

}  // namespace

Tensor neg(const Tensor& x) { return unary(UnaryOp::neg, "neg", x); }
Tensor abs(const Tensor& x) { return unary(UnaryOp::abs, "abs", x); }
Tensor sign(const Tensor& x) { return unary(UnaryOp::sign, "sign", x); }
Tensor exp(const Tensor& x) { return unary(UnaryOp::exp, "exp", x); }
Tensor expm1(const Tensor& x) { return unary(UnaryOp::expm1, "expm1", x); }
Tensor log(const Tensor& x) { return unary(UnaryOp::log, "log", x); }
Tensor log1p(const Tensor& x) { return unary(UnaryOp::log1p, "log1p", x); }
Tensor log2(const Tensor& x) { return unary(UnaryOp::log2, "log2", x); }
Tensor sqrt(const Tensor& x) { return unary(UnaryOp::sqrt, "sqrt", x); }
Tensor rsqrt(const Tensor& x) { return unary(UnaryOp::rsqrt, "rsqrt", x); }
Tensor reciprocal(const Tensor& x) { return unary(UnaryOp::reciprocal, "reciprocal", x); }
Tensor square(const Tensor& x) { return unary(UnaryOp::square, "square", x); }
Tensor sin(const Tensor& x) { return unary(UnaryOp::sin, "sin", x); }
Tensor cos(const Tensor& x) { return unary(UnaryOp::cos, "cos", x); }
Tensor tan(const Tensor& x) { return unary(UnaryOp::tan, "tan", x); }
Tensor asin(const Tensor& x) { return unary(UnaryOp::asin, "asin", x); }
Tensor acos(const Tensor& x) { return unary(UnaryOp::acos, "acos", x); }
Tensor atan(const Tensor& x) { return unary(UnaryOp::atan, "atan", x); }
Tensor sinh(const Tensor& x) { return unary(UnaryOp::sinh, "sinh", x); }
Tensor cosh(const Tensor& x) { return unary(UnaryOp::cosh, "cosh", x); }
Tensor tanh(const Tensor& x) { return unary(UnaryOp::tanh, "tanh", x); }
Tensor sigmoid(const Tensor& x) { return unary(UnaryOp::sigmoid, "sigmoid", x); }
Tensor relu(const Tensor& x) { return unary(UnaryOp::relu, "relu", x); }
Tensor relu6(const Tensor& x) { return unary(UnaryOp::relu6, "relu6", x); }
Tensor leaky_relu(const Tensor& x, double slope) { return unary(UnaryOp::leaky_relu, "leaky_relu", x, {slope, 0}); }
Tensor elu(const Tensor& x, double alpha) { return unary(UnaryOp::elu, "elu", x, {alpha, 0}); }
Tensor selu(const Tensor& x) { return unary(UnaryOp::selu, "selu", x); }
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  return tanh_approximation ? unary(UnaryOp::gelu_tanh, "gelu", x) : unary(UnaryOp::gelu, "gelu", x);
}
Tensor silu(const Tensor& x) { return unary(UnaryOp::silu, "silu", x); }
Tensor mish(const Tensor& x) { return unary(UnaryOp::mish, "mish", x); }
Tensor softplus(const Tensor& x, double beta, double threshold) {
  SPORE_CHECK(beta != 0, "[softplus] beta must be non-zero");
  return unary(UnaryOp::softplus, "softplus", x, {beta, threshold});
}
Tensor hardswish(const Tensor& x) { return unary(UnaryOp::hardswish, "hardswish", x); }
Tensor hardsigmoid(const Tensor& x) { return unary(UnaryOp::hardsigmoid, "hardsigmoid", x); }
Tensor erf(const Tensor& x) { return unary(UnaryOp::erf, "erf", x); }
Tensor floor(const Tensor& x) { return unary(UnaryOp::floor, "floor", x); }
Tensor ceil(const Tensor& x) { return unary(UnaryOp::ceil, "ceil", x); }
Tensor round(const Tensor& x) { return unary(UnaryOp::round, "round", x); }
Tensor trunc(const Tensor& x) { return unary(UnaryOp::trunc, "trunc", x); }

Tensor cast(const Tensor& x, DType dtype) {
  SPORE_CHECK(x.defined(), "[cast] input is an undefined tensor");
  return runtime::call(prims::cast_primitive(), prims::CastAttrs{dtype}, {x});
}
Tensor copy(const Tensor& x) {
  SPORE_CHECK(x.defined(), "[copy] input is an undefined tensor");
  return runtime::call(prims::copy_primitive(), NoAttrs{}, {x});
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::add, "add", a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::sub, "sub", a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::mul, "mul", a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::div, "div", a, b, true); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::maximum, "maximum", a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::minimum, "minimum", a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(BinaryOp::pow, "pow", a, b); }
Tensor atan2(const Tensor& a, const Tensor& b) { return binary(BinaryOp::atan2, "atan2", a, b, true); }

// Float literals are held in float64 so `x_f64 + 0.1` keeps all of 0.1's digits; promotion
// treats them by category only (see promote.cc).
Tensor weak_scalar(Scalar s) {
  return literal(s, s.kind() == Scalar::Kind::Float ? DType::Float64
                    : s.kind() == Scalar::Kind::Int ? DType::Int64
                                                    : DType::Bool);
}

Tensor pow(const Tensor& a, Scalar b) { return pow(a, weak_scalar(b)); }

}  // namespace spore::ops

namespace spore {
using ops::literal_for;

Tensor operator+(const Tensor& a, const Tensor& b) { return ops::add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return ops::sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return ops::mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return ops::div(a, b); }
Tensor operator-(const Tensor& a) { return ops::neg(a); }
Tensor operator+(const Tensor& a, Scalar b) { return ops::add(a, literal_for(a, b)); }
Tensor operator-(const Tensor& a, Scalar b) { return ops::sub(a, literal_for(a, b)); }
Tensor operator*(const Tensor& a, Scalar b) { return ops::mul(a, literal_for(a, b)); }
Tensor operator/(const Tensor& a, Scalar b) { return ops::div(a, literal_for(a, b)); }
Tensor operator<(const Tensor& a, const Tensor& b) { return ops::less(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return ops::less_equal(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return ops::greater(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ops::greater_equal(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return ops::less(a, literal_for(a, b)); }
Tensor operator<=(const Tensor& a, Scalar b) { return ops::less_equal(a, literal_for(a, b)); }
Tensor operator>(const Tensor& a, Scalar b) { return ops::greater(a, literal_for(a, b)); }
Tensor operator>=(const Tensor& a, Scalar b) { return ops::greater_equal(a, literal_for(a, b)); }
Tensor operator+(Scalar a, const Tensor& b) { return ops::add(literal_for(b, a), b); }
Tensor operator-(Scalar a, const Tensor& b) { return ops::sub(literal_for(b, a), b); }
Tensor operator*(Scalar a, const Tensor& b) { return ops::mul(literal_for(b, a), b); }
Tensor operator/(Scalar a, const Tensor& b) { return ops::div(literal_for(b, a), b); }
}  // namespace spore

namespace spore::ops {
namespace {
using prims::CompareOp;
Tensor compare(CompareOp op, const char* name, const Tensor& a, const Tensor& b) {
  SPORE_CHECK(a.defined() && b.defined(), "[", name, "] an input is an undefined tensor");
  DType t = result_type(a, b);
  if (op >= CompareOp::bitwise_and)
    SPORE_CHECK(!is_floating(t), "[", name, "] needs integer or bool tensors, got ", dtype_name(a.dtype()), " and ",
                dtype_name(b.dtype()), "; use logical_* for truth values");
  return runtime::call(prims::compare_primitive(op), NoAttrs{}, {to_dtype(a, t), to_dtype(b, t)});
}
}  // namespace
Tensor equal(const Tensor& a, const Tensor& b) { return compare(CompareOp::equal, "equal", a, b); }
Tensor not_equal(const Tensor& a, const Tensor& b) { return compare(CompareOp::not_equal, "not_equal", a, b); }
Tensor less(const Tensor& a, const Tensor& b) { return compare(CompareOp::less, "less", a, b); }
Tensor less_equal(const Tensor& a, const Tensor& b) { return compare(CompareOp::less_equal, "less_equal", a, b); }
Tensor greater(const Tensor& a, const Tensor& b) { return compare(CompareOp::greater, "greater", a, b); }
Tensor greater_equal(const Tensor& a, const Tensor& b) { return compare(CompareOp::greater_equal, "greater_equal", a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return compare(CompareOp::logical_and, "logical_and", a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return compare(CompareOp::logical_or, "logical_or", a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return compare(CompareOp::logical_xor, "logical_xor", a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return compare(CompareOp::bitwise_and, "bitwise_and", a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return compare(CompareOp::bitwise_or, "bitwise_or", a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return compare(CompareOp::bitwise_xor, "bitwise_xor", a, b); }
}  // namespace spore::ops
