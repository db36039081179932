// SPDX-License-Identifier: Apache-2.0
// Graph mode: set_context(Mode::Graph) compiles the outermost transform call, with no change to
// the model code; results equal PyNative's.
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "passes/pipeline.h"
#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

struct GraphModeScope {
  GraphModeScope() { set_context(Mode::Graph); }
  ~GraphModeScope() { set_context(Mode::PyNative); }
};

Tensor loss(const Tensor& w, const Tensor& x) { return sum(tanh(matmul(x, w)) * 0.5); }

// Graph results equal PyNative's bitwise at O1 (same kernels); at O2 fused transcendental ops
// may differ in the last bits (tests/codegen documents the bound), so there compare to 1e-13.
void expect_close(const std::vector<double>& got, const std::vector<double>& want) {
  const double rel = passes::default_level() >= 2 ? 1e-13 : 0.0;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], rel * std::max(1.0, std::abs(want[i]))) << i;
}

TEST(GraphMode, OutermostTransformCallsCompileOncePerSignature) {
  const Tensor w = tensor({{0.3, -0.2}, {0.1, 0.4}, {-0.5, 0.2}}), x = tensor({{1.0, 2.0, -1.0}});
  const auto want = grad(loss)(w, x).to_vector<double>();
  const auto want_vg = value_and_grad(loss, {0, 1})(w, x);
  GraphModeScope graph;
  auto g = grad(loss);
  const int64_t before = transforms::total_traces();
  expect_close(g(w, x).to_vector<double>(), want);
  expect_close(g(w * 2.0, x).to_vector<double>(), grad(loss)(w * 2.0, x).to_vector<double>());
  EXPECT_EQ(transforms::total_traces() - before, 2);  // `g` once, the fresh grad(loss) once
  g(w, x * 3.0);
  EXPECT_EQ(transforms::total_traces() - before, 2);  // same signature: no new trace
  auto [v, gs] = value_and_grad(loss, {0, 1})(w, x);
  expect_close({v.item<double>()}, {want_vg.first.item<double>()});
  expect_close(gs[1].to_vector<double>(), want_vg.second[1].to_vector<double>());
  // Nested transforms pass through into the outer graph.
  auto gg = grad([](const Tensor& a) { return sum(grad([](const Tensor& b) { return sum(b * b * b); })(a)); });
  EXPECT_EQ(gg(tensor({1.0, -2.0})).to_vector<double>(), (std::vector<double>{6.0, -12.0}));
  // vmap and hessian compile too.
  const Tensor xs = tensor({{1.0, 2.0}, {3.0, 4.0}});
  EXPECT_EQ(vmap([](const Tensor& r) { return sum(r * r); })(xs).to_vector<double>(), (std::vector<double>{5.0, 25.0}));
  const auto h = hessian([](const Tensor& a) { return sum(a * a * a); })(tensor({1.0, 2.0})).to_vector<double>();
  EXPECT_EQ(h, (std::vector<double>{6.0, 0.0, 0.0, 12.0}));
}

TEST(GraphMode, TracesSoDataDependentCxxControlFlowPointsToCond) {
  auto f = [](const Tensor& x) { return x.item<double>() > 0 ? sum(x * x) : sum(-x); };
  EXPECT_EQ(grad(f)(tensor({2.0})).item<double>(), 4.0);  // PyNative: plain C++
  GraphModeScope graph;
  EXPECT_ERROR(grad(f)(tensor({2.0})), "cond");
  // The same logic through cond compiles.
  auto g = [](const Tensor& x) {
    return cond(sum(x) > 0.0, [](const TensorTree& t) { return TensorTree(sum(t.tensor() * t.tensor())); },
                [](const TensorTree& t) { return TensorTree(sum(-t.tensor())); }, x)
        .tensor();
  };
  EXPECT_EQ(grad(g)(tensor({2.0})).item<double>(), 4.0);
  EXPECT_EQ(grad(g)(tensor({-2.0})).item<double>(), -1.0);
}

}  // namespace
}  // namespace spore
