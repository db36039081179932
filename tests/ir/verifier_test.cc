// SPDX-License-Identifier: Apache-2.0
// The verifier on graphs assembled without the builder (as a pass would): one test per invariant.
#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "test_ops.h"

namespace spore::ir {
namespace {

using test_ops::tt;

class IrVerifier : public ::testing::Test {
 protected:
  void SetUp() override { test_ops::register_test_ops(); }
  static NodePtr node(const char* op, std::vector<ValueRef> in, std::vector<Type> out, std::vector<GraphPtr> subs = {}) {
    return std::make_shared<const Node>(op, nullptr, std::move(in), std::move(out), "", std::move(subs));
  }
  static constexpr ValueRef p(int i) { return {ValueRef::kParam, i}; }
  Type f32_ = tt(DType::Float32, {2});
};

TEST_F(IrVerifier, AcceptsTheSampleGraph) { EXPECT_NO_THROW(verify(*test_ops::sample_graph())); }

TEST_F(IrVerifier, TypesMustBeConsistent) {
  Graph g("main", {{f32_}, {tt(DType::Int32, {2})}}, {node("tadd", {p(0), p(1)}, {f32_})}, {{{0, 0}}});
  EXPECT_IR_ERROR(verify(g), "[tadd] input types differ: float32[2] vs int32[2]");
}

TEST_F(IrVerifier, UsesMustFollowDefinitions) {
  Graph g("main", {{f32_}}, {node("tadd", {p(0), {1, 0}}, {f32_}), node("tadd", {p(0), p(0)}, {f32_})}, {{{1, 0}}});
  EXPECT_IR_ERROR(verify(g), "graph 'main': node 0 (tadd) uses output 0 of node 1 before it is defined");
}

TEST_F(IrVerifier, SubGraphsMustBeClosed) {
  // The branch's node names parameter 3, which exists only in the outer graph.
  auto branch = std::make_shared<const Graph>("then_branch", std::vector<Param>{{f32_}},
                                              std::vector<NodePtr>{node("tadd", {p(0), p(3)}, {f32_})},
                                              std::vector<Output>{{{0, 0}}});
  Graph g("main", {{tt(DType::Bool, {})}, {f32_}, {f32_}, {f32_}},
          {node("tif", {p(0), p(1)}, {f32_}, {branch, branch})}, {{{0, 0}}});
  EXPECT_IR_ERROR(verify(g), "sub-graph 'then_branch' is not closed: node 0 (tadd) uses parameter 3");
}

TEST_F(IrVerifier, RolesMustBeValid) {
  EXPECT_IR_ERROR(verify(Graph("main", {{f32_, static_cast<Role>(9)}}, {}, {})), "parameter 0 has an invalid role 9");
  EXPECT_IR_ERROR(verify(Graph("main", {{TokenType{}, Role::Parameter}}, {}, {})), "is a token with role parameter");
  auto branch = std::make_shared<const Graph>("body", std::vector<Param>{{f32_, Role::Buffer}}, std::vector<NodePtr>{},
                                              std::vector<Output>{{p(0)}});
  Graph g("main", {{tt(DType::Bool, {})}, {f32_}}, {node("tif", {p(0), p(1)}, {f32_}, {branch, branch})}, {{{0, 0}}});
  EXPECT_IR_ERROR(verify(g), "sub-graph 'body': parameter 0 has role buffer; sub-graph parameters are data");
}

TEST_F(IrVerifier, StateAliasesMustTargetStateOfTheSameType) {
  std::vector<Param> ps{{f32_}, {f32_, Role::Parameter}, {tt(DType::Float64, {2}), Role::Buffer}};
  auto with = [&](std::vector<Output> outs) { return Graph("main", ps, {}, std::move(outs)); };
  EXPECT_IR_ERROR(verify(with({{p(0), 7}})), "output 0 updates input 7, but the graph has 3 inputs");
  EXPECT_IR_ERROR(verify(with({{p(0), 0}})), "updates input 0 of role data; only parameters and buffers are state");
  EXPECT_IR_ERROR(verify(with({{p(1), 2}})),
                  "output 0 has type float32[2] but updates input 2 of type float64[2]; a state write keeps the type");
  EXPECT_IR_ERROR(verify(with({{p(1), 1}, {p(0), 1}})), "input 1 is updated by two outputs");
  EXPECT_NO_THROW(verify(with({{p(0), 1}, {p(2), 2}})));
}

TEST_F(IrVerifier, NoDanglingValues) {
  Graph g("main", {{f32_}}, {node("tadd", {p(0), p(0)}, {f32_})}, {{{0, 1}}});
  EXPECT_IR_ERROR(verify(g), "graph 'main': an output uses output 1 of node 0, which is not defined (dangling value)");
  Graph h("main", {{f32_}}, {node("tadd", {p(0), p(4)}, {f32_})}, {{{0, 0}}});
  EXPECT_IR_ERROR(verify(h), "node 0 (tadd) uses parameter 4, which is not defined");
}

TEST_F(IrVerifier, TypesAreWellFormed) {
  EXPECT_IR_ERROR(verify(Graph("main", {{TensorType{DType::Int8, false, {2}, "n h"}}}, {}, {})),
                  "parameter 0 has layout 'n h', which is not an identifier");
  EXPECT_IR_ERROR(verify(Graph("main", {{tt(DType::Int64, {3, -2})}}, {}, {})),
                  "graph 'main': parameter 0 has type int64[3, -2] with a negative dimension");
  Dim n = Dim::symbol("n");
  Graph g("main", {{f32_}}, {node("tuniform", {p(0)}, {tt(DType::Float32, {n - 5, -1})})}, {{{0, 0}}});
  EXPECT_IR_ERROR(verify(g), "node 0 (tuniform) has type float32[(n - 5), -1] with a negative dimension");
}

TEST_F(IrVerifier, OrderedEffectsNeedATokenInput) {
  Graph g("main", {{f32_}}, {node("print", {p(0)}, {TokenType{}})}, {{{0, 0}}});
  EXPECT_IR_ERROR(verify(g), "node 'print' has an ordered effect but takes no token");
}

}  // namespace
}  // namespace spore::ir
