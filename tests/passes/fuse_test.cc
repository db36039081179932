// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse.h"

#include <gtest/gtest.h>

#include "codegen/fused.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "pass_text.h"
#include "passes/pipeline.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"

namespace spore::passes {
namespace {

using testing::canonical;

bool same_values(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = a[i].to(DType::Float64).to_vector<double>(), y = b[i].to(DType::Float64).to_vector<double>();
    for (size_t k = 0; k < x.size(); ++k)
      if (!(x[k] == y[k] || (x[k] != x[k] && y[k] != y[k]))) return false;
  }
  return true;
}

// The pass's printed result; fused nodes parse back (register_fused_ir_op gives them their check).
std::string fuse(const std::string& text) {
  codegen::register_fused_ir_op();
  return ir::print_graph(*fuse_elementwise(testing::parse(text)));
}
std::string canon(const std::string& text) {
  codegen::register_fused_ir_op();
  return canonical(text);
}

TEST(PassFuse, FusesAChainIntoOneNodeWithItsLiteralsInside) {
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3], %2: data float32[4, 3]) {
  %3 = mul{}(%0, %1) : float32[4, 3]
  %4 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %5 = add{}(%3, %4) : float32[4, 3]
  %6 = gelu{a=0, b=0}(%5) : float32[4, 3]
  %7 = sigmoid{a=0, b=0}(%2) : float32[4, 3]
  %8 = mul{}(%6, %7) : float32[4, 3]
  return %8
})"),
            canon(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3], %2: data float32[4, 3]) {
  %3 = fused{}(%0, %1, %2) : float32[4, 3] {
    graph @fused(%0: data float32[4, 3], %1: data float32[3], %2: data float32[4, 3]) {
      %3 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
      %4 = mul{}(%0, %1) : float32[4, 3]
      %5 = add{}(%4, %3) : float32[4, 3]
      %6 = gelu{a=0, b=0}(%5) : float32[4, 3]
      %7 = sigmoid{a=0, b=0}(%2) : float32[4, 3]
      %8 = mul{}(%6, %7) : float32[4, 3]
      return %8
    }
  }
  return %3
})"));
}

TEST(PassFuse, AnIntermediateUsedOutsideBecomesASecondOutput) {
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[8], %1: data float32[8]) {
  %2 = add{}(%0, %1) : float32[8]
  %3 = exp{a=0, b=0}(%2) : float32[8]
  %4 = reduce_sum{axes=[0], keepdims=false, correction=0}(%2) : float32[]
  return %3, %4
})"),
            canon(R"(
graph @main(%0: data float32[8], %1: data float32[8]) {
  %2, %3 = fused{}(%0, %1) : float32[8], float32[8] {
    graph @fused(%0: data float32[8], %1: data float32[8]) {
      %2 = add{}(%0, %1) : float32[8]
      %3 = exp{a=0, b=0}(%2) : float32[8]
      return %2, %3
    }
  }
  %4 = reduce_sum{axes=[0], keepdims=false, correction=0}(%2) : float32[]
  return %3, %4
})"));
}

// ReLU's backward mask `y <= 0` of a y that a matmul reads anyway is not made beside y (one more
// result, kept until the backward pass): it joins its reader, the where, and is recomputed there
// from y. A mask of a value only the group itself reads still fuses with its producer.
TEST(PassFuse, AMaskOfAMaterializedValueJoinsItsReaderNotItsProducer) {
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3, 3], %2: data float32[4, 3]) {
  %3 = exp{a=0, b=0}(%0) : float32[4, 3]
  %4 = relu{a=0, b=0}(%3) : float32[4, 3]
  %5 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%4, %1) : float32[4, 3]
  %6 = constant{dtype=float32, weak=true, f=0, i=0}() : ~float32[]
  %7 = less_equal{}(%4, %6) : bool[4, 3]
  %8 = where{}(%7, %6, %2) : float32[4, 3]
  %9 = greater{}(%3, %6) : bool[4, 3]
  return %5, %8, %9
})"),
            canon(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3, 3], %2: data float32[4, 3]) {
  %3, %4 = fused{}(%0) : float32[4, 3], bool[4, 3] {
    graph @fused(%0: data float32[4, 3]) {
      %1 = constant{dtype=float32, weak=true, f=0, i=0}() : ~float32[]
      %2 = exp{a=0, b=0}(%0) : float32[4, 3]
      %3 = relu{a=0, b=0}(%2) : float32[4, 3]
      %4 = greater{}(%2, %1) : bool[4, 3]
      return %3, %4
    }
  }
  %5 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%3, %1) : float32[4, 3]
  %6 = fused{}(%3, %2) : float32[4, 3] {
    graph @fused(%0: data float32[4, 3], %1: data float32[4, 3]) {
      %2 = constant{dtype=float32, weak=true, f=0, i=0}() : ~float32[]
      %3 = less_equal{}(%0, %2) : bool[4, 3]
      %4 = where{}(%3, %2, %1) : float32[4, 3]
      return %4
    }
  }
  return %5, %6, %4
})"));
}

