// SPDX-License-Identifier: Apache-2.0
#include "passes/fold_constants.h"

#include <gtest/gtest.h>

#include "pass_text.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;
using testing::run_pass;

// The nodes folded away stay until DCE removes them; these tests show exactly what folding adds.
TEST(PassFold, FoldsLiteralArithmeticKeepingWeakAndStrongTypes) {
  EXPECT_EQ(run_pass(fold_constants, R"(
graph @main() {
  %0 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %1 = constant{dtype=float32, weak=false, f=3, i=0}() : float32[]
  %2 = constant{dtype=float32, weak=true, f=0.5, i=0}() : ~float32[]
  %3 = mul{}(%0, %1) : float32[]
  %4 = add{}(%0, %2) : ~float32[]
  %5 = greater{}(%1, %0) : bool[]
  return %3, %4, %5
})"),
            canonical(R"(
graph @main() {
  %0 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %1 = constant{dtype=float32, weak=false, f=3, i=0}() : float32[]
  %2 = constant{dtype=float32, weak=true, f=0.5, i=0}() : ~float32[]
  %3 = constant{dtype=float32, weak=false, f=6, i=0}() : float32[]
  %4 = constant{dtype=float32, weak=true, f=2.5, i=0}() : ~float32[]
  %5 = constant{dtype=bool, weak=false, f=0, i=1}() : bool[]
  return %3, %4, %5
})"));
}

TEST(PassFold, FoldsChainsAndRoundsInTheOutputDtype) {
  // 0.1 in float16 is 0.0999755859375; the sum is rounded to float16 by the kernel.
  EXPECT_EQ(run_pass(fold_constants, R"(
graph @main(%0: data float16[3]) {
  %1 = constant{dtype=float16, weak=false, f=0.0999755859375, i=0}() : float16[]
  %2 = add{}(%1, %1) : float16[]
  %3 = sqrt{a=0, b=0}(%2) : float16[]
  %4 = mul{}(%0, %3) : float16[3]
  return %4
})"),
            canonical(R"(
graph @main(%0: data float16[3]) {
  %1 = constant{dtype=float16, weak=false, f=0.0999755859375, i=0}() : float16[]
  %2 = constant{dtype=float16, weak=false, f=0.199951171875, i=0}() : float16[]
  %3 = constant{dtype=float16, weak=false, f=0.447265625, i=0}() : float16[]
  %4 = mul{}(%0, %3) : float16[3]
  return %4
})"));
}

TEST(PassFold, FoldsZeroDimensionalFillButNothingLarger) {
  EXPECT_EQ(run_pass(fold_constants, R"(
graph @main() {
  %0 = fill{shape=[], dtype=int64, value=5, int_value=5}() : int64[]
  %1 = fill{shape=[2], dtype=float32, value=1, int_value=1}() : float32[2]
  %2 = broadcast_to{shape=[3]}(%0) : int64[3]
  %3 = reduce_sum{axes=[0], keepdims=false, correction=0}(%1) : float32[]
  return %0, %2, %3
})"),
            canonical(R"(
graph @main() {
  %0 = constant{dtype=int64, weak=false, f=0, i=5}() : int64[]
  %1 = fill{shape=[2], dtype=float32, value=1, int_value=1}() : float32[2]
  %2 = broadcast_to{shape=[3]}(%0) : int64[3]
  %3 = reduce_sum{axes=[0], keepdims=false, correction=0}(%1) : float32[]
  return %0, %2, %3
})"));
}

// A symbol in the attributes (a graph over a dynamic batch n: a fill of the batch size) is a
// size known per call: the node stays, where folding would write the symbol's table index.
TEST(PassFold, LeavesNodesWithSymbolicAttributes) {
  auto g = parse(R"(
graph @main(%0: data float32[n]) {
  %1 = fill{shape=[], dtype=int64, value=0, int_value=n}() : int64[]
  return %1
})");
  EXPECT_EQ(fold_constants(g), g);
}

TEST(PassFold, LeavesAFailingKernelToFailAtRunTime) {
  const std::string text = R"(
graph @main() {
  %0 = constant{dtype=int32, weak=false, f=0, i=7}() : int32[]
  %1 = constant{dtype=int32, weak=false, f=0, i=0}() : int32[]
  %2 = floor_divide{}(%0, %1) : int32[]
  return %2
})";
  auto g = parse(text);
  EXPECT_EQ(fold_constants(g), g);
}

TEST(PassFold, NeverFoldsRandomNodes) {
  const std::string text = R"(
graph @main() {
  %0 = uniform{shape=[], dtype=float32, p0=0, p1=1, a=0, b=0, seed=1, offset=0}() : float32[]
  return %0
})";
  auto g = parse(text);
  EXPECT_EQ(fold_constants(g), g);
}

TEST(PassFold, InlinesTheTakenBranchOfAnIfWithALiteralPredicate) {
  EXPECT_EQ(run_pass(fold_constants, R"(
graph @main(%0: data float32[2]) {
  %1 = constant{dtype=bool, weak=false, f=0, i=0}() : bool[]
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%1, %0) : float32[2] {
    graph @t(%0: data float32[2]) {
      %1 = neg{a=0, b=0}(%0) : float32[2]
      return %1
    }
    graph @f(%0: data float32[2]) {
      %1 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
      %2 = constant{dtype=float32, weak=true, f=3, i=0}() : ~float32[]
      %3 = mul{}(%1, %2) : ~float32[]
      %4 = mul{}(%0, %3) : float32[2] scope "head"
      return %4
    }
  }
  %3 = exp{a=0, b=0}(%2) : float32[2]
  return %3
})"),
            canonical(R"(
graph @main(%0: data float32[2]) {
  %1 = constant{dtype=bool, weak=false, f=0, i=0}() : bool[]
  %2 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %3 = constant{dtype=float32, weak=true, f=3, i=0}() : ~float32[]
  %4 = constant{dtype=float32, weak=true, f=6, i=0}() : ~float32[]
  %5 = mul{}(%0, %4) : float32[2] scope "head"
  %6 = exp{a=0, b=0}(%5) : float32[2]
  return %6
})"));
}

TEST(PassFold, InlinesASwitchWithAFoldedIndexClampedLikeTheOp) {
  // The index 9 (a fill, folded first) is clamped to the last branch; a branch may return its
  // parameter, which becomes the node's operand.
  EXPECT_EQ(run_pass(fold_constants, R"(
graph @main(%0: data float32[2]) {
  %1 = fill{shape=[], dtype=int64, value=9, int_value=9}() : int64[]
  %2 = switch{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%1, %0) : float32[2] {
    graph @b0(%0: data float32[2]) {
      %1 = neg{a=0, b=0}(%0) : float32[2]
      return %1
    }
    graph @b1(%0: data float32[2]) {
      return %0
    }
  }
  return %2
})"),
            canonical(R"(
graph @main(%0: data float32[2]) {
  %1 = constant{dtype=int64, weak=false, f=0, i=9}() : int64[]
  return %0
})"));
}

TEST(PassFold, KeepsAnIfWithAComputedPredicate) {
  const std::string text = R"(
graph @main(%0: data bool[], %1: data float32[2]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[2] {
    graph @t(%0: data float32[2]) {
      return %0
    }
    graph @f(%0: data float32[2]) {
      %1 = neg{a=0, b=0}(%0) : float32[2]
      return %1
    }
  }
  return %2
})";
  auto g = parse(text);
  EXPECT_EQ(fold_constants(g), g);
}

TEST(PassFold, RecursesIntoLoopBodies) {
  EXPECT_EQ(run_pass(fold_constants, R"(
graph @main(%0: data float32[2]) {
  %1 = while{num_carry=1, length=0, reverse=false, stack=false, trip_symbol=""}(%0) : float32[2] {
    graph @cond(%0: data float32[2]) {
      %1 = reduce_sum{axes=[0], keepdims=false, correction=0}(%0) : float32[]
      %2 = constant{dtype=float32, weak=true, f=100, i=0}() : ~float32[]
      %3 = less{}(%1, %2) : bool[]
      return %3
    }
    graph @body(%0: data float32[2]) {
      %1 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
      %2 = add{}(%1, %1) : ~float32[]
      %3 = mul{}(%0, %2) : float32[2]
      return %3
    }
  }
  return %1
})"),
            canonical(R"(
graph @main(%0: data float32[2]) {
  %1 = while{num_carry=1, length=0, reverse=false, stack=false, trip_symbol=""}(%0) : float32[2] {
    graph @cond(%0: data float32[2]) {
      %1 = reduce_sum{axes=[0], keepdims=false, correction=0}(%0) : float32[]
      %2 = constant{dtype=float32, weak=true, f=100, i=0}() : ~float32[]
      %3 = less{}(%1, %2) : bool[]
      return %3
    }
    graph @body(%0: data float32[2]) {
      %1 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
      %2 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
      %3 = mul{}(%0, %2) : float32[2]
      return %3
    }
  }
  return %1
})"));
}

}  // namespace
}  // namespace spore::passes
