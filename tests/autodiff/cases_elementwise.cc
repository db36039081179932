// SPDX-License-Identifier: Apache-2.0
// Gradient-check cases of the elementwise primitives. Inputs keep clear of kinks and
// singularities (|x| >= 0.1 for relu-like ops, chosen points for the piecewise ones); ops whose
// second derivative is zero almost everywhere are checked to order 1. oracle_op and attrs are
// the keys and attributes of tests/oracle/cases_elementwise*.cc, so PyTorch's autograd can
// recompute each case.
#include "autodiff/grad_cases.h"

namespace spore::gradcheck {
namespace {

using namespace ops;
using oracle::Fill;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

/// Random signs with magnitudes in [0.1, 3]: clear of the kink at 0.
Tensor away(const Shape& s, uint64_t seed) { return sign(R(s, seed)) * R(s, seed + 500, Fill::Positive); }
/// Points on both sides of every kink of relu6, hardswish and hardsigmoid (-3, 0, 3, 6).
Tensor piecewise() {
  return from_vector(std::vector<double>{-7.5, -4.2, -2.5, -1.3, -0.4, 0.35, 1.7, 2.6, 3.9, 5.1, 6.8, 8.0}, {3, 4});
}
Tensor mask(const Shape& s, uint64_t seed) { return oracle::rand_tensor(s, DType::Bool, seed, Fill::Bool); }

struct Adder {
  std::vector<GradCase>& cases;
  void operator()(std::string name, std::string prim, Fn fn, std::vector<Tensor> inputs, int order = 2,
                  std::string oracle_op = "", oracle::Attrs attrs = {}) {
    cases.push_back({std::move(name), {std::move(prim)}, std::move(fn), std::move(inputs), {}, order, 1e-6,
                     std::move(oracle_op), std::move(attrs), 0});
  }
};

using UnaryFn = Tensor (*)(const Tensor&);
struct UnaryRow {
  const char* prim;
  UnaryFn fn;
  int input;  // 0 normal, 1 positive, 2 unit (scaled to 0.9), 3 away from 0, 4 piecewise points, 5 wide
  int order;
};

void unary_cases(Adder& add) {
  const UnaryRow rows[] = {
      {"neg", neg, 0, 2},
      {"abs", abs, 3, 1},
      {"sign", sign, 3, 1},
      {"exp", exp, 0, 2},
      {"expm1", expm1, 0, 2},
      {"log", log, 1, 2},
      {"log1p", log1p, 1, 2},
      {"log2", log2, 1, 2},
      {"sqrt", sqrt, 1, 2},
      {"rsqrt", rsqrt, 1, 2},
      {"reciprocal", reciprocal, 3, 2},
      {"square", square, 0, 2},
      {"sin", sin, 0, 2},
      {"cos", cos, 0, 2},
      {"tan", tan, 2, 2},
      {"asin", asin, 2, 2},
      {"acos", acos, 2, 2},
      {"atan", atan, 0, 2},
      {"sinh", sinh, 0, 2},
      {"cosh", cosh, 0, 2},
      {"tanh", tanh, 0, 2},
      {"sigmoid", sigmoid, 0, 2},
      {"relu", relu, 3, 1},
      {"relu6", relu6, 4, 1},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x); }, 3, 1},
      {"elu", [](const Tensor& x) { return elu(x); }, 3, 2},
      {"selu", selu, 3, 2},
      {"gelu", [](const Tensor& x) { return gelu(x); }, 0, 2},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); }, 0, 2},
      {"silu", silu, 0, 2},
      {"mish", mish, 0, 2},
      {"softplus", [](const Tensor& x) { return softplus(x); }, 0, 2},
      {"hardswish", hardswish, 4, 2},
      {"hardsigmoid", hardsigmoid, 4, 1},
      {"erf", erf, 0, 2},
      {"erfinv", erfinv, 2, 2},
      {"floor", floor, 5, 1},
      {"ceil", ceil, 5, 1},
      {"round", round, 5, 1},
      {"trunc", trunc, 5, 1},
  };
  uint64_t seed = 100;
  for (const UnaryRow& r : rows) {
    const Shape s{3, 4};
    Tensor x = r.input == 0   ? R(s, seed)
               : r.input == 1 ? R(s, seed, Fill::Positive)
               : r.input == 2 ? R(s, seed, Fill::Unit) * 0.9
               : r.input == 3 ? away(s, seed)
               : r.input == 4 ? piecewise()
                              : R(s, seed) * 3.0;
    ++seed;
    UnaryFn fn = r.fn;
    add(std::string(r.prim) + "/basic", r.prim, [fn](const std::vector<Tensor>& v) { return fn(v[0]); }, {x},
        r.order, r.prim);
  }
  // Parameters other than PyTorch's defaults (the oracle's functions take none): Spore only.
  add("leaky_relu/slope", "leaky_relu", [](const std::vector<Tensor>& v) { return leaky_relu(v[0], 0.2); },
      {away({3, 4}, 150)}, 1);
  add("elu/alpha", "elu", [](const std::vector<Tensor>& v) { return elu(v[0], 0.5); }, {away({3, 4}, 151)});
  // Both sides of the threshold: beta x > 3 is x > 1.5; the inputs keep 0.2 away from it.
  Tensor sp = from_vector(std::vector<double>{-2.5, -0.7, 0.1, 0.9, 1.3, 1.7, 2.2, 3.4}, {2, 4});
  add("softplus/beta_threshold", "softplus", [](const std::vector<Tensor>& v) { return softplus(v[0], 2.0, 3.0); },
      {sp});
  // Above PyTorch's default threshold (20) softplus is the identity.
  add("softplus/above_threshold", "softplus", [](const std::vector<Tensor>& v) { return softplus(v[0]); },
      {R({2, 3}, 152) + 25.0}, 2, "softplus");
}

