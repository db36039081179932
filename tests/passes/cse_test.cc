// SPDX-License-Identifier: Apache-2.0
#include "passes/cse.h"

#include <gtest/gtest.h>

#include "pass_text.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;
using testing::run_pass;

TEST(PassCse, MergesEqualPureNodesAndTheirUsers) {
  // %3 repeats %2; then %5 repeats %4 once its input is merged.
  EXPECT_EQ(run_pass(eliminate_common_subexpressions, R"(
graph @main(%0: data float32[2], %1: data float32[2]) {
  %2 = mul{}(%0, %1) : float32[2]
  %3 = mul{}(%0, %1) : float32[2]
  %4 = exp{a=0, b=0}(%2) : float32[2]
  %5 = exp{a=0, b=0}(%3) : float32[2]
  %6 = add{}(%4, %5) : float32[2]
  return %6, %3
})"),
            canonical(R"(
graph @main(%0: data float32[2], %1: data float32[2]) {
  %2 = mul{}(%0, %1) : float32[2]
  %3 = exp{a=0, b=0}(%2) : float32[2]
  %4 = add{}(%3, %3) : float32[2]
  return %4, %2
})"));
}

TEST(PassCse, KeepsNodesThatDifferInOpAttributesInputsOrTypes) {
  const std::string text = R"(
graph @main(%0: data float32[2], %1: data float32[2]) {
  %2 = mul{}(%0, %1) : float32[2]
  %3 = mul{}(%1, %0) : float32[2]
  %4 = add{}(%0, %1) : float32[2]
  %5 = leaky_relu{a=0.1, b=0}(%0) : float32[2]
  %6 = leaky_relu{a=0.2, b=0}(%0) : float32[2]
  %7 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
  %8 = constant{dtype=float32, weak=false, f=1, i=0}() : float32[]
  %9 = constant{dtype=float32, weak=true, f=0, i=0}() : ~float32[]
  %10 = constant{dtype=float32, weak=true, f=-0, i=0}() : ~float32[]
  return %2, %3, %4, %5, %6, %7, %8, %9, %10
})";
  auto g = parse(text);
  EXPECT_EQ(eliminate_common_subexpressions(g), g);
}

TEST(PassCse, MergesEqualLiterals) {
  EXPECT_EQ(run_pass(eliminate_common_subexpressions, R"(
graph @main(%0: data float32[2]) {
  %1 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %2 = mul{}(%0, %1) : float32[2]
  %3 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %4 = mul{}(%0, %3) : float32[2]
  return %2, %4
})"),
            canonical(R"(
graph @main(%0: data float32[2]) {
  %1 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %2 = mul{}(%0, %1) : float32[2]
  return %2, %2
})"));
}

TEST(PassCse, NeverMergesRandomStateOrIoNodes) {
  const std::string text = R"(
graph @main(%0: data float32[2], %1: data token) {
  %2 = uniform{shape=[2], dtype=float32, p0=0, p1=1, a=0, b=0, seed=3, offset=0}() : float32[2]
  %3 = uniform{shape=[2], dtype=float32, p0=0, p1=1, a=0, b=0, seed=3, offset=0}() : float32[2]
  %4 = tstate(%0) : float32[2]
  %5 = tstate(%0) : float32[2]
  %6 = tprint(%1, %0) : token
  %7 = tprint(%1, %0) : token
  return %2, %3, %4, %5, %6, %7
})";
  auto g = parse(text);
  EXPECT_EQ(eliminate_common_subexpressions(g), g);
}

TEST(PassCse, RecursesIntoSubGraphsThenMergesEqualControlFlow) {
  // Inside each branch the two exps merge; the branches then compute what the other node's do
  // (their names differ, which does not matter), so the two ifs merge too.
  EXPECT_EQ(run_pass(eliminate_common_subexpressions, R"(
graph @main(%0: data bool[], %1: data float32[2]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[2] {
    graph @t(%0: data float32[2]) {
      %1 = exp{a=0, b=0}(%0) : float32[2]
      %2 = exp{a=0, b=0}(%0) : float32[2]
      %3 = add{}(%1, %2) : float32[2]
      return %3
    }
    graph @f(%0: data float32[2]) {
      return %0
    }
  }
  %3 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[2] {
    graph @t2(%0: data float32[2]) {
      %1 = exp{a=0, b=0}(%0) : float32[2] scope "other"
      %2 = add{}(%1, %1) : float32[2]
      return %2
    }
    graph @f2(%0: data float32[2]) {
      return %0
    }
  }
  return %2, %3
})"),
            canonical(R"(
graph @main(%0: data bool[], %1: data float32[2]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[2] {
    graph @t(%0: data float32[2]) {
      %1 = exp{a=0, b=0}(%0) : float32[2]
      %2 = add{}(%1, %1) : float32[2]
      return %2
    }
    graph @f(%0: data float32[2]) {
      return %0
    }
  }
  return %2, %2
})"));
}

}  // namespace
}  // namespace spore::passes

