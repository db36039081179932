// SPDX-License-Identifier: Apache-2.0
// grad / value_and_grad / vjp / jvp semantics on small closed-form functions.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "error_matchers.h"
#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

Tensor f_cubic(const Tensor& x) { return x * x * x + 2.0 * x; }

TEST(Grad, CubicFirstAndSecondOrder) {
  Tensor x = scalar_tensor(2.0, DType::Float64);
  EXPECT_DOUBLE_EQ(f_cubic(x).item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(grad(f_cubic)(x).item<double>(), 14.0);           // 3x^2 + 2
  EXPECT_DOUBLE_EQ(grad(grad(f_cubic))(x).item<double>(), 12.0);     // 6x
  EXPECT_DOUBLE_EQ(grad(grad(grad(f_cubic)))(x).item<double>(), 6.0);
}

TEST(Grad, ArgnumsAndBroadcast) {
  Tensor a = tensor({{1.0, 2.0}, {3.0, 4.0}});
  Tensor b = tensor({10.0, 20.0});
  auto f = [](const Tensor& a, const Tensor& b) { return sum(a * b + a / b); };
  auto g = grad(f, {0, 1})(a, b);
  ASSERT_EQ(g.size(), 2u);
  // d/da = b + 1/b; d/db = sum_rows(a - a / b^2)
  auto ga = g[0].to_vector<float>();
  EXPECT_NEAR(ga[0], 10.1f, 1e-5);
  EXPECT_NEAR(ga[3], 20.05f, 1e-5);
  auto gb = g[1].to_vector<float>();
  EXPECT_EQ(g[1].shape(), Shape({2}));
  EXPECT_NEAR(gb[0], 4.0f - 4.0f / 100.0f, 1e-5);
  EXPECT_NEAR(gb[1], 6.0f - 6.0f / 400.0f, 1e-5);
  Tensor gb_only = grad(f, 1)(a, b);
  EXPECT_EQ(gb_only.to_vector<float>(), g[1].to_vector<float>());
}

TEST(Grad, PerturbationConfusion) {
  // d/dx [ x * (d/dy (x + y))(at y = 1) ] = d/dx [x * 1] = 1, not 2.
  auto outer = [](const Tensor& x) {
    auto inner = [&x](const Tensor& y) { return x + y; };
    return x * grad(inner)(scalar_tensor(1.0, DType::Float64));
  };
  EXPECT_DOUBLE_EQ(grad(outer)(scalar_tensor(3.0, DType::Float64)).item<double>(), 1.0);
  // d/dx [ (d/dy (x * y))(y=2) * x ] = d/dx [x^2] = 2x.
  auto outer2 = [](const Tensor& x) {
    auto inner = [&x](const Tensor& y) { return x * y; };
    return grad(inner)(scalar_tensor(2.0, DType::Float64)) * x;
  };
  EXPECT_DOUBLE_EQ(grad(outer2)(scalar_tensor(3.0, DType::Float64)).item<double>(), 6.0);
}

TEST(Grad, ValueAndGradWithAux) {
  auto f = [](const Tensor& x) { return std::make_pair(sum(exp(x)), TensorTree(x * 2.0)); };
  Tensor x = tensor({0.0, 1.0});
  auto [v, g, aux] = value_and_grad(f)(x);
  EXPECT_NEAR(v.item<float>(), 1.0f + std::exp(1.0f), 1e-6);
  EXPECT_NEAR(g.to_vector<float>()[1], std::exp(1.0f), 1e-6);
  EXPECT_EQ(aux.tensor().to_vector<float>(), std::vector<float>({0.0f, 2.0f}));
}

TEST(Grad, TreeArguments) {
  TensorTree params = TensorTree::dict({{"w", TensorTree(tensor({1.0, 2.0}))}, {"b", TensorTree(tensor({0.5}))}});
  auto loss = [](const TensorTree& p, const Tensor& x) { return sum(p["w"].tensor() * x + p["b"].tensor()); };
  TensorTree g = grad(loss)(params, tensor({3.0, 4.0}));
  ASSERT_TRUE(g.is_dict());
  EXPECT_EQ(g["w"].tensor().to_vector<float>(), std::vector<float>({3.0f, 4.0f}));
  EXPECT_EQ(g["b"].tensor().to_vector<float>(), std::vector<float>({2.0f}));
}

TEST(Grad, StopGradient) {
  auto f = [](const Tensor& x) { return sum(x * stop_gradient(x)); };
  EXPECT_EQ(grad(f)(tensor({3.0})).to_vector<float>(), std::vector<float>({3.0f}));
}

TEST(Jvp, ForwardAndForwardOverReverse) {
  Tensor x = scalar_tensor(2.0, DType::Float64);
  auto [y, t] = jvp(f_cubic, x, scalar_tensor(1.0, DType::Float64));
  EXPECT_DOUBLE_EQ(y.item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(t.item<double>(), 14.0);
  EXPECT_DOUBLE_EQ(hvp(f_cubic, x, scalar_tensor(1.0, DType::Float64)).item<double>(), 12.0);
  // jvp of jvp: second derivative.
  auto df = [](const Tensor& x) { return jvp(f_cubic, x, ones_like(x)).second; };
  EXPECT_DOUBLE_EQ(jvp(df, x, scalar_tensor(1.0, DType::Float64)).second.item<double>(), 12.0);
}

TEST(Vjp, PullbackMatchesGrad) {
  Tensor x = tensor({0.5, -1.0, 2.0});
  auto [y, pb] = vjp([](const Tensor& x) { return sin(x) * x; }, x);
  Tensor g = pb(tensor({1.0, 2.0, 3.0}));
  auto xs = x.to_vector<float>();
  float w[] = {1, 2, 3};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(g.to_vector<float>()[i], w[i] * (std::cos(xs[i]) * xs[i] + std::sin(xs[i])), 1e-5);
  Tensor g2 = pb(tensor({1.0, 2.0, 3.0}));  // may run twice
  EXPECT_EQ(g.to_vector<float>(), g2.to_vector<float>());
}

TEST(GradErrors, ClearMessages) {
  EXPECT_ERROR(grad([](const Tensor& x) { return x * 2.0; })(tensor({1.0, 2.0})),
               "needs a scalar output");
  EXPECT_ERROR(grad([](const Tensor& x, const Tensor& y) { return sum(x * y); }, 2)(tensor({1.0}), tensor({1.0})),
               "argument position 2 is out of range for a function called with 2 arguments");
  EXPECT_ERROR(grad([](const Tensor& x) { return argmax(x); })(tensor({1.0, 2.0})),
               "only floating outputs can be differentiated");
  EXPECT_ERROR(grad([](const Tensor& x) { return sum(x); })(tensor({1, 2})), "only floating tensors can be differentiated");
  EXPECT_ERROR(vjp([](const Tensor& x) { return argmax(x, 0); }, tensor({1.0, 3.0})), "returned no floating tensor");
}

}  // namespace
}  // namespace spore