struct BinaryRow {
  const char* prim;
  Tensor (*fn)(const Tensor&, const Tensor&);
  int a_input, b_input;  // as UnaryRow::input
  int order;
};

void binary_cases(Adder& add) {
  const BinaryRow rows[] = {
      {"add", ops::add, 0, 0, 2},
      {"sub", ops::sub, 0, 0, 2},
      {"mul", ops::mul, 0, 0, 2},
      {"div", ops::div, 0, 3, 2},
      {"maximum", maximum, 0, 0, 1},
      {"minimum", minimum, 0, 0, 1},
      {"pow", ops::pow, 1, 0, 2},
      {"atan2", atan2, 3, 3, 2},
      {"floor_divide", floor_divide, 0, 3, 1},
      {"remainder", remainder, 0, 3, 1},
  };
  auto make = [](int kind, const Shape& s, uint64_t seed) {
    return kind == 0 ? R(s, seed) : kind == 1 ? R(s, seed, Fill::Positive) : away(s, seed);
  };
  uint64_t seed = 200;
  for (const BinaryRow& r : rows) {
    auto fn = r.fn;
    Fn f = [fn](const std::vector<Tensor>& v) { return fn(v[0], v[1]); };
    const std::string p = r.prim;
    add(p + "/basic", p, f, {make(r.a_input, {2, 3}, seed), make(r.b_input, {2, 3}, seed + 1)}, r.order, p);
    // Both operands broadcast: (3, 1) with (1, 4), and a rank-1 operand against a rank-3 one.
    add(p + "/broadcast", p, f, {make(r.a_input, {3, 1}, seed + 2), make(r.b_input, {1, 4}, seed + 3)}, r.order, p);
    add(p + "/broadcast_rank", p, f, {make(r.a_input, {2, 3, 4}, seed + 4), make(r.b_input, {4}, seed + 5)}, r.order,
        p);
    seed += 10;
  }
  // A weak literal operand is a constant: only x is differentiated.
  add("mul/literal", "mul", [](const std::vector<Tensor>& v) { return v[0] * 2.0; }, {R({2, 3}, 300)}, 2,
      "mul_scalar", {{"value", 2.0}});
  add("add/literal", "add", [](const std::vector<Tensor>& v) { return v[0] + 2.5; }, {R({2, 3}, 301)}, 2,
      "add_scalar", {{"value", 2.5}});
  add("pow/literal_exponent", "pow", [](const std::vector<Tensor>& v) { return ops::pow(v[0], 3.0); },
      {R({2, 3}, 302)});
  // Ties: PyTorch splits the gradient half/half, which is also the central difference there.
  Tensor a = R({3, 4}, 303);
  Tensor b = where(mask({3, 4}, 304), a, R({3, 4}, 305));
  add("maximum/ties", "maximum", [](const std::vector<Tensor>& v) { return maximum(v[0], v[1]); }, {a, b}, 1,
      "maximum");
  add("minimum/ties", "minimum", [](const std::vector<Tensor>& v) { return minimum(v[0], v[1]); }, {a, b}, 1,
      "minimum");
  // A zero base: d/db is 0 there for b >= 0 (PyTorch's mask), as the difference 0^(b +- h) = 0.
  Tensor base = from_vector(std::vector<double>{0, 0.5, 1.7, 0, 2.2, 0.9}, {2, 3});
  Tensor expo = from_vector(std::vector<double>{2, 3, -1.5, 3, 0.5, 2}, {2, 3});
  add("pow/zero_base", "pow", [](const std::vector<Tensor>& v) { return ops::pow(v[0], v[1]); }, {base, expo}, 1,
      "pow");
}

