// SPDX-License-Identifier: Apache-2.0
// The fusion pass with row reductions (passes/fuse.h): reductions over trailing dims (keepdims)
// join the elementwise ops around them in one row program; other reductions stay out. Text IR in,
// text IR out, and whole gradients run fused against the unfused graph.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "codegen/fused.h"
#include "ir/printer.h"
#include "pass_text.h"
#include "passes/fuse.h"
#include "passes/pipeline.h"
#include "spore/spore.h"
#include "trace_program.h"
#include "transforms/interpreter.h"

namespace spore::passes {
namespace {

std::string fuse(const std::string& text) {
  codegen::register_fused_ir_op();
  return ir::print_graph(*fuse_elementwise(testing::parse(text)));
}
std::string canon(const std::string& text) {
  codegen::register_fused_ir_op();
  return testing::canonical(text);
}

// layer_norm's input gradient: the per-row mean of dy * gamma and the ops reading it back are
// one node; gamma's gradient, a reduction over the rows, reads the product from outside it.
TEST(PassFuseRows, AReductionOverTheLastDimJoinsTheOpsAroundIt) {
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[64, 32], %1: data float32[64, 32], %2: data float32[32], %3: data float32[64, 1]) {
  %4 = mul{}(%1, %2) : float32[64, 32]
  %5 = reduce_mean{axes=[1], keepdims=true, correction=0}(%4) : float32[64, 1]
  %6 = sub{}(%4, %5) : float32[64, 32]
  %7 = mul{}(%6, %3) : float32[64, 32]
  %8 = reduce_sum{axes=[0], keepdims=false, correction=0}(%4) : float32[32]
  return %7, %8
})"),
            canon(R"(
graph @main(%0: data float32[64, 32], %1: data float32[64, 32], %2: data float32[32], %3: data float32[64, 1]) {
  %4, %5 = fused{}(%1, %2, %3) : float32[64, 32], float32[64, 32] {
    graph @fused(%0: data float32[64, 32], %1: data float32[32], %2: data float32[64, 1]) {
      %3 = mul{}(%0, %1) : float32[64, 32]
      %4 = reduce_mean{axes=[1], keepdims=true, correction=0}(%3) : float32[64, 1]
      %5 = sub{}(%3, %4) : float32[64, 32]
      %6 = mul{}(%5, %2) : float32[64, 32]
      return %3, %6
    }
  }
  %6 = reduce_sum{axes=[0], keepdims=false, correction=0}(%4) : float32[32]
  return %5, %6
})"));
}

// Per-row values computed from per-row inputs (1 / sqrt(var + eps)) join the group of the
// full-size ops that read them, and a per-row result leaves it with its reduced shape.
TEST(PassFuseRows, PerRowOpsJoinAndPerRowResultsLeave) {
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[4, 8, 32], %1: data float32[4, 8, 1]) {
  %2 = constant{dtype=float32, weak=true, f=1e-05, i=0}() : ~float32[]
  %3 = add{}(%1, %2) : float32[4, 8, 1]
  %4 = rsqrt{a=0, b=0}(%3) : float32[4, 8, 1]
  %5 = mul{}(%0, %4) : float32[4, 8, 32]
  %6 = reduce_max{axes=[2], keepdims=true, correction=0}(%5) : float32[4, 8, 1]
  %7 = sub{}(%5, %6) : float32[4, 8, 32]
  return %7, %6
})"),
            canon(R"(
graph @main(%0: data float32[4, 8, 32], %1: data float32[4, 8, 1]) {
  %2, %3 = fused{}(%1, %0) : float32[4, 8, 1], float32[4, 8, 32] {
    graph @fused(%0: data float32[4, 8, 1], %1: data float32[4, 8, 32]) {
      %2 = constant{dtype=float32, weak=true, f=1e-05, i=0}() : ~float32[]
      %3 = add{}(%0, %2) : float32[4, 8, 1]
      %4 = rsqrt{a=0, b=0}(%3) : float32[4, 8, 1]
      %5 = mul{}(%1, %4) : float32[4, 8, 32]
      %6 = reduce_max{axes=[2], keepdims=true, correction=0}(%5) : float32[4, 8, 1]
      %7 = sub{}(%5, %6) : float32[4, 8, 32]
      return %6, %7
    }
  }
  return %3, %2
})"));
}