TEST(PassFuse, OpsOfDifferentOutputShapesStayApart) {
  // %2 has shape [3] and %3 shape [4, 3]: different iteration spaces, so the pair [3, 4] is
  // the only group.
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[3], %1: data float32[4, 3]) {
  %2 = exp{a=0, b=0}(%0) : float32[3]
  %3 = mul{}(%2, %1) : float32[4, 3]
  %4 = tanh{a=0, b=0}(%3) : float32[4, 3]
  return %4
})"),
            canon(R"(
graph @main(%0: data float32[3], %1: data float32[4, 3]) {
  %2 = exp{a=0, b=0}(%0) : float32[3]
  %3 = fused{}(%2, %1) : float32[4, 3] {
    graph @fused(%0: data float32[3], %1: data float32[4, 3]) {
      %2 = mul{}(%0, %1) : float32[4, 3]
      %3 = tanh{a=0, b=0}(%2) : float32[4, 3]
      return %3
    }
  }
  return %3
})"));
}

TEST(PassFuse, NeverFusesControlFlowRandomStateOrSingleOps) {
  // Each elementwise op here is alone between non-fusable nodes: a single op is not worth a
  // fused kernel, and state, random and control-flow nodes are never members.
  const std::string text = R"(
graph @main(%0: data float32[4], %1: data bool[]) {
  %2 = exp{a=0, b=0}(%0) : float32[4]
  %3 = tstate(%2) : float32[4]
  %4 = neg{a=0, b=0}(%3) : float32[4]
  %5 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%1, %4) : float32[4] {
    graph @t(%0: data float32[4]) {
      %1 = exp{a=0, b=0}(%0) : float32[4]
      return %1
    }
    graph @f(%0: data float32[4]) {
      return %0
    }
  }
  %6 = abs{a=0, b=0}(%5) : float32[4]
  return %6
})";
  codegen::register_fused_ir_op();
  auto g = testing::parse(text);
  EXPECT_EQ(fuse_elementwise(g), g);
}

TEST(PassFuse, FusesInsideControlFlowBranches) {
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[4], %1: data bool[]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%1, %0) : float32[4] {
    graph @t(%0: data float32[4]) {
      %1 = exp{a=0, b=0}(%0) : float32[4]
      %2 = sin{a=0, b=0}(%1) : float32[4]
      return %2
    }
    graph @f(%0: data float32[4]) {
      return %0
    }
  }
  return %2
})"),
            canon(R"(
graph @main(%0: data float32[4], %1: data bool[]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%1, %0) : float32[4] {
    graph @t(%0: data float32[4]) {
      %1 = fused{}(%0) : float32[4] {
        graph @fused(%0: data float32[4]) {
          %1 = exp{a=0, b=0}(%0) : float32[4]
          %2 = sin{a=0, b=0}(%1) : float32[4]
          return %2
        }
      }
      return %1
    }
    graph @f(%0: data float32[4]) {
      return %0
    }
  }
  return %2
})"));
}

TEST(PassFuse, NeverMergesAroundAnOutsideNode) {
  // %3 feeds the reduction %4 (over the columns: not a row reduction, so it stays unfused),
  // whose broadcast result %5 meets %3 again in %6: fusing %3 with %6 would put the reduction
  // both before and after the group. %6 and %7 fuse instead.
  EXPECT_EQ(fuse(R"(
graph @main(%0: data float32[2, 3]) {
  %3 = exp{a=0, b=0}(%0) : float32[2, 3]
  %4 = reduce_sum{axes=[0], keepdims=true, correction=0}(%3) : float32[1, 3]
  %5 = log{a=0, b=0}(%4) : float32[1, 3]
  %6 = div{}(%3, %5) : float32[2, 3]
  %7 = tanh{a=0, b=0}(%6) : float32[2, 3]
  return %7
})"),
            canon(R"(
graph @main(%0: data float32[2, 3]) {
  %1 = exp{a=0, b=0}(%0) : float32[2, 3]
  %2 = reduce_sum{axes=[0], keepdims=true, correction=0}(%1) : float32[1, 3]
  %3 = log{a=0, b=0}(%2) : float32[1, 3]
  %4 = fused{}(%1, %3) : float32[2, 3] {
    graph @fused(%0: data float32[2, 3], %1: data float32[1, 3]) {
      %2 = div{}(%0, %1) : float32[2, 3]
      %3 = tanh{a=0, b=0}(%2) : float32[2, 3]
      return %3
    }
  }
  return %4
})"));
}

TEST(PassFuse, LeavesIntegerAndHalfOpsAlone) {
  const std::string text = R"(
graph @main(%0: data int32[4], %1: data float16[4]) {
  %2 = add{}(%0, %0) : int32[4]
  %3 = mul{}(%2, %2) : int32[4]
  %4 = exp{a=0, b=0}(%1) : float16[4]
  %5 = exp{a=0, b=0}(%4) : float16[4]
  return %3, %5
})";
  codegen::register_fused_ir_op();
  auto g = testing::parse(text);
  EXPECT_EQ(fuse_elementwise(g), g);
}