void other_cases(Adder& add) {
  // where: the condition is bool, never differentiated.
  add("where/basic", "where", [](const std::vector<Tensor>& v) { return where(v[0], v[1], v[2]); },
      {mask({2, 3}, 400), R({2, 3}, 401), R({2, 3}, 402)}, 1, "where");
  add("where/broadcast", "where", [](const std::vector<Tensor>& v) { return where(v[0], v[1], v[2]); },
      {mask({3, 1}, 403), R({1, 4}, 404), R({4}, 405)}, 1, "where");
  // clamp with tensor bounds: lo < hi here, and crossed bounds (lo > hi gives hi) below.
  Fn clamp3 = [](const std::vector<Tensor>& v) { return clamp(v[0], v[1], v[2]); };
  Tensor lo = R({3, 4}, 407) * 0.5 - 0.25;
  add("clamp/basic", "clamp", clamp3, {R({3, 4}, 406), lo, lo + R({3, 4}, 408, Fill::Positive)}, 1, "clamp");
  add("clamp/broadcast", "clamp", clamp3, {R({3, 4}, 409), R({4}, 410) * 0.5 - 0.5, R({3, 1}, 411) * 0.5 + 0.5}, 1,
      "clamp");
  Tensor clo = R({3, 4}, 412);
  add("clamp/crossed", "clamp", clamp3, {R({3, 4}, 413), clo, clo + away({3, 4}, 414)}, 1, "clamp");
  add("clamp/scalar_bounds", "clamp", [](const std::vector<Tensor>& v) { return clamp(v[0], -1.5, 2.25); },
      {R({3, 4}, 416) * 2.0}, 1, "clamp_scalar", {{"lo", -1.5}, {"hi", 2.25}});
  add("clamp/no_hi", "clamp", [](const std::vector<Tensor>& v) { return clamp(v[0], v[1], Tensor()); },
      {R({3, 4}, 417), R({4}, 418)}, 1, "clamp", {{"has_hi", false}});
  add("lerp/basic", "lerp", [](const std::vector<Tensor>& v) { return lerp(v[0], v[1], v[2]); },
      {R({2, 3}, 419), R({2, 3}, 420), R({2, 3}, 421)}, 2, "lerp");
  add("lerp/broadcast", "lerp", [](const std::vector<Tensor>& v) { return lerp(v[0], v[1], v[2]); },
      {R({3, 1}, 422), R({1, 4}, 423), R({4}, 424)}, 2, "lerp");
  // masked_fill: the filled positions get no gradient.
  add("masked_fill/basic", "masked_fill", [](const std::vector<Tensor>& v) { return masked_fill(v[0], v[1], -1.5); },
      {R({4, 5}, 425), mask({4, 5}, 426)}, 1, "masked_fill", {{"value", -1.5}});
  add("masked_fill/broadcast", "masked_fill",
      [](const std::vector<Tensor>& v) { return masked_fill(v[0], v[1], -1.5); }, {R({4, 5}, 427), mask({5}, 428)}, 1,
      "masked_fill", {{"value", -1.5}});
  // cast: float64 -> float64 still records the primitive. (A float32 round trip has no
  // float64-accurate difference to check against.)
  add("cast/float64", "cast", [](const std::vector<Tensor>& v) { return cast(v[0], DType::Float64); },
      {R({2, 3}, 429)}, 1, "cast", {{"dtype", std::string("float64")}});
  // Casting to an integer cuts the gradient: the tape does not even record a cast with an
  // integer result, so only the mul is seen, and d/dx (x * trunc(x)) = trunc(x).
  add("cast/to_int", "mul",
      [](const std::vector<Tensor>& v) { return v[0] * cast(cast(v[0], DType::Int64), DType::Float64); },
      {R({2, 3}, 431) * 3.0}, 1);
  add("copy/basic", "copy", [](const std::vector<Tensor>& v) { return copy(v[0]) * v[0]; }, {R({2, 3}, 432)}, 2);
}

