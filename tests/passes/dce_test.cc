// SPDX-License-Identifier: Apache-2.0
#include "passes/dce.h"

#include <gtest/gtest.h>

#include "pass_text.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;
using testing::run_pass;

TEST(PassDce, RemovesUnusedPureNodesTransitivelyAndRenumbers) {
  EXPECT_EQ(run_pass(eliminate_dead_code, R"(
graph @main(%0: data float32[2], %1: data float32[2]) {
  %2 = mul{}(%0, %1) : float32[2]
  %3 = neg{a=0, b=0}(%2) : float32[2]
  %4 = add{}(%0, %1) : float32[2]
  return %4
})"),
            canonical(R"(
graph @main(%0: data float32[2], %1: data float32[2]) {
  %2 = add{}(%0, %1) : float32[2]
  return %2
})"));
}

TEST(PassDce, UnchangedGraphIsTheSamePointer) {
  auto g = parse(R"(
graph @main(%0: data float32[2]) {
  %1 = neg{a=0, b=0}(%0) : float32[2]
  return %1
})");
  EXPECT_EQ(eliminate_dead_code(g), g);
}

TEST(PassDce, RemovesUnusedRandomNodes) {
  // Random primitives are pure functions of the key in their attributes.
  EXPECT_EQ(run_pass(eliminate_dead_code, R"(
graph @main(%0: data float32[2, 2]) {
  %1 = uniform{shape=[2], dtype=float32, p0=0, p1=1, a=0, b=0, seed=7, offset=0}() : float32[2]
  %2 = dropout{p=0.5, seed=7, offset=2}(%0) : float32[2, 2]
  return %0
})"),
            canonical(R"(
graph @main(%0: data float32[2, 2]) {
  return %0
})"));
}

TEST(PassDce, KeepsStateAndIoNodesAndWhatTheyUse) {
  EXPECT_EQ(run_pass(eliminate_dead_code, R"(
graph @main(%0: data float32[2], %1: data token) {
  %2 = neg{a=0, b=0}(%0) : float32[2]
  %3 = tstate(%2) : float32[2]
  %4 = abs{a=0, b=0}(%0) : float32[2]
  %5 = tprint(%1, %4) : token
  %6 = exp{a=0, b=0}(%0) : float32[2]
  return %0
})"),
            canonical(R"(
graph @main(%0: data float32[2], %1: data token) {
  %2 = neg{a=0, b=0}(%0) : float32[2]
  %3 = tstate(%2) : float32[2]
  %4 = abs{a=0, b=0}(%0) : float32[2]
  %5 = tprint(%1, %4) : token
  return %0
})"));
}

TEST(PassDce, RecursesIntoSubGraphsKeepingTheirSignature) {
  // The unused parameter %1 of each branch stays: the node passes it.
  EXPECT_EQ(run_pass(eliminate_dead_code, R"(
graph @main(%0: data bool[], %1: data float32[2], %2: data float32[2]) {
  %3 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1, %2) : float32[2] {
    graph @t(%0: data float32[2], %1: data float32[2]) {
      %2 = exp{a=0, b=0}(%0) : float32[2]
      %3 = neg{a=0, b=0}(%0) : float32[2]
      return %3
    }
    graph @f(%0: data float32[2], %1: data float32[2]) {
      return %0
    }
  }
  %4 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1, %2) : float32[2] {
    graph @t(%0: data float32[2], %1: data float32[2]) {
      return %0
    }
    graph @f(%0: data float32[2], %1: data float32[2]) {
      return %1
    }
  }
  return %3
})"),
            canonical(R"(
graph @main(%0: data bool[], %1: data float32[2], %2: data float32[2]) {
  %3 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1, %2) : float32[2] {
    graph @t(%0: data float32[2], %1: data float32[2]) {
      %2 = neg{a=0, b=0}(%0) : float32[2]
      return %2
    }
    graph @f(%0: data float32[2], %1: data float32[2]) {
      return %0
    }
  }
  return %3
})"));
}

TEST(PassDce, KeepsAControlFlowNodeWhoseBranchHasAnEffect) {
  const std::string text = R"(
graph @main(%0: data bool[], %1: data float32[2]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[2] {
    graph @t(%0: data float32[2]) {
      %1 = tstate(%0) : float32[2]
      return %1
    }
    graph @f(%0: data float32[2]) {
      return %0
    }
  }
  return %1
})";
  EXPECT_EQ(run_pass(eliminate_dead_code, text), canonical(text));
}

TEST(PassDce, KeepsStateAliases) {
  EXPECT_EQ(run_pass(eliminate_dead_code, R"(
graph @main(%0: data float32[2], %1: buffer float32[2]) {
  %2 = exp{a=0, b=0}(%0) : float32[2]
  %3 = add{}(%1, %0) : float32[2]
  return %0, %3 updates %1
})"),
            canonical(R"(
graph @main(%0: data float32[2], %1: buffer float32[2]) {
  %2 = add{}(%1, %0) : float32[2]
  return %0, %2 updates %1
})"));
}

}  // namespace
}  // namespace spore::passes
