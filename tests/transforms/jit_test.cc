// SPDX-License-Identifier: Apache-2.0
// jit: traces once per signature, runs the graph, equals eager; nesting with grad.
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "spore/guard.h"
#include "spore/spore.h"

namespace spore {
namespace {

using namespace ops;

TEST(Jit, TracesOncePerSignatureAndMatchesEager) {
  auto f = [](const Tensor& x, const Tensor& y) { return tanh(x * y + 1.0) - y; };
  auto jf = jit(f);
  Tensor x = tensor({{0.5, -1.0}, {2.0, 0.25}}), y = tensor({1.5, -0.5});
  Tensor a = jf(x, y);
  EXPECT_EQ(a.to_vector<float>(), f(x, y).to_vector<float>());  // same kernels: bitwise
  jf(x * 2.0, y);
  EXPECT_EQ(jf.core().traces(), 1);
  jf(tensor({1.0, 2.0}), y);  // new shape: a new trace
  EXPECT_EQ(jf.core().traces(), 2);
  jf(x.to(DType::Float32), y.to(DType::Float32));
  EXPECT_EQ(jf.core().traces(), 3);
}

TEST(Jit, GraphIsRealIrAndCapturesByReference) {
  Tensor w = tensor({1.0, 2.0});
  auto jf = jit([&w](const Tensor& x) { return x * w + 3.0; });
  EXPECT_EQ(jf(tensor({1.0, 1.0})).to_vector<float>(), std::vector<float>({4.0f, 5.0f}));
  const std::string text = jf.core().last_graph_text();
  EXPECT_NE(text.find("mul"), std::string::npos) << text;
  EXPECT_NE(text.find("constant"), std::string::npos) << text;
  // By reference: an in-place update of the captured tensor is seen by the next call.
  ops::copy_(w, tensor({10.0, 20.0}));
  EXPECT_EQ(jf(tensor({1.0, 1.0})).to_vector<double>(), std::vector<double>({13.0, 23.0}));
  EXPECT_EQ(jf.core().traces(), 1);
}

TEST(Jit, StaticLeavesAreExactAndTypedInTheSignature) {
  auto jf = jit([](const Tensor& x, const TensorTree& s) {
    return std::holds_alternative<double>(s.static_value()) ? x * std::get<double>(s.static_value()) : x;
  });
  jf(tensor({1.0}), TensorTree::leaf(0.1));
  jf(tensor({1.0}), TensorTree::leaf(0.1000001));
  jf(tensor({1.0}), TensorTree::leaf(int64_t{1}));
  jf(tensor({1.0}), TensorTree::leaf(1.0));
  EXPECT_EQ(jf.core().traces(), 4);
}

TEST(Jit, RandomInsideTracedLoopIsRefused) {
  auto jf = jit([](const Tensor& x) {
    return scan([](const TensorTree& c, const TensorTree& xi) {
             return std::make_pair(TensorTree(c.tensor() + ops::uniform({1})), xi);
           }, TensorTree(ops::zeros({1})), TensorTree(x)).first.tensor();
  });
  EXPECT_ERROR(jf(ops::zeros({3, 1})), "numbers would repeat on every step");
}

TEST(Jit, GradInsideJitIsTracedIntoTheGraph) {
  auto f = [](const Tensor& x) { return x * x * x + 2.0 * x; };
  auto df = jit([&f](const Tensor& x) { return grad(f)(x); });
  EXPECT_DOUBLE_EQ(df(scalar_tensor(2.0, DType::Float64)).item<double>(), 14.0);
  auto ddf = jit([&f](const Tensor& x) { return grad(grad(f))(x); });
  EXPECT_DOUBLE_EQ(ddf(scalar_tensor(2.0, DType::Float64)).item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(ddf(scalar_tensor(3.0, DType::Float64)).item<double>(), 18.0);
  EXPECT_EQ(ddf.core().traces(), 1);
  // The traced backward is real IR (the pass pipeline then reduces 6x to additions).
  setenv("SPORE_OPT_LEVEL", "0", 1);
  auto raw = jit([&f](const Tensor& x) { return grad(grad(f))(x); });
  EXPECT_DOUBLE_EQ(raw(scalar_tensor(2.0, DType::Float64)).item<double>(), 12.0);
  unsetenv("SPORE_OPT_LEVEL");
  EXPECT_NE(raw.core().last_graph_text().find("mul"), std::string::npos);
  EXPECT_LT(ddf.core().last_graph_text().size(), raw.core().last_graph_text().size());
}

TEST(Jit, PassesThroughInsideGrad) {
  auto jf = jit([](const Tensor& x) { return sin(x) * x; });
  Tensor g = grad([&jf](const Tensor& x) { return sum(jf(x)); })(tensor({0.5}));
  EXPECT_NEAR(g.item<float>(), std::cos(0.5f) * 0.5f + std::sin(0.5f), 1e-6);
  EXPECT_EQ(jf.core().traces(), 0);
}

TEST(Jit, ReadingATracedValueIsAnError) {
  auto jf = jit([](const Tensor& x) { return x.item<float>() > 0 ? x : -x; });
  EXPECT_ERROR(jf(tensor({1.0})), "cond");
  EXPECT_ERROR(jf(tensor({1.0})), "while_loop");
}

}  // namespace
}  // namespace spore

namespace spore {
namespace {

TEST(Jit, RandomMatchesPyNativeForTheSameSeed) {
  auto f = [](const Tensor& x) { return x + ops::uniform(x.shape()) + ops::sum(ops::normal({2})); };
  Tensor x = ops::zeros({3});
  manual_seed(7);
  Tensor e1 = f(x), e2 = f(x);
  auto jf = jit(f);
  manual_seed(7);
  Tensor j1 = jf(x), j2 = jf(x);
  EXPECT_EQ(j1.to_vector<float>(), e1.to_vector<float>());
  EXPECT_EQ(j2.to_vector<float>(), e2.to_vector<float>());  // never frozen to the first call's numbers
  EXPECT_NE(j1.to_vector<float>(), j2.to_vector<float>());
}

}  // namespace
}  // namespace spore

namespace spore {
namespace {

// A training step: grad with respect to a captured weight (the tape tracks an alias of it, the
// same storage and geometry), then an in-place update of the weight itself. The alias and the
// weight are one graph input, and the update is state written back in place.
TEST(Jit, GradOfCapturedWeightThenInPlaceUpdate) {
  Tensor w = tensor({1.0, -2.0, 3.0});
  Tensor x = tensor({0.5, 1.0, 2.0});
  auto step = [&](const Tensor& lr) {
    Tensor g = grad([&](const Tensor& wt) { return ops::sum(wt * wt * x); })(w);
    ops::copy_(w, w - lr * g);
    return ops::sum(w);
  };
  Tensor w0 = w.clone();
  Tensor eager = step(ops::full({}, 0.1));
  Tensor w_eager = w.clone();
  ops::copy_(w, w0);
  auto jf = jit(step);
  Tensor traced = jf(ops::full({}, 0.1));
  EXPECT_EQ(traced.to_vector<float>(), eager.to_vector<float>());
  EXPECT_EQ(w.to_vector<float>(), w_eager.to_vector<float>());
  jf(ops::full({}, 0.1));  // a second step from the updated weight, same graph
  EXPECT_EQ(jf.core().traces(), 1);
  EXPECT_NEAR(w.to_vector<float>()[0], 1.0f * 0.9f * 0.9f, 1e-6);
  EXPECT_NE(jf.core().last_graph_text().find("updates"), std::string::npos) << jf.core().last_graph_text();
}

}  // namespace
}  // namespace spore

namespace spore {
namespace {

// A flag read while tracing (a Cell's training mode is one) guards the graph: flipping it traces
// again instead of running the graph traced for the other value, and flipping back reuses it.
TEST(Jit, GuardedFlagsSelectTheGraph) {
  GuardedFlag training(true);
  auto f = [&](const Tensor& x) { return training.get() ? x * 2.0 : x + 1.0; };
  auto jf = jit(f);
  Tensor x = tensor({1.0, 2.0});
  EXPECT_EQ(jf(x).to_vector<float>(), (std::vector<float>{2, 4}));
  training.set(false);
  EXPECT_EQ(jf(x).to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(jf.core().traces(), 2);
  training.set(true);
  EXPECT_EQ(jf(x).to_vector<float>(), (std::vector<float>{2, 4}));
  training.set(false);
  EXPECT_EQ(jf(x).to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(jf.core().traces(), 2);  // both graphs are kept
  // A flag that dies with its owner never matches again (a new owner may reuse its address).
  auto scoped = std::make_unique<GuardedFlag>(true);
  auto g = jit([&](const Tensor& v) { return scoped->get() ? v : -v; });
  g(x);
  scoped = std::make_unique<GuardedFlag>(true);
  g(x);
  EXPECT_EQ(g.core().traces(), 2);
}

}  // namespace
}  // namespace spore
