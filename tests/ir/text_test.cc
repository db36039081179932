// SPDX-License-Identifier: Apache-2.0
// The text form round-trips exactly: print(parse(print(g))) == print(g), parse(print(g)) == g.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "test_ops.h"

namespace spore::ir {
namespace {

TEST(IrText, SampleGraphRoundTripsExactly) {
  GraphPtr g = test_ops::sample_graph();
  std::string text = print_graph(*g);
  GraphPtr back = parse_graph(text);
  EXPECT_TRUE(*back == *g) << text;
  EXPECT_EQ(print_graph(*back), text);
}

TEST(IrText, SampleGraphPrintsReadably) {
  std::string text = print_graph(*test_ops::sample_graph());
  // Spot checks of each feature; docs/mindir.md shows a whole graph.
  for (const char* part : {
           "graph @main(%0: data float32[n, 4], %1: parameter float32[n, 4], "
           "%2: buffer float64[((n // 2) - 1), ((batch_2 * 3) + n)], %3: data uint8[16], %4: data token, "
           "%5: data bool[], %6: constant float16[2, 3]<nhwc>, %7: data ~bfloat16[], %8: data int32[0]) {",
           "  %9 = tadd(%0, %1) : float32[n, 4] scope \"encoder/layers.3/attn\"\n",
           "  %10 = tscale{alpha=0.1}(%9) : float32[n, 4] scope \"encoder/layers.3/attn\"\n",
           "  %11 = tuniform(%3) : float32[(n * 4)]\n",
           "  %12 = print(%4, %10) : token\n",
           "  %13 = tif(%5, %9, %10) : float32[n, 4] scope \"cond\" {\n"
           "    graph @then_branch(%0: data float32[n, 4], %1: data float32[n, 4]) {\n"
           "      %2 = tadd(%0, %1) : float32[n, 4] scope \"head\"\n"
           "      return %2\n"
           "    }\n",
           "scale{alpha=-2.5e-300}(%0)",
           "  %14, %15 = twhile(%5, %13) : bool[], float32[n, 4] {\n",
           "scale{alpha=0.3333333333333333}(%1)",
           "  return %15, %11, %12, %16 updates %2, %17 updates %1\n}\n"})
    EXPECT_NE(text.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << text;
}

TEST(IrText, ParserAcceptsAnyNamesAndSpacing) {
  test_ops::register_test_ops();
  GraphPtr g = parse_graph(
      "graph @f(%x: data float32[n], %w: parameter float32[n])\n{ %y = tscale{alpha=2}(%w) : float32[n]\n"
      "  return %x, %y updates %w }");
  EXPECT_EQ(print_graph(*g),
            "graph @f(%0: data float32[n], %1: parameter float32[n]) {\n"
            "  %2 = tscale{alpha=2}(%1) : float32[n]\n"
            "  return %0, %2 updates %1\n}\n");
}

TEST(IrText, ParseErrorsNameTheLineAndProblem) {
  test_ops::register_test_ops();
  EXPECT_IR_ERROR(parse_graph("graph @f(%x: data float32[2]) {\n  %y = tadd(%x, %z) : float32[2]\n  return %y\n}"),
                  "[ir] parse error at line 2: unknown value %z");
  EXPECT_IR_ERROR(parse_graph("graph @f(%x: data float33[2]) {\n return %x }"), "unknown type 'float33'");
  EXPECT_IR_ERROR(parse_graph("graph @f(%x: state float32[2]) {\n return %x }"), "unknown role 'state'");
  EXPECT_IR_ERROR(parse_graph("graph @f(%x: data float32[2]) {\n %y = tscale{beta=1}(%x) : float32[2]\n return %y }"),
                  "[tscale] attributes 'beta=1' lack alpha=");
  EXPECT_IR_ERROR(parse_graph("graph @f(%x: data float32[2]) {\n %y = tadd(%x, %x) : float32[2]\n return %y updates %y }"),
                  "'updates' must name a graph parameter");
  EXPECT_IR_ERROR(parse_graph("graph @f(%x: data float32[2]) {\n return %x updates %x }"),
                  "only parameters and buffers are state");
}

TEST(IrText, SubGraphsCannotNameOuterValues) {
  test_ops::register_test_ops();
  EXPECT_IR_ERROR(parse_graph("graph @f(%p: data bool[], %x: data float32[2]) {\n"
                              "  %y = tif(%p, %x) : float32[2] {\n"
                              "    graph @a(%u: data float32[2]) {\n      return %x\n    }\n"
                              "    graph @b(%u: data float32[2]) {\n      return %u\n    }\n"
                              "  }\n  return %y\n}"),
                  "line 4: unknown value %x; values must be defined before use, and sub-graphs are closed");
}

}  // namespace
}  // namespace spore::ir
