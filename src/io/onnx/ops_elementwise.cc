// SPDX-License-Identifier: Apache-2.0
// Elementwise ONNX operators: math, activations, comparisons, logic and casts. ONNX keeps the
// input dtype where PyTorch-style promotion might not (integer Div, Pow with an int exponent,
// Mean), so those mappings cast back to the dtype the spec gives.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/attrs.h"
#include "io/onnx/op_context.h"
#include "io/onnx/proto_tensor.h"
#include "spore/ops.h"

namespace spore::io::onnx_detail {

namespace {

using Ts = std::vector<Tensor>;
namespace o = spore::ops;

bool is_float(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16;
}
Tensor lit(double v) { return o::weak_scalar(v); }

template <Tensor (*F)(const Tensor&)>
Ts unary(const OpContext& c) { return {F(c.in(0))}; }

// Shape arithmetic over a symbolic batch: `Shape` of a traced input gives int64 values that are
// symbolic dimensions (docs/mindir.md), and exporters compute sizes from them (batch * heads).
// Integer arithmetic on such constants is dimension arithmetic, folded into a symbolic size.
std::optional<Tensor> symbolic_arith(const OpContext& c, char op) {
  if (c.num_inputs() != 2 || !c.is_constant(0) || !c.is_constant(1) || c.in(0).dtype() != DType::Int64 ||
      c.in(1).dtype() != DType::Int64)
    return std::nullopt;
  const std::vector<int64_t> a = c.ints_of(0), b = c.ints_of(1);
  bool symbolic = false;
  for (int64_t v : a) symbolic = symbolic || is_symbol_id(v);
  for (int64_t v : b) symbolic = symbolic || is_symbol_id(v);
  if (!symbolic) return std::nullopt;
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1)
    c.fail("shape arithmetic over symbolic sizes broadcasts only a single value");
  const Tensor& shaped = a.size() >= b.size() ? c.in(0) : c.in(1);
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const Dim x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
    switch (op) {
      case '+': out[i] = dim_add(x, y); break;
      case '-': out[i] = dim_sub(x, y); break;
      case '*': out[i] = dim_mul(x, y); break;
      default:
        if (y <= 0) c.fail("divides a symbolic size by " + std::to_string(y));
        out[i] = dim_floordiv(x, y);  // sizes are not negative: truncation is floor
    }
  }
  const Shape shape = shaped.shape();
  return at_import([&] { return o::from_vector(out, shape, DType::Int64); });
}

template <Tensor (*F)(const Tensor&, const Tensor&), char Op = 0>
Ts binary(const OpContext& c) {
  if constexpr (Op != 0)
    if (auto t = symbolic_arith(c, Op)) return {*t};
  return {F(c.in(0), c.in(1))};
}

Ts div_op(const OpContext& c) {
  if (auto t = symbolic_arith(c, '/')) return {*t};
  const Tensor &a = c.in(0), &b = c.in(1);
  if (is_float(a.dtype())) return {o::div(a, b)};
  // ONNX integer division truncates toward zero.
  Tensor q = o::floor_divide(a, b), r = o::remainder(a, b);
  Tensor adjust = o::logical_and(o::not_equal(r, o::zeros_like(r)),
                                 o::logical_xor(o::less(a, o::zeros_like(a)), o::less(b, o::zeros_like(b))));
  return {o::where(adjust, o::add(q, o::ones_like(q)), q)};
}

Ts pow_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  // A float base and a one-element exponent known at import (an exporter's Pow(x - mean, 2) in
  // a layer norm): the exponent becomes a literal, which the graph passes see (x^2 -> x * x).
  // Only when x's dtype holds the exponent exactly (a float64 0.1 on a float32 base keeps
  // computing in float64, as before).
  if (is_float(x.dtype()) && c.is_constant(1) && c.in(1).numel() == 1 && c.in(1).dim() == 0) {
    const double e = c.double_scalar(1);
    if (c.in(1).dtype() == x.dtype() || e == std::round(e)) return {o::pow(x, Scalar(e))};
  }
  return {o::cast(o::pow(x, c.in(1)), x.dtype())};
}

Ts mod_op(const OpContext& c) {
  const Tensor &a = c.in(0), &b = c.in(1);
  if (!c.i("fmod", 0)) {
    if (is_float(a.dtype())) c.fail("fmod=0 is only defined for integer inputs");
    return {o::remainder(a, b)};
  }
  if (is_float(a.dtype())) return {o::sub(a, o::mul(o::trunc(o::div(a, b)), b))};
  // C fmod: the remainder takes the dividend's sign.
  Tensor r = o::remainder(a, b);
  Tensor fix = o::logical_and(o::not_equal(r, o::zeros_like(r)),
                              o::not_equal(o::less(r, o::zeros_like(r)), o::less(a, o::zeros_like(a))));
  return {o::where(fix, o::sub(r, b), r)};
}