// Reductions over leading dims, without keepdims, or over a dim of size 1 are not row
// reductions: they stay unfused and split the elementwise ops into separate groups.
TEST(PassFuseRows, OtherReductionsStayOut) {
  const std::string text = R"(
graph @main(%0: data float32[64, 32], %1: data float32[64, 1]) {
  %2 = exp{a=0, b=0}(%0) : float32[64, 32]
  %3 = reduce_sum{axes=[1], keepdims=false, correction=0}(%2) : float32[64]
  %4 = reduce_sum{axes=[0], keepdims=true, correction=0}(%2) : float32[1, 32]
  %5 = reduce_sum{axes=[1], keepdims=true, correction=0}(%1) : float32[64, 1]
  %6 = mul{}(%1, %5) : float32[64, 1]
  return %3, %4, %6
})";
  EXPECT_EQ(fuse(text), canon(text));
}

TEST(PassFuseRows, TwoReductionsOverDifferentDimsAreTwoGroups) {
  const std::string out = fuse(R"(
graph @main(%0: data float32[16, 4, 32]) {
  %1 = exp{a=0, b=0}(%0) : float32[16, 4, 32]
  %2 = reduce_sum{axes=[2], keepdims=true, correction=0}(%1) : float32[16, 4, 1]
  %3 = div{}(%1, %2) : float32[16, 4, 32]
  %4 = reduce_sum{axes=[1, 2], keepdims=true, correction=0}(%3) : float32[16, 1, 1]
  %5 = mul{}(%3, %4) : float32[16, 4, 32]
  return %5
})");
  // exp, the row sum and the quotient are one group; the second reduction reduces other dims,
  // so it and the product it feeds are another.
  size_t groups = 0;
  for (size_t at = out.find("fused{}"); at != std::string::npos; at = out.find("fused{}", at + 1)) ++groups;
  EXPECT_EQ(groups, 2u) << out;
}

// Rows too short (per-row work outweighs the traffic saved) or too few (rows are a row
// program's unit of parallelism) to be worth a row program stay unfused; so does a group whose
// op has no port in the C++ emitter (log): as a row program it would stay on the interpreter.
TEST(PassFuseRows, ShortRowsFewRowsAndUnportedOpsStayOut) {
  for (const std::string shape : {"[64, 16]", "[8, 256]"}) {
    const std::string row = shape == "[64, 16]" ? "[64, 1]" : "[8, 1]";
    const std::string text = "graph @main(%0: data float32" + shape + ") {\n  %1 = exp{a=0, b=0}(%0) : float32" + shape +
                             "\n  %2 = reduce_sum{axes=[1], keepdims=true, correction=0}(%1) : float32" + row +
                             "\n  %3 = div{}(%1, %2) : float32" + shape + "\n  return %3\n}";
    const std::string out = fuse(text);
    EXPECT_NE(out.find("  %2 = reduce_sum"), std::string::npos) << shape << ": the reduction should stay unfused\n" << out;
  }
  const std::string out = fuse(R"(
graph @main(%0: data float32[64, 32]) {
  %1 = log{a=0, b=0}(%0) : float32[64, 32]
  %2 = reduce_sum{axes=[1], keepdims=true, correction=0}(%1) : float32[64, 1]
  %3 = sub{}(%1, %2) : float32[64, 32]
  %4 = mul{}(%3, %3) : float32[64, 32]
  return %4
})");
  size_t at = out.find("fused{}");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string body = out.substr(at);
  EXPECT_NE(body.find("reduce_sum"), std::string::npos) << out;
  EXPECT_EQ(body.find("log{"), std::string::npos) << "log joined a row group:\n" << out;
}

// A per-row group that depends on the row group through an outside node (here reshapes of its
// row sum) is not taken in: the merged group would come both before and after that node.
TEST(PassFuseRows, APerRowProducerBehindAnOutsideNodeStaysApart) {
  const std::string out = fuse(R"(
graph @main(%0: data float32[64, 32]) {
  %1 = exp{a=0, b=0}(%0) : float32[64, 32]
  %2 = reduce_sum{axes=[1], keepdims=true, correction=0}(%1) : float32[64, 1]
  %3 = reshape{shape=[64]}(%2) : float32[64]
  %4 = reshape{shape=[64, 1]}(%3) : float32[64, 1]
  %5 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
  %6 = add{}(%4, %5) : float32[64, 1]
  %7 = rsqrt{a=0, b=0}(%6) : float32[64, 1]
  %8 = mul{}(%1, %7) : float32[64, 32]
  return %8
})");
  // The graph verified when printed; the row group and the per-row group are two nodes.
  size_t groups = 0;
  for (size_t at = out.find("fused{}"); at != std::string::npos; at = out.find("fused{}", at + 1)) ++groups;
  EXPECT_EQ(groups, 2u) << out;
  EXPECT_LT(out.find("reshape{shape=[64]}"), out.find("rsqrt")) << out;
}

