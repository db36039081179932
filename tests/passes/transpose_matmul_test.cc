// SPDX-License-Identifier: Apache-2.0
#include "passes/transpose_matmul.h"

#include <gtest/gtest.h>

#include "pass_text.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;
using testing::run_pass;

// A weight gradient as the backward of x @ w^T makes it, (x^T dy)^T, read by the SGD update.
TEST(PassTransposeMatmul, WeightGradientIsMadeInTheLayoutItsUpdateReads) {
  EXPECT_EQ(run_pass(transpose_matmul, R"(
graph @main(%0: data float32[4, 3], %1: data float32[4, 2], %2: data float32[2, 3]) {
  %3 = permute{axes=[1, 0]}(%0) : float32[3, 4]
  %4 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%3, %1) : float32[3, 2]
  %5 = permute{axes=[1, 0]}(%4) : float32[2, 3]
  %6 = sub{}(%2, %5) : float32[2, 3]
  return %6
})"),
            canonical(R"(
graph @main(%0: data float32[4, 3], %1: data float32[4, 2], %2: data float32[2, 3]) {
  %3 = permute{axes=[1, 0]}(%1) : float32[2, 4]
  %4 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%3, %0) : float32[2, 3]
  %5 = sub{}(%2, %4) : float32[2, 3]
  return %5
})"));
}

TEST(PassTransposeMatmul, ReturnedTransposeIsRewrittenWithItsScale) {
  EXPECT_EQ(run_pass(transpose_matmul, R"(
graph @main(%0: data float32[4, 3], %1: data float32[3, 2]) {
  %2 = matmul{trans_a=false, trans_b=false, alpha=0.5, beta=1}(%0, %1) : float32[4, 2]
  %3 = permute{axes=[1, 0]}(%2) : float32[2, 4]
  return %3
})"),
            canonical(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3, 2]) {
  %2 = permute{axes=[1, 0]}(%1) : float32[2, 3]
  %3 = permute{axes=[1, 0]}(%0) : float32[3, 4]
  %4 = matmul{trans_a=false, trans_b=false, alpha=0.5, beta=1}(%2, %3) : float32[2, 4]
  return %4
})"));
}

TEST(PassTransposeMatmul, LeavesTransposesMatmulsReadAndProductsUsedTwice) {
  // q @ k^T: the matmul reads the transposed view as it is.
  auto only_matmul = parse(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3, 2], %2: data float32[4, 2]) {
  %3 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[4, 2]
  %4 = permute{axes=[1, 0]}(%3) : float32[2, 4]
  %5 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%2, %4) : float32[4, 4]
  return %5
})");
  EXPECT_EQ(transpose_matmul(only_matmul), only_matmul);
  // The product is used untransposed too: rewriting would compute it twice.
  auto used_twice = parse(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3, 4]) {
  %2 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[4, 4]
  %3 = permute{axes=[1, 0]}(%2) : float32[4, 4]
  %4 = add{}(%2, %3) : float32[4, 4]
  return %4
})");
  EXPECT_EQ(transpose_matmul(used_twice), used_twice);
  // A bias makes it addmm: (b + a @ w)^T is not a product of transposes alone.
  auto with_bias = parse(R"(
graph @main(%0: data float32[4, 3], %1: data float32[3, 2], %2: data float32[2]) {
  %3 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1, %2) : float32[4, 2]
  %4 = permute{axes=[1, 0]}(%3) : float32[2, 4]
  return %4
})");
  EXPECT_EQ(transpose_matmul(with_bias), with_bias);
}

}  // namespace
}  // namespace spore::passes
