// SPDX-License-Identifier: Apache-2.0
// Oracle cases for elementwise ops: every op x dtypes x shapes (broadcast, strided, empty,
// scalar, edge values).
#include "oracle.h"

namespace spore::oracle {
namespace {

struct UnaryRow {
  const char* name;
  Tensor (*fn)(const Tensor&);
  Fill fill;
  bool ints;  // also defined on integer tensors
};

const std::vector<UnaryRow>& unary_rows() {
  using namespace ops;
  static const std::vector<UnaryRow> rows = {
      {"neg", neg, Fill::Edge, true},          {"abs", abs, Fill::Edge, true},
      {"sign", sign, Fill::Edge, true},        {"exp", exp, Fill::Edge, true},
      {"expm1", expm1, Fill::Edge, false},     {"log", log, Fill::Positive, true},
      {"log1p", log1p, Fill::Positive, false}, {"log2", log2, Fill::Positive, false},
      {"sqrt", sqrt, Fill::Positive, true},    {"rsqrt", rsqrt, Fill::Positive, false},
      {"reciprocal", reciprocal, Fill::Edge, false}, {"square", square, Fill::Edge, true},
      {"sin", sin, Fill::Normal, true},        {"cos", cos, Fill::Normal, false},
      {"tan", tan, Fill::Normal, false},       {"asin", asin, Fill::Unit, false},
      {"acos", acos, Fill::Unit, false},       {"atan", atan, Fill::Edge, false},
      {"sinh", sinh, Fill::Normal, false},     {"cosh", cosh, Fill::Normal, false},
      {"tanh", tanh, Fill::Edge, true},        {"sigmoid", sigmoid, Fill::Edge, true},
      {"relu", relu, Fill::Edge, true},        {"relu6", relu6, Fill::Edge, false},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x); }, Fill::Edge, false},
      {"elu", [](const Tensor& x) { return elu(x); }, Fill::Edge, false},
      {"selu", selu, Fill::Edge, false},
      {"gelu", [](const Tensor& x) { return gelu(x); }, Fill::Edge, false},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); }, Fill::Normal, false},
      {"silu", silu, Fill::Edge, false},       {"mish", mish, Fill::Normal, false},
      {"softplus", [](const Tensor& x) { return softplus(x); }, Fill::Edge, false},
      {"hardswish", hardswish, Fill::Edge, false}, {"hardsigmoid", hardsigmoid, Fill::Edge, false},
      {"erf", erf, Fill::Edge, false},         {"floor", floor, Fill::Edge, true},
      {"ceil", ceil, Fill::Edge, true},        {"round", round, Fill::Edge, true},
      {"trunc", trunc, Fill::Edge, true},
  };
  return rows;
}

struct BinaryRow {
  const char* name;
  Tensor (*fn)(const Tensor&, const Tensor&);
  bool ints;
  bool floats = true;
};

const std::vector<BinaryRow>& binary_rows() {
  using namespace ops;
  static const std::vector<BinaryRow> rows = {
      {"add", add, true}, {"sub", sub, true}, {"mul", mul, true}, {"div", div, true},
      {"maximum", maximum, true}, {"minimum", minimum, true}, {"pow", pow, false}, {"atan2", atan2, false},
      {"equal", equal, true}, {"not_equal", not_equal, true}, {"less", less, true},
      {"less_equal", less_equal, true}, {"greater", greater, true}, {"greater_equal", greater_equal, true},
      {"logical_and", logical_and, true}, {"logical_or", logical_or, true}, {"logical_xor", logical_xor, true},
      {"bitwise_and", bitwise_and, true, false}, {"bitwise_or", bitwise_or, true, false},
      {"bitwise_xor", bitwise_xor, true, false},
  };
  return rows;
}

}  // namespace

