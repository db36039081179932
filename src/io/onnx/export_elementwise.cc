// SPDX-License-Identifier: Apache-2.0
// Export of the elementwise primitives: unary math and activations, binary arithmetic,
// comparisons and logic, Python-style division, predicates, where/clamp/lerp, casts and literals.
// Activations opset 17 lacks (GELU, SiLU, Mish...) are written out as the formulas our kernels
// compute (src/backends/cpu/unary_math.h), so values agree to rounding.
#include <cmath>
#include <map>

#include "io/onnx/export_context.h"
#include "prims/cast.h"
#include "prims/unary.h"
#include "transforms/ir_bridge.h"

namespace spore::io::onnx_detail {

namespace {

using ir::DType;

bool is_float(DType d) { return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16; }

// Primitives that are one ONNX operator with the same inputs.
const std::map<std::string, std::string>& one_to_one() {
  static const std::map<std::string, std::string> m = {
      {"neg", "Neg"},       {"abs", "Abs"},         {"sign", "Sign"},       {"exp", "Exp"},
      {"log", "Log"},       {"sqrt", "Sqrt"},       {"reciprocal", "Reciprocal"},
      {"sin", "Sin"},       {"cos", "Cos"},         {"tan", "Tan"},         {"asin", "Asin"},
      {"acos", "Acos"},     {"atan", "Atan"},       {"sinh", "Sinh"},       {"cosh", "Cosh"},
      {"tanh", "Tanh"},     {"sigmoid", "Sigmoid"}, {"relu", "Relu"},       {"erf", "Erf"},
      {"floor", "Floor"},   {"ceil", "Ceil"},       {"round", "Round"},     {"hardswish", "HardSwish"},
      {"add", "Add"},       {"sub", "Sub"},         {"mul", "Mul"},         {"div", "Div"},
      {"maximum", "Max"},   {"minimum", "Min"},     {"pow", "Pow"},
      {"equal", "Equal"},   {"less", "Less"},       {"less_equal", "LessOrEqual"},
      {"greater", "Greater"}, {"greater_equal", "GreaterOrEqual"},
      {"where", "Where"},   {"copy", "Identity"},   {"stop_gradient", "Identity"},
  };
  return m;
}

void simple(ExportContext& c) {
  std::vector<std::string> ins;
  for (size_t i = 0; i < c.num_inputs(); ++i) ins.push_back(c.in(i));
  c.add(one_to_one().at(c.node().op()), ins, {c.out(0)});
}

DType dt(ExportContext& c) { return c.out_type(0).dtype; }
std::string k(ExportContext& c, double v, const std::string& what) { return c.scalar(v, c.in_type(0).dtype, what); }

void expm1(ExportContext& c) { c.add("Sub", {c.op("Exp", {c.in(0)}, "exp"), k(c, 1, "one")}, {c.out(0)}); }
void log1p(ExportContext& c) { c.add("Log", {c.op("Add", {c.in(0), k(c, 1, "one")}, "x_plus_1")}, {c.out(0)}); }
void log2(ExportContext& c) { c.add("Div", {c.op("Log", {c.in(0)}, "ln"), k(c, std::log(2.0), "ln2")}, {c.out(0)}); }
void rsqrt(ExportContext& c) { c.add("Reciprocal", {c.op("Sqrt", {c.in(0)}, "sqrt")}, {c.out(0)}); }
void square(ExportContext& c) { c.add("Mul", {c.in(0), c.in(0)}, {c.out(0)}); }
void trunc(ExportContext& c) {
  // Opset 17 has no Trunc: sign(x) * floor(|x|).
  c.add("Mul", {c.op("Sign", {c.in(0)}, "sign"), c.op("Floor", {c.op("Abs", {c.in(0)}, "abs")}, "floor")}, {c.out(0)});
}
void relu6(ExportContext& c) { c.add("Clip", {c.in(0), k(c, 0, "min"), k(c, 6, "max")}, {c.out(0)}); }
void leaky_relu(ExportContext& c) { attr_f(c.add("LeakyRelu", {c.in(0)}, {c.out(0)}), "alpha", c.attrs<prims::UnaryAttrs>().a); }
void elu(ExportContext& c) { attr_f(c.add("Elu", {c.in(0)}, {c.out(0)}), "alpha", c.attrs<prims::UnaryAttrs>().a); }
void selu(ExportContext& c) {
  auto& n = c.add("Selu", {c.in(0)}, {c.out(0)});
  attr_f(n, "alpha", 1.6732632423543772848170429916717);
  attr_f(n, "gamma", 1.0507009873554804934193349852946);
}
void hardsigmoid(ExportContext& c) {
  auto& n = c.add("HardSigmoid", {c.in(0)}, {c.out(0)});
  attr_f(n, "alpha", 1.0 / 6.0);
  attr_f(n, "beta", 0.5);
}
void gelu(ExportContext& c) {
  // 0.5 * x * (1 + erf(x / sqrt(2)))
  const std::string x = c.in(0);
  std::string e = c.op("Erf", {c.op("Mul", {x, k(c, 0.70710678118654752440, "inv_sqrt2")}, "scaled")}, "erf");
  std::string h = c.op("Mul", {c.op("Add", {e, k(c, 1, "one")}, "one_plus_erf"), k(c, 0.5, "half")}, "half_gate");
  c.add("Mul", {x, h}, {c.out(0)});
}
void gelu_tanh(ExportContext& c) {
  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  const std::string x = c.in(0);
  std::string x3 = c.op("Mul", {c.op("Mul", {x, x}, "x2"), x}, "x3");
  std::string inner = c.op("Add", {x, c.op("Mul", {x3, k(c, 0.044715, "c")}, "cx3")}, "inner");
  std::string t = c.op("Tanh", {c.op("Mul", {inner, k(c, 0.79788456080286535588, "sqrt_2_over_pi")}, "scaled")}, "tanh");
  std::string h = c.op("Mul", {c.op("Add", {t, k(c, 1, "one")}, "one_plus_tanh"), k(c, 0.5, "half")}, "half_gate");
  c.add("Mul", {x, h}, {c.out(0)});
}
void silu(ExportContext& c) { c.add("Mul", {c.in(0), c.op("Sigmoid", {c.in(0)}, "sigmoid")}, {c.out(0)}); }
void mish(ExportContext& c) {
  c.add("Mul", {c.in(0), c.op("Tanh", {c.op("Softplus", {c.in(0)}, "softplus")}, "tanh")}, {c.out(0)});
}
void softplus(ExportContext& c) {
  // beta x > threshold ? x : softplus(beta x) / beta (PyTorch's Softplus).
  const auto& a = c.attrs<prims::UnaryAttrs>();
  const std::string x = c.in(0);
  std::string bx = a.a == 1.0 ? x : c.op("Mul", {x, k(c, a.a, "beta")}, "beta_x");
  std::string sp = c.op("Softplus", {bx}, "softplus");
  if (a.a != 1.0) sp = c.op("Div", {sp, k(c, a.a, "beta_div")}, "softplus_over_beta");
  c.add("Where", {c.op("Greater", {bx, k(c, a.b, "threshold")}, "linear"), x, sp}, {c.out(0)});
}

// ONNX logic takes bool operands; our logical ops take any dtype (non-zero is true).
std::string as_bool(ExportContext& c, size_t i) {
  if (c.in_type(i).dtype == DType::Bool) return c.in(i);
  auto& n = c.add("Cast", {c.in(i)}, {c.tmp("bool" + std::to_string(i))});
  attr_i(n, "to", onnx::TensorProto::BOOL);
  return n.output(0);
}
void logical(ExportContext& c, const char* op) { c.add(op, {as_bool(c, 0), as_bool(c, 1)}, {c.out(0)}); }
void logical_and(ExportContext& c) { logical(c, "And"); }
void logical_or(ExportContext& c) { logical(c, "Or"); }
void logical_xor(ExportContext& c) { logical(c, "Xor"); }
void logical_not(ExportContext& c) { c.add("Not", {as_bool(c, 0)}, {c.out(0)}); }
void not_equal(ExportContext& c) { c.add("Not", {c.op("Equal", {c.in(0), c.in(1)}, "equal")}, {c.out(0)}); }
// Bitwise ops arrive in opset 18; on bool they are the logical ones.
void bitwise(ExportContext& c, const char* op) {
  if (c.in_type(0).dtype != DType::Bool) c.fail("bitwise ops on integers need ONNX opset 18 (BitwiseAnd...); opset 17 has them only for bool");
  logical(c, op);
}
void bitwise_and(ExportContext& c) { bitwise(c, "And"); }
void bitwise_or(ExportContext& c) { bitwise(c, "Or"); }
void bitwise_xor(ExportContext& c) { bitwise(c, "Xor"); }

void isnan(ExportContext& c) {
  if (is_float(c.in_type(0).dtype)) c.add("IsNaN", {c.in(0)}, {c.out(0)});
  else c.add("Not", {c.op("Equal", {c.in(0), c.in(0)}, "self_equal")}, {c.out(0)});  // never NaN
}
void isinf(ExportContext& c) {
  if (is_float(c.in_type(0).dtype)) c.add("IsInf", {c.in(0)}, {c.out(0)});
  else c.add("Not", {c.op("Equal", {c.in(0), c.in(0)}, "self_equal")}, {c.out(0)});
}
void isfinite(ExportContext& c) {
  if (!is_float(c.in_type(0).dtype)) {
    c.add("Equal", {c.in(0), c.in(0)}, {c.out(0)});  // always true
    return;
  }
  std::string bad = c.op("Or", {c.op("IsNaN", {c.in(0)}, "isnan"), c.op("IsInf", {c.in(0)}, "isinf")}, "nonfinite");
  c.add("Not", {bad}, {c.out(0)});
}

void floor_divide(ExportContext& c) {
  const std::string a = c.in(0), b = c.in(1);
  if (is_float(dt(c))) {
    c.add("Floor", {c.op("Div", {a, b}, "div")}, {c.out(0)});
    return;
  }
  // (a - a mod b) / b is exact, and ONNX's integer Mod (fmod=0) has the divisor's sign.
  std::string r = c.op("Mod", {a, b}, "mod");
  c.add("Div", {c.op("Sub", {a, r}, "a_minus_mod"), b}, {c.out(0)});
}
void remainder(ExportContext& c) {
  const std::string a = c.in(0), b = c.in(1);
  if (!is_float(dt(c))) {
    c.add("Mod", {a, b}, {c.out(0)});
    return;
  }
  std::string q = c.op("Floor", {c.op("Div", {a, b}, "div")}, "floor");
  c.add("Sub", {a, c.op("Mul", {q, b}, "q_times_b")}, {c.out(0)});
}

void clamp(ExportContext& c) {
  // Clip takes 0-d bounds only; broadcasting bounds go through Max/Min.
  if (c.in_type(1).shape.empty() && c.in_type(2).shape.empty()) {
    c.add("Clip", {c.in(0), c.in(1), c.in(2)}, {c.out(0)});
    return;
  }
  c.add("Min", {c.op("Max", {c.in(0), c.in(1)}, "max"), c.in(2)}, {c.out(0)});
}
void lerp(ExportContext& c) {
  // PyTorch's two-sided form: w < 0.5 ? a + w (b - a) : b - (b - a)(1 - w).
  const std::string a = c.in(0), b = c.in(1), w = c.in(2);
  std::string d = c.op("Sub", {b, a}, "b_minus_a");
  std::string lo = c.op("Add", {a, c.op("Mul", {w, d}, "w_d")}, "from_a");
  std::string hi = c.op("Sub", {b, c.op("Mul", {d, c.op("Sub", {c.scalar(1, c.in_type(2).dtype, "one"), w}, "one_minus_w")}, "d_1mw")}, "from_b");
  c.add("Where", {c.op("Less", {w, c.scalar(0.5, c.in_type(2).dtype, "half")}, "w_small"), lo, hi}, {c.out(0)});
}

void cast(ExportContext& c) {
  attr_i(c.add("Cast", {c.in(0)}, {c.out(0)}), "to", onnx_dtype(transforms::to_ir(c.attrs<prims::CastAttrs>().dtype)));
}

void constant(ExportContext& c) {
  Tensor t = transforms::tensor_of(c.attrs<transforms::ConstantAttrs>());
  const DType want = c.out_type(0).dtype;
  if (transforms::to_ir(t.dtype()) != want) t = t.to(transforms::from_ir(want));
  auto& n = c.add("Constant", {}, {c.out(0)});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  tensor_to_proto(t, *a->mutable_t());
}

}  // namespace

void add_elementwise_exports(ExportTable& t) {
  for (const auto& [op, onnx_op] : one_to_one()) t[op] = simple;
  const ExportTable rows = {
      {"expm1", expm1},           {"log1p", log1p},           {"log2", log2},
      {"rsqrt", rsqrt},           {"square", square},         {"trunc", trunc},
      {"relu6", relu6},           {"leaky_relu", leaky_relu}, {"elu", elu},
      {"selu", selu},             {"hardsigmoid", hardsigmoid}, {"gelu", gelu},
      {"gelu_tanh", gelu_tanh},   {"silu", silu},             {"mish", mish},
      {"softplus", softplus},     {"logical_and", logical_and}, {"logical_or", logical_or},
      {"logical_xor", logical_xor}, {"logical_not", logical_not}, {"not_equal", not_equal},
      {"bitwise_and", bitwise_and}, {"bitwise_or", bitwise_or}, {"bitwise_xor", bitwise_xor},
      {"isnan", isnan},           {"isinf", isinf},           {"isfinite", isfinite},
      {"floor_divide", floor_divide}, {"remainder", remainder}, {"clamp", clamp},
      {"lerp", lerp},             {"cast", cast},             {transforms::kConstantOp, constant},
  };
  t.insert(rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