Ts variadic(const OpContext& c, Tensor (*f)(const Tensor&, const Tensor&)) {
  Tensor acc = c.in(0);
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = f(acc, c.in(i));
  return {acc};
}
Ts max_op(const OpContext& c) { return variadic(c, o::maximum); }
Ts min_op(const OpContext& c) { return variadic(c, o::minimum); }
Ts sum_op(const OpContext& c) { return variadic(c, o::add); }
Ts mean_op(const OpContext& c) {
  Tensor s = variadic(c, o::add)[0];
  return {o::cast(o::div(s, lit(static_cast<double>(c.num_inputs()))), c.in(0).dtype())};
}

Ts clip_op(const OpContext& c) {
  Tensor x = c.in(0);
  if (c.opset() < 11) {
    const double lo = c.f("min", -std::numeric_limits<double>::infinity());
    const double hi = c.f("max", std::numeric_limits<double>::infinity());
    return {o::minimum(o::maximum(x, lit(lo)), lit(hi))};
  }
  if (c.has(1)) x = o::maximum(x, c.in(1));
  if (c.has(2)) x = o::minimum(x, c.in(2));
  return {x};
}

Ts where_op(const OpContext& c) { return {o::where(c.in(0), c.in(1), c.in(2))}; }
Ts not_op(const OpContext& c) { return {o::logical_not(c.in(0))}; }

Ts cast_op(const OpContext& c) {
  const auto dt = dtype_from_onnx(static_cast<int32_t>(c.i("to", 0)));
  if (!dt) c.fail("cast to " + onnx_dtype_name(static_cast<int32_t>(c.i("to", 0))) + " is not supported");
  return {o::cast(c.in(0), *dt)};
}
Ts cast_like_op(const OpContext& c) { return {o::cast(c.in(0), c.in(1).dtype())}; }

Ts isinf_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor pos = o::logical_and(o::isinf(x), o::greater(x, o::zeros_like(x)));
  Tensor neg = o::logical_and(o::isinf(x), o::less(x, o::zeros_like(x)));
  const bool p = c.i("detect_positive", 1) != 0, n = c.i("detect_negative", 1) != 0;
  if (p && n) return {o::isinf(x)};
  if (p) return {pos};
  if (n) return {neg};
  return {o::logical_and(pos, neg)};
}

Ts leaky_relu_op(const OpContext& c) { return {o::leaky_relu(c.in(0), c.f("alpha", 0.01))}; }
Ts elu_op(const OpContext& c) { return {o::elu(c.in(0), c.f("alpha", 1.0))}; }
Ts selu_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const double alpha = c.f("alpha", 1.67326319217681884765625), gamma = c.f("gamma", 1.05070102214813232421875);
  return {o::mul(o::where(o::greater(x, o::zeros_like(x)), x, o::mul(o::expm1(x), lit(alpha))), lit(gamma))};
}
Ts celu_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const double alpha = c.f("alpha", 1.0);
  return {o::add(o::relu(x), o::minimum(o::zeros_like(x), o::mul(o::expm1(o::div(x, lit(alpha))), lit(alpha))))};
}
Ts softplus_op(const OpContext& c) {
  const Tensor& x = c.in(0);  // log(1 + e^x), stably: max(x, 0) + log1p(e^-|x|)
  return {o::add(o::relu(x), o::log1p(o::exp(o::neg(o::abs(x)))))};
}
Ts softsign_op(const OpContext& c) { return {o::div(c.in(0), o::add(o::abs(c.in(0)), lit(1.0)))}; }
Ts hard_sigmoid_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor y = o::add(o::mul(x, lit(c.f("alpha", 0.2))), lit(c.f("beta", 0.5)));
  return {o::minimum(o::maximum(y, lit(0.0)), lit(1.0))};
}
Ts hard_swish_op(const OpContext& c) {
  const Tensor& x = c.in(0);  // x * max(0, min(1, x/6 + 1/2)), as the spec writes it
  Tensor y = o::add(o::mul(x, lit(1.0 / 6.0)), lit(0.5));
  return {o::mul(x, o::minimum(o::maximum(y, lit(0.0)), lit(1.0)))};
}
Ts thresholded_relu_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  return {o::where(o::greater(x, lit(c.f("alpha", 1.0))), x, o::zeros_like(x))};
}
Ts prelu_op(const OpContext& c) {
  const Tensor &x = c.in(0), &slope = c.in(1);
  return {o::where(o::less(x, o::zeros_like(x)), o::mul(x, slope), x)};
}
Ts shrink_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  const double bias = c.f("bias", 0.0), lambd = c.f("lambd", 0.5);
  Tensor lo = o::cast(o::add(x, lit(bias)), x.dtype()), hi = o::cast(o::sub(x, lit(bias)), x.dtype());
  return {o::where(o::less(x, lit(-lambd)), lo, o::where(o::greater(x, lit(lambd)), hi, o::zeros_like(x)))};
}
Ts asinh_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  return {o::log(o::add(x, o::sqrt(o::add(o::square(x), lit(1.0)))))};
}
Ts acosh_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  return {o::log(o::add(x, o::sqrt(o::sub(o::square(x), lit(1.0)))))};
}
Ts atanh_op(const OpContext& c) {
  const Tensor& x = c.in(0);
  return {o::mul(o::log(o::div(o::add(lit(1.0), x), o::sub(lit(1.0), x))), lit(0.5))};
}
Ts bitwise_logic(const OpContext& c, Tensor (*f)(const Tensor&, const Tensor&)) { return {f(c.in(0), c.in(1))}; }
Ts and_op(const OpContext& c) { return bitwise_logic(c, o::logical_and); }
Ts or_op(const OpContext& c) { return bitwise_logic(c, o::logical_or); }
Ts xor_op(const OpContext& c) { return bitwise_logic(c, o::logical_xor); }

}  // namespace