SPORE_ORACLE_FAMILY(elementwise) {
  uint64_t seed = 1;
  const std::vector<Shape> shapes = {{}, {7}, {3, 33}, {2, 0, 3}, {4, 5, 130}};
  for (const auto& row : unary_rows()) {
    for (DType dt : kFloatTypes)
      for (const Shape& s : shapes) {
        Tensor x = rand_tensor(s, dt, seed++, row.fill);
        w.add(row.name, {x}, {row.fn(x)});
      }
    // strided input
    Tensor x = non_contiguous(rand_tensor({6, 9}, DType::Float32, seed++, row.fill));
    w.add(row.name, {x}, {row.fn(x)});
    Tensor xt = rand_tensor({5, 7}, DType::Float64, seed++, row.fill).transpose(0, 1);
    w.add(row.name, {xt}, {row.fn(xt)});
    if (row.ints)
      for (DType dt : {DType::Int32, DType::Int64, DType::Int8}) {
        Tensor xi = rand_tensor({17}, dt, seed++, Fill::Int);
        if (std::string(row.name) == "log" || std::string(row.name) == "sqrt") xi = ops::abs(xi) + 1;
        w.add(row.name, {xi}, {row.fn(xi)});
      }
  }
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{}, {}}, {{5}, {5}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}}, {{4}, {}}, {{}, {2, 3}}, {{0, 3}, {1, 3}}, {{64, 70}, {64, 70}}};
  for (const auto& row : binary_rows()) {
    std::string name = row.name;
    Fill fill = name == "pow" ? Fill::Positive : Fill::Edge;
    if (row.floats)
      for (DType dt : kFloatTypes)
        for (auto& [sa, sb] : pairs) {
          Tensor a = rand_tensor(sa, dt, seed++, fill), b = rand_tensor(sb, dt, seed++, name == "pow" ? Fill::Normal : fill);
          w.add(row.name, {a, b}, {row.fn(a, b)});
        }
    if (row.ints)
      for (DType dt : {DType::Int64, DType::Int32, DType::UInt8, DType::Int16, DType::Bool})
        for (auto& [sa, sb] : pairs) {
          if ((name == "sub" || name == "div") && dt == DType::Bool) continue;
          Tensor a = rand_tensor(sa, dt, seed++, dt == DType::Bool ? Fill::Bool : Fill::Int);
          Tensor b = rand_tensor(sb, dt, seed++, dt == DType::Bool ? Fill::Bool : Fill::Int);
          w.add(row.name, {a, b}, {row.fn(a, b)});
        }
    // strided and mixed-dtype operands (promotion)
    Tensor a = non_contiguous(rand_tensor({5, 6}, DType::Float32, seed++, fill));
    Tensor b = rand_tensor({6, 5}, DType::Float32, seed++, fill).transpose(0, 1);
    if (row.floats) w.add(row.name, {a, b}, {row.fn(a, b)});
    Tensor ai = rand_tensor({4, 3}, DType::Int32, seed++, Fill::Int);
    Tensor bf = rand_tensor({3}, DType::Float64, seed++, fill);
    if (row.floats) w.add(row.name, {ai, bf}, {row.fn(ai, bf)});
    Tensor af = rand_tensor({4, 3}, DType::Float16, seed++, fill);
    Tensor bi = rand_tensor({3}, DType::Int64, seed++, Fill::Int);
    if (row.floats && name != "pow") w.add(row.name, {af, bi}, {row.fn(af, bi)});
  }
  // Weak scalars: the Python side sees a 0-d tensor flagged weak via attrs.
  for (DType dt : {DType::Float16, DType::Float32, DType::Int32}) {
    Tensor x = rand_tensor({6}, dt, seed++, Fill::Int);
    w.add("add_scalar", {x}, {x + 2.5}, {{"value", 2.5}});
    w.add("mul_scalar", {x}, {x * 3}, {{"value", int64_t{3}}});
  }
  for (DType from : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64, DType::Int8, DType::UInt8, DType::Bool})
    for (DType to : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64, DType::Int32, DType::Int8, DType::UInt8, DType::Bool}) {
      Tensor x = rand_tensor({9}, from, seed++, from == DType::Bool ? Fill::Bool : Fill::Normal) * (is_floating(from) ? 3 : 1);
      if (is_floating(from) && is_integral(to, true) && to != DType::Bool && to != DType::Int64 && to != DType::Int32)
        continue;  // out-of-range float -> small int is implementation-defined in PyTorch too
      w.add("cast", {x}, {ops::cast(x, to)}, {{"dtype", std::string(dtype_name(to))}});
    }
}

}  // namespace spore::oracle