// A row group with more results than a node returns is cut; the pieces still compute the same.
TEST(PassFuseRows, AGroupWithTooManyResultsIsCutAndComputesTheSame) {
  const std::string text = R"(
graph @main(%0: data float32[64, 32]) {
  %1 = exp{a=0, b=0}(%0) : float32[64, 32]
  %2 = reduce_sum{axes=[1], keepdims=true, correction=0}(%1) : float32[64, 1]
  %3 = div{}(%1, %2) : float32[64, 32]
  %4 = mul{}(%3, %3) : float32[64, 32]
  %5 = add{}(%4, %1) : float32[64, 32]
  %6 = sub{}(%5, %3) : float32[64, 32]
  return %1, %2, %3, %4, %5, %6
})";
  codegen::register_fused_ir_op();
  const ir::GraphPtr g = testing::parse(text), f = fuse_elementwise(g);
  size_t fused = 0, rows = 0;
  for (const ir::NodePtr& n : f->nodes()) {
    if (n->op() != codegen::kFusedOp) continue;
    ++fused;
    EXPECT_LE(n->outputs().size(), 4u);
    for (const ir::NodePtr& m : n->subgraphs()[0]->nodes()) rows += m->op() == "reduce_sum";
  }
  EXPECT_GE(fused, 2u) << ir::print_graph(*f);
  EXPECT_EQ(rows, 1u) << "the row sum should sit in one of the pieces:\n" << ir::print_graph(*f);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  Tensor x = Tensor::empty({64, 32}, DType::Float32);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = nd(rng);
  const std::vector<Tensor> in{x};
  const auto want = transforms::interpret(*g, in), got = transforms::interpret(*f, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) {
    const auto a = got[j].contiguous().to_vector<float>(), b = want[j].contiguous().to_vector<float>();
    EXPECT_EQ(a, b) << "output " << j << "\n" << ir::print_graph(*f);
  }
}

// Whole gradients through the level-2 pipeline: the fused graph holds row programs and gives
// the unfused graph's values (to the rounding of a different summation order).
TEST(PassFuseRows, SoftmaxAndLayerNormGradientsMatchTheUnfusedGraph) {
  auto f = [](const std::vector<Tensor>& x) {
    auto loss = [](const Tensor& v, const Tensor& w, const Tensor& b) {
      Tensor h = ops::layer_norm(v, {v.shape().back()}, w, b, 1e-5);
      Tensor s = ops::softmax(ops::matmul(h, ops::transpose(h, 1, 2)) * 0.25, -1);
      return ops::sum(ops::matmul(s, h) * v);
    };
    return grad(loss, {0, 1, 2})(x[0], x[1], x[2]);
  };
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto rnd = [&](Shape s) {
    Tensor t = Tensor::empty(s, DType::Float32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = nd(rng);
    return t;
  };
  const std::vector<Tensor> in{rnd({2, 32, 32}), rnd({32}), rnd({32})};
  const ir::GraphPtr g = spore::testing::trace_program(f, in).graph;
  const ir::GraphPtr o = optimize(g, 2);
  int rows = 0;
  for (const ir::NodePtr& n : o->nodes())
    if (n->op() == codegen::kFusedOp)
      for (const ir::NodePtr& m : n->subgraphs()[0]->nodes()) rows += m->op().rfind("reduce_", 0) == 0;
  EXPECT_GE(rows, 3) << "expected the softmax and layer_norm gradients' row sums fused:\n" << ir::print_graph(*o);
  const auto want = transforms::interpret(*g, in), got = transforms::interpret(*o, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) {
    const auto a = got[j].to_vector<float>(), b = want[j].to_vector<float>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 2e-4 * std::max(1.f, std::fabs(b[i]))) << "output " << j << " element " << i;
  }
}

}  // namespace
}  // namespace spore::passes
