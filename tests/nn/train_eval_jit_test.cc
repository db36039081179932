// SPDX-License-Identifier: Apache-2.0
// train()/eval() under jit: the mode is part of what selects the compiled graph.
#include <gtest/gtest.h>

#include "spore/nn.h"
#include "spore/spore.h"

namespace spore::nn {
namespace {

TEST(NnJit, TrainEvalSwitchNeverRunsTheOtherModesGraph) {
  manual_seed(0);
  BatchNorm2d bn(3);
  Tensor x = ops::normal({4, 3, 2, 2}) * 3.0 + 1.0;
  auto f = jit([&](const Tensor& v) { return bn(v); });
  // Eager reference values for both modes (on copies of the statistics).
  bn.train();
  Tensor jt = f(x);
  bn.eval();
  Tensor je = f(x);
  EXPECT_EQ(f.core().traces(), 2);
  // Eval normalizes with the running statistics, train with the batch's: not the same numbers.
  EXPECT_FALSE(ops::all(ops::equal(jt, je)).item<bool>());
  Tensor eager_eval = bn(x);
  EXPECT_TRUE(ops::all(ops::equal(je, eager_eval)).item<bool>());
  bn.train();
  f(x);
  bn.eval();
  f(x);
  EXPECT_EQ(f.core().traces(), 2);  // back and forth reuses both graphs
}

}  // namespace
}  // namespace spore::nn