namespace spore::passes {
namespace {

// A LeNet-5 max pool and its backward's pool with indices over the same input: one pool computes
// both; a pool of other attributes (another stride) or another input stays.
TEST(PassCse, AMaxPoolMergesIntoTheLaterPoolWithIndices) {
  const std::string pool = "pool2d{kind=0, kernel=[2, 2], stride=[2, 2], padding=[0, 0], ceil_mode=false, count_include_pad=true, with_indices=";
  EXPECT_EQ(testing::run_pass(eliminate_common_subexpressions, R"(
graph @main(%0: data float32[2, 3, 4, 4]) {
  %1 = )" + pool + R"(false}(%0) : float32[2, 3, 2, 2]
  %2 = relu{a=0, b=0}(%1) : float32[2, 3, 2, 2]
  %3 = )" + pool + R"(false}(%0) : float32[2, 3, 2, 2]
  %4, %5 = )" + pool + R"(true}(%0) : float32[2, 3, 2, 2], int64[2, 3, 2, 2]
  return %2, %5, %3
})"),
            testing::canonical(R"(
graph @main(%0: data float32[2, 3, 4, 4]) {
  %1, %2 = )" + pool + R"(true}(%0) : float32[2, 3, 2, 2], int64[2, 3, 2, 2]
  %3 = relu{a=0, b=0}(%1) : float32[2, 3, 2, 2]
  return %3, %2, %1
})"));
  // The pool with indices first, the plain one after: the plain one is its first result.
  EXPECT_EQ(testing::run_pass(eliminate_common_subexpressions, R"(
graph @main(%0: data float32[2, 3, 4, 4]) {
  %1, %2 = )" + pool + R"(true}(%0) : float32[2, 3, 2, 2], int64[2, 3, 2, 2]
  %3 = )" + pool + R"(false}(%0) : float32[2, 3, 2, 2]
  %4 = relu{a=0, b=0}(%3) : float32[2, 3, 2, 2]
  return %4, %2
})"),
            testing::canonical(R"(
graph @main(%0: data float32[2, 3, 4, 4]) {
  %1, %2 = )" + pool + R"(true}(%0) : float32[2, 3, 2, 2], int64[2, 3, 2, 2]
  %3 = relu{a=0, b=0}(%1) : float32[2, 3, 2, 2]
  return %3, %2
})"));
  // The merged pool keeps the forward's scope.
  const std::string scoped = testing::run_pass(eliminate_common_subexpressions, R"(
graph @main(%0: data float32[2, 3, 4, 4]) {
  %1 = )" + pool + R"(false}(%0) : float32[2, 3, 2, 2] scope "forward"
  %2, %3 = )" + pool + R"(true}(%0) : float32[2, 3, 2, 2], int64[2, 3, 2, 2] scope "backward"
  return %1, %3
})");
  EXPECT_NE(scoped.find("scope \"forward\""), std::string::npos) << scoped;
  EXPECT_EQ(scoped.find("scope \"backward\""), std::string::npos) << scoped;
  const std::string other = R"(
graph @main(%0: data float32[2, 3, 4, 4], %1: data float32[2, 3, 4, 4]) {
  %2 = )" + pool + R"(false}(%0) : float32[2, 3, 2, 2]
  %3, %4 = )" + pool + R"(true}(%1) : float32[2, 3, 2, 2], int64[2, 3, 2, 2]
  %5, %6 = pool2d{kind=0, kernel=[2, 2], stride=[1, 1], padding=[0, 0], ceil_mode=false, count_include_pad=true, with_indices=true}(%0) : float32[2, 3, 3, 3], int64[2, 3, 3, 3]
  return %2, %4, %6
})";
  EXPECT_EQ(testing::run_pass(eliminate_common_subexpressions, other), testing::canonical(other));
}

}  // namespace
}  // namespace spore::passes
