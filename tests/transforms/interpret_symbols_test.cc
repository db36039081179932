// SPDX-License-Identifier: Apache-2.0
// Graphs with symbolic dimensions (an ONNX file's dynamic batch): shape attributes keep their
// symbols by name in the IR text, so the text means the same in any process, and the interpreter
// binds the symbols from each call's inputs, so one graph runs at every batch size.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/attrs.h"
#include "error_matchers.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "spore/spore.h"
#include "passes/lower_plan.h"
#include "runtime/plan.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"

namespace spore {
namespace {

TEST(SymbolicDims, TextNamesSymbolsAndFoldsProducts) {
  const Dim n = symbol_named("batch");
  EXPECT_EQ(dim_from_text("batch"), n);
  EXPECT_EQ(dim_from_text("(batch*512)"), dim_mul(n, 512));
  EXPECT_EQ(dim_from_text(dim_str(dim_mul(dim_mul(n, 4), 128))), dim_mul(n, 512));
  EXPECT_EQ(dim_floordiv(dim_mul(n, 512), 512), n);  // a flatten's -1 comes back to the batch
  EXPECT_EQ(dim_floordiv(dim_mul(n, 512), 4), dim_mul(n, 128));
  EXPECT_EQ(dim_mul(3, n), dim_mul(n, 3));
  EXPECT_EQ(dim_from_text("-7"), -7);
  EXPECT_TRUE(is_symbol_id(n));
  EXPECT_FALSE(is_symbol_id(INT64_MIN));  // a slice's sentinel, not a symbol
  EXPECT_FALSE(is_symbol_id(-1));
  EXPECT_ERROR(dim_from_text("(batch*"), "bad dimension text");
  auto bind = [n](Dim s, int64_t& size) {
    if (s != n) return false;
    size = 6;
    return true;
  };
  EXPECT_EQ(dim_substitute(dim_add(dim_mul(n, 4), 1), bind), 25);
  EXPECT_TRUE(is_symbolic(dim_substitute(symbol_named("other"), bind)));
}

TEST(SymbolicDims, ReshapeAttributeRoundTripsByName) {
  transforms::register_ir_ops();
  const std::string text =
      "graph @main(%0: data float32[batch, 2, 3]) {\n"
      "  %1 = reshape{shape=[batch, 6]}(%0) : float32[batch, 6]\n"
      "  %2 = reshape{shape=[batch, 3, 2]}(%1) : float32[batch, 3, 2]\n"
      "  return %2\n"
      "}\n";
  ir::GraphPtr g = ir::parse_graph(text);
  const std::string printed = ir::print_graph(*g);
  EXPECT_NE(printed.find("shape=[batch, 6]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("shape=[batch, 3, 2]"), std::string::npos) << printed;
  EXPECT_EQ(ir::print_graph(*ir::parse_graph(printed)), printed);

  // One graph, two batch sizes: the symbol is bound per call.
  for (int64_t b : {1, 4}) {
    const Tensor x = ops::arange(0, static_cast<double>(b * 6), 1, ops::TensorOptions{DType::Float32}).reshape({b, 2, 3});
    auto out = transforms::interpret(*g, std::vector<Tensor>{x});
    ASSERT_EQ(out[0].shape(), (Shape{b, 3, 2}));
    EXPECT_EQ(out[0].to_vector<float>(), x.to_vector<float>());
  }
}

TEST(SymbolicDims, OneSymbolHasOneSizePerCall) {
  transforms::register_ir_ops();
  ir::GraphPtr g = ir::parse_graph(
      "graph @main(%0: data float32[n, 2], %1: data float32[n, 2]) {\n"
      "  %2 = add{}(%0, %1) : float32[n, 2]\n"
      "  return %2\n"
      "}\n");
  EXPECT_ERROR(transforms::interpret(*g, std::vector<Tensor>{ops::zeros({3, 2}), ops::zeros({4, 2})}),
                   "dimension 'n' of @main is 3 in one input and 4 in input 1");
}

// The plan lowering binds the symbols the same way: one graph over a batch n lowers to a plan
// for each call's size (every slot sized), and the plans compute what the interpreter does.
TEST(SymbolicDims, PlansAreLoweredForEachCallsSizes) {
  transforms::register_ir_ops();
  ir::GraphPtr g = ir::parse_graph(
      "graph @main(%0: data float32[n, 2, 3], %1: parameter float32[6]) {\n"
      "  %2 = reshape{shape=[n, 6]}(%0) : float32[n, 6]\n"
      "  %3 = add{}(%2, %1) : float32[n, 6]\n"
      "  %4 = fill{shape=[n, 6], dtype=float32, value=2, int_value=2}() : float32[n, 6]\n"
      "  %5 = mul{}(%3, %4) : float32[n, 6]\n"
      "  %6 = reshape{shape=[(n*6)]}(%5) : float32[(n*6)]\n"
      "  return %6\n"
      "}\n");
  const Tensor bias = ops::arange(0, 6, 1, ops::TensorOptions{DType::Float32});
  for (int64_t b : {1, 5, 2}) {
    const Tensor x = ops::arange(0, static_cast<double>(b * 6), 1, ops::TensorOptions{DType::Float32}).reshape({b, 2, 3});
    const std::vector<Tensor> in = {x, bias};
    const auto plan = passes::lower_plan(*g, in);
    for (const auto& sl : plan->slots)
      for (Dim d : sl.shape) EXPECT_FALSE(is_symbolic(d)) << runtime::plan_str(*plan);
    const auto got = runtime::run(*plan, in), want = transforms::interpret(*g, in);
    ASSERT_EQ(got[0].shape(), (Shape{b * 6}));
    EXPECT_EQ(got[0].to_vector<float>(), want[0].to_vector<float>());
    const auto v = got[0].to_vector<float>();
    for (int64_t i = 0; i < b * 6; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], 2.0f * static_cast<float>(i + i % 6)) << i;
  }
}

}  // namespace
}  // namespace spore