TEST(PassFuse, FusedNodesRoundTripThroughTextAndRun) {
  codegen::register_fused_ir_op();
  auto g = fuse_elementwise(testing::parse(R"(
graph @main(%0: data float32[5], %1: data float32[]) {
  %2 = mul{}(%0, %1) : float32[5]
  %3 = greater{}(%2, %1) : bool[5]
  %4 = where{}(%3, %2, %0) : float32[5]
  return %4, %3
})"));
  ASSERT_EQ(g->nodes().size(), 1u);
  auto back = ir::parse_graph(ir::print_graph(*g));
  EXPECT_TRUE(*back == *g);
  Tensor x = ops::tensor({1.0f, -2.0f, 3.0f, NAN, 0.5f}), s = ops::scalar_tensor(2.0, DType::Float32);
  std::vector<Tensor> in{x, s};
  // The parsed node's check bound its attributes to the sub-graph, so it runs as it is.
  auto got = transforms::interpret(*back, in);
  EXPECT_TRUE(same_values(got, transforms::interpret(*codegen::bind_fused_nodes(back), in)));
  EXPECT_EQ(got[0].to_vector<float>()[0], 1.0f);
  EXPECT_EQ(got[0].to_vector<float>()[1], -2.0f);
  EXPECT_EQ(got[0].to_vector<float>()[2], 6.0f);
  EXPECT_EQ(got[1].to_vector<bool>(), (std::vector<bool>{false, false, true, false, false}));
}

TEST(PassFuse, TheTypeCheckComparesOperandsWithTheSubGraphsParameters) {
  codegen::register_fused_ir_op();
  try {
    testing::parse(R"(
graph @main(%0: data float32[4], %1: data float32[4]) {
  %2 = fused{}(%0, %1) : float32[4] {
    graph @fused(%0: data float32[4], %1: data float64[4]) {
      %2 = exp{a=0, b=0}(%0) : float32[4]
      %3 = mul{}(%2, %2) : float32[4]
      return %3
    }
  }
  return %2
})");
    FAIL() << "accepted an operand of another type than its parameter";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[fused] operand 1 is float32[4] but parameter 1 of sub-graph @fused is float64[4]"),
              std::string::npos)
        << e.what();
  }
}

TEST(PassFuse, RunsAtLevelTwoOnly) {
  const std::string text = R"(
graph @main(%0: data float32[4]) {
  %1 = exp{a=0, b=0}(%0) : float32[4]
  %2 = sin{a=0, b=0}(%1) : float32[4]
  return %2
})";
  auto g = testing::parse(text);
  EXPECT_EQ(optimize(g, 1), g);
  auto o2 = optimize(g, 2);
  ASSERT_EQ(o2->nodes().size(), 1u);
  EXPECT_EQ(o2->nodes()[0]->op(), "fused");
}

// A float group cut into chunks at the output limit can leave a chunk of only bool logic; it
// stays unfused and the program runs (found by review: jit used to fail at O2).
TEST(PassFuse, ABoolOnlyChunkStaysUnfused) {
  auto f = [](const Tensor& x) {
    const Tensor a = x > 0.0, b = x < 1.0, c = ops::equal(x, ops::full_like(x, 2.0)),
                 d = ops::not_equal(x, ops::full_like(x, 3.0));
    const Tensor e = ops::logical_and(a, b);
    return std::vector<Tensor>{a, b, c, d, e, ops::logical_not(e)};
  };
  const Tensor x = ops::tensor({-1.0f, 0.5f, 2.0f, 3.0f});
  setenv("SPORE_OPT_LEVEL", "2", 1);
  const auto got = jit(f)(x);
  unsetenv("SPORE_OPT_LEVEL");
  EXPECT_TRUE(same_values(got, f(x)));
}

}  // namespace
}  // namespace spore::passes