namespace spore {
namespace {

TEST(GradErrors, SavedTensorModifiedInPlace) {
  Tensor w = ops::tensor({2.0, 3.0});
  auto f = [&w](const Tensor& x) {
    Tensor y = x * w;  // mul saves w for its backward
    ops::add_(w, ops::tensor({1.0, 1.0}));
    return ops::sum(y);
  };
  EXPECT_ERROR(grad(f)(ops::tensor({1.0, 1.0})), "was modified in place after it was saved");
  EXPECT_EQ(w.to_vector<double>(), std::vector<double>({3.0, 4.0}));
  // Tracked tensors cannot be updated in place.
  EXPECT_ERROR(grad([](const Tensor& x) {
                 Tensor y = x * 2.0;
                 ops::add_(y, x);
                 return ops::sum(y);
               })(ops::tensor({1.0})),
               "tracked by an open transform");
}

}  // namespace
}  // namespace spore

namespace spore {
namespace {

TEST(Hessian, TwoLayerMlpEqualsJacfwdOfJacrevAndFiniteDifferences) {
  using namespace ops;
  Tensor w1 = tensor({{0.3, -0.2, 0.5}, {0.1, 0.4, -0.3}}), b1 = tensor({0.05, -0.1, 0.2});
  Tensor w2 = tensor({{0.7}, {-0.6}, {0.2}});
  auto mlp = [&](const Tensor& x) { return sum(matmul(tanh(matmul(x.reshape({1, 2}), w1) + b1), w2)); };
  Tensor x = tensor({0.4, -0.9});
  Tensor h = hessian(mlp)(x);
  ASSERT_EQ(h.shape(), Shape({2, 2}));
  Tensor h2 = jacfwd([&](const Tensor& v) { return jacrev(mlp)(v); })(x);
  Tensor h3 = jacrev([&](const Tensor& v) { return jacrev(mlp)(v); })(x);
  auto a = h.to_vector<double>(), b = h2.to_vector<double>(), c = h3.to_vector<double>();
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-14);
    EXPECT_NEAR(a[i], c[i], 1e-14);
  }
  // Finite differences of the gradient.
  const double eps = 1e-6;
  for (int j = 0; j < 2; ++j) {
    Tensor d = one_hot(scalar_tensor(int64_t{j}, DType::Int64), 2).to(DType::Float64) * eps;
    auto gp = grad(mlp)(x + d).to_vector<double>(), gm = grad(mlp)(x - d).to_vector<double>();
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(a[i * 2 + j], (gp[i] - gm[i]) / (2 * eps), 1e-8);
  }
  EXPECT_NEAR(a[1], a[2], 1e-15);  // symmetric
}

}  // namespace
}  // namespace spore


namespace spore {
namespace {

TEST(GradErrors, TracedTensorFromAnotherThread) {
  std::string err;
  auto f = [&err](const Tensor& x) {
    std::thread t([&] {
      try {
        (void)(x * 2.0);
      } catch (const Error& e) {
        err = e.what();
      }
    });
    t.join();
    return ops::sum(x);
  };
  (void)grad(f)(ops::tensor({1.0}));
  EXPECT_NE(err.find("open in another thread"), std::string::npos) << err;
}

}  // namespace
}  // namespace spore