void add_elementwise_ops(OpTable& t) {
  const OpTable rows = {
      {"Abs", 1, 17, unary<o::abs>},           {"Neg", 1, 17, unary<o::neg>},
      {"Exp", 1, 17, unary<o::exp>},           {"Log", 1, 17, unary<o::log>},
      {"Sqrt", 1, 17, unary<o::sqrt>},         {"Reciprocal", 1, 17, unary<o::reciprocal>},
      {"Sigmoid", 1, 17, unary<o::sigmoid>},   {"Tanh", 1, 17, unary<o::tanh>},
      {"Relu", 1, 17, unary<o::relu>},         {"Erf", 1, 17, unary<o::erf>},
      {"Sin", 1, 17, unary<o::sin>},           {"Cos", 1, 17, unary<o::cos>},
      {"Tan", 1, 17, unary<o::tan>},           {"Asin", 1, 17, unary<o::asin>},
      {"Acos", 1, 17, unary<o::acos>},         {"Atan", 1, 17, unary<o::atan>},
      {"Sinh", 1, 17, unary<o::sinh>},         {"Cosh", 1, 17, unary<o::cosh>},
      {"Asinh", 1, 17, asinh_op},              {"Acosh", 1, 17, acosh_op},
      {"Atanh", 1, 17, atanh_op},              {"Floor", 1, 17, unary<o::floor>},
      {"Ceil", 1, 17, unary<o::ceil>},         {"Round", 1, 17, unary<o::round>},
      {"Sign", 1, 17, unary<o::sign>},         {"IsNaN", 1, 17, unary<o::isnan>},
      {"IsInf", 1, 17, isinf_op},              {"Not", 1, 17, not_op},
      {"Add", 7, 17, binary<o::add, '+'>},     {"Sub", 7, 17, binary<o::sub, '-'>},
      {"Mul", 7, 17, binary<o::mul, '*'>},          {"Div", 7, 17, div_op},
      {"Pow", 7, 17, pow_op},                  {"Mod", 10, 17, mod_op},
      {"Equal", 7, 17, binary<o::equal>},      {"Less", 7, 17, binary<o::less>},
      {"Greater", 7, 17, binary<o::greater>},  {"LessOrEqual", 12, 17, binary<o::less_equal>},
      {"GreaterOrEqual", 12, 17, binary<o::greater_equal>},
      {"And", 7, 17, and_op},                  {"Or", 7, 17, or_op},
      {"Xor", 7, 17, xor_op},                  {"Max", 7, 17, max_op},
      {"Min", 7, 17, min_op},                  {"Sum", 7, 17, sum_op},
      {"Mean", 7, 17, mean_op},                {"Clip", 7, 17, clip_op},
      {"Where", 9, 17, where_op},              {"Cast", 6, 17, cast_op},
      {"CastLike", 15, 17, cast_like_op},      {"LeakyRelu", 1, 17, leaky_relu_op},
      {"Elu", 1, 17, elu_op},                  {"Selu", 1, 17, selu_op},
      {"Celu", 12, 17, celu_op},               {"Softplus", 1, 17, softplus_op},
      {"Softsign", 1, 17, softsign_op},        {"HardSigmoid", 1, 17, hard_sigmoid_op},
      {"HardSwish", 14, 17, hard_swish_op},    {"ThresholdedRelu", 10, 17, thresholded_relu_op},
      {"PRelu", 7, 17, prelu_op},              {"Shrink", 9, 17, shrink_op},
  };
  t.insert(t.end(), rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
