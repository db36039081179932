// SPDX-License-Identifier: Apache-2.0
// custom_vjp uses the user's backward; checkpoint recomputes and replays dropout's mask.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

TEST(CustomVjp, UsesTheUserBackward) {
  // Forward x^2, but a backward that says 3x (so the test sees which one ran).
  auto sq = custom_vjp([](const TensorTree& x) { return std::make_pair(TensorTree(x.tensor() * x.tensor()), x); },
                       [](const TensorTree& res, const TensorTree& ct) { return TensorTree(ct.tensor() * res.tensor() * 3.0); });
  auto f = [&](const Tensor& x) { return sum(sq(x).tensor()); };
  Tensor x = tensor({1.0, 2.0});
  EXPECT_EQ(f(x).item<double>(), 5.0);
  EXPECT_EQ(grad(f)(x).to_vector<double>(), std::vector<double>({3.0, 6.0}));
  // The backward's ops are differentiated too: d/dx sum(3x) = 3.
  auto g = [&](const Tensor& x) { return sum(grad(f)(x)); };
  EXPECT_EQ(grad(g)(x).to_vector<double>(), std::vector<double>({3.0, 3.0}));
  EXPECT_ERROR(jvp(f, x, ones_like(x)), "forward mode (jvp) cannot go through");
}

TEST(CustomVjp, UnderJitWithGradInside) {
  // The trace records the forward; the tape inside it records the custom node, whose backward's
  // ops land in the same graph. Values as in PyNative, to second order.
  auto sq = custom_vjp([](const TensorTree& x) { return std::make_pair(TensorTree(x.tensor() * x.tensor()), x); },
                       [](const TensorTree& res, const TensorTree& ct) { return TensorTree(ct.tensor() * res.tensor() * 3.0); });
  auto f = [&](const Tensor& x) { return sum(sin(sq(x).tensor())); };
  const Tensor x = tensor({1.0, -0.5, 2.0});
  auto jg = jit([&](const Tensor& v) { return grad(f)(v); });
  EXPECT_EQ(jg(x).to_vector<double>(), grad(f)(x).to_vector<double>());
  EXPECT_EQ(jg(x * 2.0).to_vector<double>(), grad(f)(x * 2.0).to_vector<double>());
  EXPECT_EQ(jg.core().traces(), 1);  // the backward is part of the cached graph
  // The custom node lives only on the tape: the graph holds its forward and backward ops.
  const std::string text = jg.core().last_graph_text();
  EXPECT_EQ(text.find("custom_vjp"), std::string::npos) << text;
  auto g2 = [&](const Tensor& v) { return sum(grad(f)(v)); };
  const auto jgg = jit([&](const Tensor& v) { return grad(g2)(v); })(x).to_vector<double>();
  const auto want = grad(g2)(x).to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(jgg[i], want[i], 1e-12) << i;
  // Under jit alone the forward is traced as it is.
  EXPECT_EQ(jit(f)(x).item<double>(), f(x).item<double>());
  // vmap(grad) uses the custom backward per example; grad of vmap cannot yet, and says so
  // instead of differentiating the forward silently.
  const Tensor xs = tensor({{1.0, 2.0}, {0.5, -1.0}});
  const auto per = vmap(grad(f))(xs).to_vector<double>();
  const auto row1 = grad(f)(tensor({0.5, -1.0})).to_vector<double>();
  EXPECT_EQ(std::vector<double>(per.begin() + 2, per.end()), row1);
  EXPECT_ERROR(grad([&](const Tensor& v) { return sum(vmap(f)(v)); })(xs), "put grad inside vmap");
}

