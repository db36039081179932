// SPDX-License-Identifier: Apache-2.0
#include "passes/matmul_bias.h"

#include <gtest/gtest.h>

#include "pass_text.h"
#include "spore/spore.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::run_pass;

// add(matmul(a, b), bias) of a last-dim bias becomes one matmul with the bias, in either order.
TEST(PassMatmulBias, FoldsALastDimBias) {
  EXPECT_EQ(run_pass(matmul_bias, R"(
graph @main(%0: data float32[2, 5, 4], %1: data float32[4, 3], %2: data float32[3], %3: data float32[1, 3]) {
  %4 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[2, 5, 3]
  %5 = add{}(%4, %2) : float32[2, 5, 3]
  %6 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[2, 5, 3]
  %7 = add{}(%3, %6) : float32[2, 5, 3]
  return %5, %7
})"),
            canonical(R"(
graph @main(%0: data float32[2, 5, 4], %1: data float32[4, 3], %2: data float32[3], %3: data float32[1, 3]) {
  %4 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1, %2) : float32[2, 5, 3]
  %5 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1, %3) : float32[2, 5, 3]
  return %4, %5
})"));
}

// Kept apart: a product read twice, a per-row bias, a bias that widens the sum, a scaled product,
// a product that already has a bias.
TEST(PassMatmulBias, LeavesWhatItCannotFold) {
  const std::string text = R"(
graph @main(%0: data float32[5, 4], %1: data float32[4, 3], %2: data float32[3], %3: data float32[5, 1], %4: data float32[2, 5, 3]) {
  %5 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[5, 3]
  %6 = add{}(%5, %2) : float32[5, 3]
  %7 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[5, 3]
  %8 = add{}(%7, %3) : float32[5, 3]
  %9 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[5, 3]
  %10 = add{}(%9, %4) : float32[2, 5, 3]
  %11 = matmul{trans_a=false, trans_b=false, alpha=2, beta=1}(%0, %1) : float32[5, 3]
  %12 = add{}(%11, %2) : float32[5, 3]
  %13 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1, %2) : float32[5, 3]
  %14 = add{}(%13, %2) : float32[5, 3]
  return %5, %6, %8, %10, %12, %14
})";
  EXPECT_EQ(run_pass(matmul_bias, text), canonical(text));
}

// The folded graph computes what the unfolded one does (oneDNN's bias in the GEMM epilogue).
TEST(PassMatmulBias, SameValuesUnderJit) {
  manual_seed(2);
  const Tensor x = ops::normal({4, 7, 32}), w = ops::normal({32, 24}), b = ops::normal({24});
  auto f = [](const Tensor& xv, const Tensor& wv, const Tensor& bv) { return ops::relu(ops::matmul(xv, wv) + bv); };
  const auto want = f(x, w, b).to_vector<float>();
  ::setenv("SPORE_OPT_LEVEL", "2", 1);
  auto j = jit(f);
  const auto got = j(x, w, b).to_vector<float>();
  ::unsetenv("SPORE_OPT_LEVEL");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
}

}  // namespace
}  // namespace spore::passes