// At kinks finite differences say nothing; these order-0 cases leave the value to the PyTorch
// oracle (the points are exact in float32) and to the jvp/vjp agreement check.
void kink_cases(Adder& add) {
  auto V = [](std::vector<double> v) { return from_vector(v); };
  auto unary = [&](const char* prim, UnaryFn fn, std::vector<double> x) {
    add(std::string(prim) + "/kinks", prim, [fn](const std::vector<Tensor>& v) { return fn(v[0]); }, {V(std::move(x))},
        0, prim);
  };
  unary("abs", abs, {0, -1.5, 2, -0.0});  // abs'(0) = 0
  unary("relu", relu, {0, -1, 2, -0.0});  // relu'(0) = 0
  unary("relu6", relu6, {0, 6, 3, -1, 7});  // 0 at both ends
  unary("leaky_relu", [](const Tensor& x) { return leaky_relu(x); }, {0, -2, 1});  // the slope at 0
  unary("elu", [](const Tensor& x) { return elu(x); }, {0, -1, 1});
  unary("hardswish", hardswish, {-3, 3, -4, 0, 4});  // -1/2 at -3, 3/2 at 3
  unary("hardsigmoid", hardsigmoid, {-3, 3, 0, -4, 4});  // 0 at both ends
  // x on a bound gets the gradient; lo == hi == x too; lo > hi gives hi.
  add("clamp/at_bounds", "clamp", [](const std::vector<Tensor>& v) { return clamp(v[0], v[1], v[2]); },
      {V({0, 1, 0.5, 2, -1, 0.3}), V({0, 0, 0.5, 0, -2, 1}), V({1, 1, 0.5, 1, 1, -1})}, 0, "clamp");
  // 0^0: both partial derivatives are taken as 0.
  add("pow/zero_zero", "pow", [](const std::vector<Tensor>& v) { return ops::pow(v[0], v[1]); },
      {V({0, 0, 1.5, 2}), V({0, 2, 0, 0.5})}, 0, "pow");
}

}  // namespace

SPORE_GRAD_CASES(elementwise) {
  Adder add{cases};
  unary_cases(add);
  binary_cases(add);
  other_cases(add);
  kink_cases(add);
}

}  // namespace spore::gradcheck