TEST(Checkpoint, RecomputeReplaysTheDropoutMask) {
  auto body = [](const TensorTree& t) {
    Tensor x = t.tensor();
    return TensorTree(dropout(sin(x) * x, 0.5, true) * x);
  };
  auto plain = [&](const Tensor& x) { return sum(body(x).tensor()); };
  auto ckpt_body = checkpoint(body);
  auto ckpt = [&](const Tensor& x) { return sum(ckpt_body(x).tensor()); };
  Tensor x = linspace(-2.0, 2.0, 64, {DType::Float64});
  manual_seed(5);
  auto [v1, g1] = value_and_grad(plain)(x);
  manual_seed(5);
  auto [v2, g2] = value_and_grad(ckpt)(x);
  EXPECT_EQ(v1.item<double>(), v2.item<double>());
  EXPECT_EQ(g1.to_vector<double>(), g2.to_vector<double>());
  // The generator continues where the forward left it: recomputation does not consume keys.
  manual_seed(5);
  plain(x);
  const uint64_t after_plain = default_generator().offset();
  manual_seed(5);
  grad(ckpt)(x);
  EXPECT_EQ(default_generator().offset(), after_plain);
}

}  // namespace
}  // namespace spore

namespace spore {
namespace {

// A checkpointed block with BatchNorm in training: the running statistics are updated once (by
// the forward, not again by the recomputation), and the gradient is the plain one.
TEST(Checkpoint, BatchNormStatisticsUpdateOnce) {
  const Tensor x = tensor({{1.0, 2.0}, {3.0, -1.0}, {0.5, 0.25}});
  Tensor rm = zeros({2}, {DType::Float64}), rv = ones({2}, {DType::Float64});
  Tensor rm_plain = zeros({2}, {DType::Float64}), rv_plain = ones({2}, {DType::Float64});
  auto block = checkpoint([&](const TensorTree& t) { return TensorTree(tanh(batch_norm(t.tensor(), {}, {}, rm, rv, true, 0.1))); });
  const Tensor g = grad([&](const Tensor& v) { return sum(block(v).tensor() * v); })(x);
  const Tensor want = grad([&](const Tensor& v) { return sum(tanh(batch_norm(v, {}, {}, rm_plain, rv_plain, true, 0.1)) * v); })(x);
  EXPECT_EQ(g.to_vector<double>(), want.to_vector<double>());
  EXPECT_EQ(rm.to_vector<double>(), rm_plain.to_vector<double>());
  EXPECT_EQ(rv.to_vector<double>(), rv_plain.to_vector<double>());
  EXPECT_NE(rm.to_vector<double>()[0], 0.0);
  // Values read in C++ inside a checkpoint get a message that says what to do.
  auto reads = checkpoint([](const TensorTree& t) { return TensorTree(t.tensor().item<double>() > 0 ? t.tensor() : -t.tensor()); });
  EXPECT_ERROR(grad([&](const Tensor& v) { return sum(reads(v).tensor()); })(tensor({2.0})), "branch with cond/where");
}

TEST(Checkpoint, CapturedWeightsGetTheirGradients) {
  using namespace ops;
  auto f = [](const Tensor& w, const Tensor& x) {
    auto block = checkpoint([w](const TensorTree& t) { return TensorTree(sin(t.tensor() * w)); });
    return sum(block(x).tensor());
  };
  auto plain = [](const Tensor& w, const Tensor& x) { return sum(sin(x * w)); };
  Tensor w = tensor({0.5, -1.5}), x = tensor({2.0, 0.25});
  auto g = grad(f, {0, 1})(w, x);
  auto want = grad(plain, {0, 1})(w, x);
  EXPECT_EQ(g[0].to_vector<double>(), want[0].to_vector<double>());
  EXPECT_EQ(g[1].to_vector<double>(), want[1].to_vector<double>());
  // A custom backward cannot return gradients for what it captures: a clear error.
  auto bad = [](const Tensor& w, const Tensor& x) {
    auto sq = custom_vjp([w](const TensorTree& t) { return std::make_pair(TensorTree(t.tensor() * w), t); },
                         [](const TensorTree&, const TensorTree& ct) { return ct; });
    return sum(sq(x).tensor());
  };
  EXPECT_ERROR(grad(bad, {0, 1})(w, x), "pass them as inputs");
}

}  // namespace
}  // namespace spore
