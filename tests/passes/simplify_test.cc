// SPDX-License-Identifier: Apache-2.0
#include "passes/simplify.h"

#include <gtest/gtest.h>

#include "pass_text.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;
using testing::run_pass;

// A rewritten node is not emitted; what it used stays until DCE removes it.
TEST(PassSimplify, ArithmeticIdentities) {
  EXPECT_EQ(run_pass(simplify, R"(
graph @main(%0: data float32[2], %1: data int32[2]) {
  %2 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
  %3 = constant{dtype=float32, weak=true, f=0, i=0}() : ~float32[]
  %4 = constant{dtype=float32, weak=true, f=-0, i=0}() : ~float32[]
  %5 = constant{dtype=int32, weak=true, f=0, i=0}() : ~int32[]
  %6 = mul{}(%0, %2) : float32[2]
  %7 = mul{}(%2, %0) : float32[2]
  %8 = div{}(%0, %2) : float32[2]
  %9 = sub{}(%0, %3) : float32[2]
  %10 = add{}(%0, %4) : float32[2]
  %11 = add{}(%4, %0) : float32[2]
  %12 = add{}(%5, %1) : int32[2]
  %13 = add{}(%0, %3) : float32[2]
  %14 = sub{}(%0, %4) : float32[2]
  return %6, %7, %8, %9, %10, %11, %12, %13, %14
})"),
            canonical(R"(
graph @main(%0: data float32[2], %1: data int32[2]) {
  %2 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
  %3 = constant{dtype=float32, weak=true, f=0, i=0}() : ~float32[]
  %4 = constant{dtype=float32, weak=true, f=-0, i=0}() : ~float32[]
  %5 = constant{dtype=int32, weak=true, f=0, i=0}() : ~int32[]
  %6 = add{}(%0, %3) : float32[2]
  %7 = sub{}(%0, %4) : float32[2]
  return %0, %0, %0, %0, %0, %0, %1, %6, %7
})"));
}

// x^2 becomes x * x (the same rounded square); other exponents and integer powers stay.
TEST(PassSimplify, SquareAsProduct) {
  EXPECT_EQ(run_pass(simplify, R"(
graph @main(%0: data float32[2], %1: data int32[2]) {
  %2 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %3 = constant{dtype=float32, weak=true, f=3, i=0}() : ~float32[]
  %4 = constant{dtype=int32, weak=true, f=0, i=2}() : ~int32[]
  %5 = pow{}(%0, %2) : float32[2]
  %6 = pow{}(%0, %3) : float32[2]
  %7 = pow{}(%1, %4) : int32[2]
  return %5, %6, %7
})"),
            canonical(R"(
graph @main(%0: data float32[2], %1: data int32[2]) {
  %2 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %3 = constant{dtype=float32, weak=true, f=3, i=0}() : ~float32[]
  %4 = constant{dtype=int32, weak=true, f=0, i=2}() : ~int32[]
  %5 = mul{}(%0, %0) : float32[2]
  %6 = pow{}(%0, %3) : float32[2]
  %7 = pow{}(%1, %4) : int32[2]
  return %5, %6, %7
})"));
}

TEST(PassSimplify, DoubleNegationAndIdentityShapeOps) {
  EXPECT_EQ(run_pass(simplify, R"(
graph @main(%0: data float32[2, 3]) {
  %1 = neg{a=0, b=0}(%0) : float32[2, 3]
  %2 = neg{a=0, b=0}(%1) : float32[2, 3]
  %3 = reshape{shape=[2, 3]}(%0) : float32[2, 3]
  %4 = broadcast_to{shape=[2, 3]}(%0) : float32[2, 3]
  %5 = permute{axes=[0, 1]}(%0) : float32[2, 3]
  %6 = permute{axes=[1, 0]}(%0) : float32[3, 2]
  %7 = cast{dtype=float32}(%0) : float32[2, 3]
  %8 = cast{dtype=float64}(%0) : float64[2, 3]
  %9 = broadcast_to{shape=[4, 2, 3]}(%0) : float32[4, 2, 3]
  return %2, %3, %4, %5, %6, %7, %8, %9
})"),
            canonical(R"(
graph @main(%0: data float32[2, 3]) {
  %1 = neg{a=0, b=0}(%0) : float32[2, 3]
  %2 = permute{axes=[1, 0]}(%0) : float32[3, 2]
  %3 = cast{dtype=float64}(%0) : float64[2, 3]
  %4 = broadcast_to{shape=[4, 2, 3]}(%0) : float32[4, 2, 3]
  return %0, %0, %0, %0, %2, %0, %3, %4
})"));
}

TEST(PassSimplify, ReshapeOfReshapeBecomesOneReshapeOrNone) {
  EXPECT_EQ(run_pass(simplify, R"(
graph @main(%0: data float32[2, 3]) {
  %1 = reshape{shape=[6]}(%0) : float32[6]
  %2 = reshape{shape=[3, 2]}(%1) : float32[3, 2] scope "head"
  %3 = reshape{shape=[1, 6]}(%1) : float32[1, 6]
  %4 = reshape{shape=[2, 3]}(%3) : float32[2, 3]
  return %2, %4
})"),
            canonical(R"(
graph @main(%0: data float32[2, 3]) {
  %1 = reshape{shape=[6]}(%0) : float32[6]
  %2 = reshape{shape=[3, 2]}(%0) : float32[3, 2] scope "head"
  %3 = reshape{shape=[1, 6]}(%0) : float32[1, 6]
  return %2, %0
})"));
}

TEST(PassSimplify, TypeGuardKeepsRewritesThatWouldChangeDtypeOrWeakness) {
  // x * 1 where the literal is strong and x weak yields a strong result: x is not a
  // replacement. Likewise a cast of a weak value to its own dtype makes it strong, and a
  // broadcast that adds a dimension changes the shape.
  const std::string text = R"(
graph @main(%0: data ~float32[], %1: data float32[3]) {
  %2 = constant{dtype=float32, weak=false, f=1, i=0}() : float32[]
  %3 = mul{}(%0, %2) : float32[]
  %4 = cast{dtype=float32}(%0) : float32[]
  %5 = broadcast_to{shape=[1, 3]}(%1) : float32[1, 3]
  %6 = reshape{shape=[3, 1]}(%1) : float32[3, 1]
  return %3, %4, %5, %6
})";
  auto g = parse(text);
  EXPECT_EQ(simplify(g), g);
}

TEST(PassSimplify, PromotedMultiplyByOneStays) {
  // x_int32 * 1.0: the public op casts x to float32 first; the multiply by one of the cast
  // value goes, the cast (a real conversion) stays.
  EXPECT_EQ(run_pass(simplify, R"(
graph @main(%0: data int32[2]) {
  %1 = cast{dtype=float32}(%0) : float32[2]
  %2 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
  %3 = mul{}(%1, %2) : float32[2]
  return %3
})"),
            canonical(R"(
graph @main(%0: data int32[2]) {
  %1 = cast{dtype=float32}(%0) : float32[2]
  %2 = constant{dtype=float32, weak=true, f=1, i=0}() : ~float32[]
  return %1
})"));
}

TEST(PassSimplify, RecursesIntoSubGraphs) {
  EXPECT_EQ(run_pass(simplify, R"(
graph @main(%0: data bool[], %1: data float32[2]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[2] {
    graph @t(%0: data float32[2]) {
      %1 = neg{a=0, b=0}(%0) : float32[2]
      %2 = neg{a=0, b=0}(%1) : float32[2]
      return %2
    }
    graph @f(%0: data float32[2]) {
      return %0
    }
  }
  return %2
})"),
            canonical(R"(
graph @main(%0: data bool[], %1: data float32[2]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[2] {
    graph @t(%0: data float32[2]) {
      %1 = neg{a=0, b=0}(%0) : float32[2]
      return %0
    }
    graph @f(%0: data float32[2]) {
      return %0
    }
  }
  return %2
})"));
}

}  // namespace
}  // namespace spore::passes
