// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "ir/dim.h"
#include "ir/float_text.h"
#include "ir/type.h"
#include "test_ops.h"

namespace spore::ir {
namespace {

TEST(IrDim, ConstantsFoldAndSymbolsStayExact) {
  Dim n = Dim::symbol("n");
  EXPECT_EQ((Dim(3) + Dim(4)).value(), 7);
  EXPECT_EQ(floordiv(Dim(-7), Dim(2)).value(), -4);  // floor, like Python
  EXPECT_EQ((n * 2 + 1).str(), "((n * 2) + 1)");
  EXPECT_EQ(floordiv(n - 1, Dim(4)).str(), "((n - 1) // 4)");
  EXPECT_TRUE(n + 1 == Dim::symbol("n") + 1);
  EXPECT_FALSE(n + 1 == Dim(1) + n);  // no reordering: text round-trips as written
}

TEST(IrDim, BadSymbolsAndArithmeticAreUserErrors) {
  EXPECT_IR_ERROR(Dim::symbol("2n"), "[ir] symbol name '2n' is not an identifier");
  EXPECT_IR_ERROR(floordiv(Dim::symbol("n"), Dim(0)), "n // 0 divides by zero");
  EXPECT_IR_ERROR(Dim(INT64_MAX) + Dim(1), "overflow int64");
}

TEST(IrDim, TypesPrintDtypeWeakShapeAndLayout) {
  EXPECT_EQ(type_str(TensorType{DType::BFloat16, true, {}, {}}), "~bfloat16[]");
  EXPECT_EQ(type_str(TensorType{DType::Int64, false, {Dim::symbol("n"), 3}, "nhwc"}), "int64[n, 3]<nhwc>");
  EXPECT_EQ(type_str(TokenType{}), "token");
  for (int i = 0; i < kNumDTypes; ++i) EXPECT_EQ(dtype_from_name(dtype_name(static_cast<DType>(i))), static_cast<DType>(i));
  EXPECT_FALSE(dtype_from_name("float8").has_value());
}

TEST(IrDim, FloatTextIsExact) {
  for (double v : {0.1, -0.0, 1.0 / 3.0, 5e-324, 1.7976931348623157e308}) {
    double back = parse_float(format_float(v));
    EXPECT_EQ(std::memcmp(&back, &v, sizeof v), 0) << format_float(v);
  }
  EXPECT_IR_ERROR(parse_float("0.1x"), "is not a floating-point number");
}

}  // namespace
}  // namespace spore::ir
