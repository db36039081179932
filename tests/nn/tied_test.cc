// SPDX-License-Identifier: Apache-2.0
// Tied parameters: one tensor held by two layers counts once and receives both uses' gradient.
#include <gtest/gtest.h>

#include "spore/nn.h"
#include "spore/optim/optim.h"
#include "spore/spore.h"

namespace spore::nn {
namespace {

class Tied : public UnaryCell {
 public:
  Tied() : UnaryCell("Tied"), a(3, 3, /*bias=*/false), b(3, 3, /*bias=*/false) {
    register_cell("a", &a);
    register_cell("b", &b);
    b.weight = a.weight;  // the same tensor in two slots
  }
  Tensor construct(const Tensor& x) override { return b(a(x)); }
  Dense a, b;
};

TEST(NnTied, CountedOnceAndGradientsAccumulate) {
  manual_seed(2);
  Tied net;
  ASSERT_EQ(net.named_parameters().size(), 1u);
  EXPECT_EQ(net.named_parameters()[0].first, "a.weight");
  EXPECT_EQ(net.state_dict().size(), 1u);
  EXPECT_EQ(net.parameter_slots(/*include_tied=*/true).size(), 2u);
  Tensor x = ops::normal({2, 3});
  auto loss = [&](const TensorTree& p) { return functional_call(net, p, [&] { return ops::sum(net(x)); }); };
  Tensor g = grad(loss)(net.parameter_tree())["a.weight"].tensor();
  // d/dW sum(x W^T W^T) by finite differences in float64 on the one shared weight.
  Tensor w = net.a.weight.to(DType::Float64), x64 = x.to(DType::Float64);
  auto f = [&](const Tensor& wt) {
    return ops::sum(ops::matmul(ops::matmul(x64, wt.transpose(0, 1)), wt.transpose(0, 1))).item<double>();
  };
  for (int64_t i = 0; i < 9; ++i) {
    Tensor e = ops::zeros({9}, {DType::Float64});
    e.data<double>()[i] = 1e-6;
    e = e.reshape({3, 3});
    const double fd = (f(w + e) - f(w - e)) / 2e-6;
    EXPECT_NEAR(g.reshape({9}).to(DType::Float64).data<double>()[i], fd, 1e-3) << i;
  }
  // An optimizer over the tied network moves the one tensor both layers read.
  optim::SGD opt(net.parameters(), {.lr = 0.1});
  opt.step({g});
  EXPECT_TRUE(net.a.weight.is_same(net.b.weight));
}

}  // namespace
}  // namespace spore::nn
