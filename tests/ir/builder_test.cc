// SPDX-License-Identifier: Apache-2.0
// GraphBuilder checks each node as it is added; each user error names what was wrong.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "test_ops.h"

namespace spore::ir {
namespace {

using test_ops::scale;
using test_ops::tt;

class IrBuilder : public ::testing::Test {
 protected:
  void SetUp() override { test_ops::register_test_ops(); }
  Type f32_ = tt(DType::Float32, {Dim::symbol("n"), 4});
};

TEST_F(IrBuilder, BuildsATypedGraph) {
  GraphBuilder b("main");
  ValueRef x = b.param(f32_), y = b.param(f32_);
  ValueRef z = b.add1("tadd", nullptr, {x, y}, f32_, "net/fc");
  b.output(z);
  GraphPtr g = b.build();
  ASSERT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->scope(), "net/fc");
  EXPECT_EQ(g->type_of(z), f32_);
  EXPECT_EQ(z, (ValueRef{0, 0}));
}

TEST_F(IrBuilder, MismatchedInputTypesNameBothTypes) {
  GraphBuilder b("main");
  ValueRef x = b.param(f32_), y = b.param(tt(DType::Int32, {Dim::symbol("n"), 4}));
  EXPECT_IR_ERROR(b.add1("tadd", nullptr, {x, y}, f32_),
                  "[tadd] input types differ: float32[n, 4] vs int32[n, 4]; cast or reshape one of them");
  EXPECT_IR_ERROR(b.add1("tadd", nullptr, {x, x}, tt(DType::Float64, {1})), "[tadd] output must have the input type float32[n, 4]");
}

TEST_F(IrBuilder, UndefinedInputsAndUnknownOpsAreRejected) {
  GraphBuilder b("main");
  ValueRef x = b.param(f32_);
  EXPECT_IR_ERROR(b.add1("tadd", nullptr, {x, ValueRef{3, 0}}, f32_),
                  "input 1 of 'tadd' refers to value (3, 0), which this builder has not defined");
  EXPECT_IR_ERROR(b.add1("matmul_v9", nullptr, {x}, f32_), "[ir] unknown op 'matmul_v9'; register it with ir::register_op");
  EXPECT_IR_ERROR(b.output(ValueRef{ValueRef::kParam, 1}), "output 0 refers to value (-1, 1)");
}

TEST_F(IrBuilder, AttributesArePresentExactlyWhenTheOpHasThem) {
  GraphBuilder b("main");
  ValueRef x = b.param(f32_);
  EXPECT_IR_ERROR(b.add1("tscale", nullptr, {x}, f32_), "node 'tscale' needs attributes but got none");
  EXPECT_IR_ERROR(b.add1("tadd", scale(2), {x, x}, f32_), "node 'tadd' takes no attributes but got some");
}

TEST_F(IrBuilder, OrderedEffectsTakeAndReturnTokens) {
  GraphBuilder b("main");
  ValueRef x = b.param(f32_), tok = b.param(TokenType{});
  EXPECT_IR_ERROR(b.add1("print", nullptr, {x}, TokenType{}), "node 'print' has an ordered effect but takes no token");
  EXPECT_IR_ERROR(b.add1("print", nullptr, {tok, x}, f32_), "node 'print' has an ordered effect but returns no token");
  EXPECT_IR_ERROR(b.param(TokenType{}, Role::Buffer), "a token parameter must have role data, not buffer");
}

TEST_F(IrBuilder, BranchSignatureMismatchShowsBothTypes) {
  GraphBuilder t("then_branch"), e("else_branch");
  t.output(t.param(f32_));
  e.output(e.param(tt(DType::Float64, {2})));
  GraphBuilder b("main");
  ValueRef p = b.param(tt(DType::Bool, {})), x = b.param(f32_);
  EXPECT_IR_ERROR(b.add1("tif", nullptr, {p, x}, f32_, "", {t.build(), e.build()}),
                  "[tif] sub-graph @else_branch takes (float64[2]) but the node passes (float32[n, 4])");
}

TEST_F(IrBuilder, BuildVerifiesStateAliases) {
  GraphBuilder b("main");
  ValueRef x = b.param(f32_);
  b.output(b.add1("tscale", scale(0.5), {x}, f32_), 0);
  EXPECT_IR_ERROR(b.build(), "output 0 updates input 0 of role data; only parameters and buffers are state");
}

}  // namespace
}  // namespace spore::ir
