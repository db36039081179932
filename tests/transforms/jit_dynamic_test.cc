// SPDX-License-Identifier: Apache-2.0
// Dynamic dimensions (transforms/jit_dynamic.h): two traces of one function at two sizes become
// one graph over a symbolic dimension, optimized once; each later size is traced once as a guard
// (is it that graph at that size?) and then runs the graph, without passes of its own; what
// depends on a size by value, or branches on it in C++, stays traced per size.
#include "transforms/jit_dynamic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "ir/parser.h"
#include "ir/printer.h"
#include "spore/spore.h"
#include "transforms/ir_bridge.h"
#include "runtime/plan.h"
#include "transforms/jit_stats.h"

namespace spore {
namespace {

using namespace ops;

ir::GraphPtr parse(const std::string& text) {
  transforms::register_ir_ops();
  return ir::parse_graph(text);
}

// Sizes in types and in attributes (a fill's shape, a reshape's, a product k * n + c of the
// batch) become the symbol; sizes equal in both traces, and other attributes, stay.
TEST(JitDynamic, TwoTracesBecomeOneGraphOverTheirDifferingDimension) {
  auto trace = [](int n) {
    const std::string s = std::to_string(n), flat = std::to_string(n * 6), rows = std::to_string(2 * n + 1);
    return parse("graph @f(%0: data float32[" + s + ", 2, 3], %1: parameter float32[6]) {\n"
                 "  %2 = reshape{shape=[" + s + ", 6]}(%0) : float32[" + s + ", 6]\n"
                 "  %3 = add{}(%2, %1) : float32[" + s + ", 6]\n"
                 "  %4 = reshape{shape=[" + flat + "]}(%3) : float32[" + flat + "]\n"
                 "  %5 = fill{shape=[" + rows + ", 6], dtype=float32, value=2, int_value=0}() : float32[" + rows + ", 6]\n"
                 "  return %4, %5\n}");
  };
  const ir::GraphPtr g = transforms::generalize_traces(*trace(8), *trace(3), "n");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(ir::print_graph(*g), ir::print_graph(*parse(
      "graph @f(%0: data float32[n, 2, 3], %1: parameter float32[6]) {\n"
      "  %2 = reshape{shape=[n, 6]}(%0) : float32[n, 6]\n"
      "  %3 = add{}(%2, %1) : float32[n, 6]\n"
      "  %4 = reshape{shape=[(n*6)]}(%3) : float32[(n * 6)]\n"
      "  %5 = fill{shape=[((n*2)+1), 6], dtype=float32, value=2, int_value=0}() : float32[((n * 2) + 1), 6]\n"
      "  return %4, %5\n}")));
}

TEST(JitDynamic, TracesThatDifferInMoreThanSizesStaySeparate) {
  auto with_literal = [](double v, int n) {
    const std::string s = std::to_string(n);
    return parse("graph @f(%0: data float32[" + s + "]) {\n  %1 = constant{dtype=float32, weak=true, f=" + std::to_string(v) +
                 ", i=0}() : ~float32[]\n  %2 = mul{}(%0, %1) : float32[" + s + "]\n  return %2\n}");
  };
  // A literal that changed with the size (1/n folded by an op): not a size.
  EXPECT_EQ(transforms::generalize_traces(*with_literal(0.125, 8), *with_literal(0.5, 2), "n"), nullptr);
  // The same sizes: nothing to generalize.
  EXPECT_EQ(transforms::generalize_traces(*with_literal(0.5, 8), *with_literal(0.5, 8), "n"), nullptr);
  // Two input dimensions changing by different amounts: more than one symbol.
  auto two = [](int a, int b) {
    return parse("graph @f(%0: data float32[" + std::to_string(a) + "], %1: data float32[" + std::to_string(b) +
                 "]) {\n  return %0, %1\n}");
  };
  EXPECT_EQ(transforms::generalize_traces(*two(4, 5), *two(2, 7), "n"), nullptr);
  // A float attribute that differs is a value, whatever its digits.
  auto fill = [](int n, int v) {
    return parse("graph @f() {\n  %0 = fill{shape=[" + std::to_string(n) + "], dtype=float32, value=" + std::to_string(v) +
                 ", int_value=0}() : float32[" + std::to_string(n) + "]\n  return %0\n}");
  };
  EXPECT_EQ(transforms::generalize_traces(*fill(4, 4), *fill(2, 2), "n"), nullptr);
}

Tensor mlp(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2) {
  return log_softmax(matmul(relu(matmul(x, w1) + b1), w2), 1);
}

// At both optimization levels (fusion generates kernels over the symbolic shapes at O2), each
// size runs a plan of its own lowered from the one graph: none is interpreted. Each size is
// traced once (the guard); the passes run twice (the first size, then the symbolic graph).
TEST(JitDynamic, ABatchOfAnySizeAfterTheSecondRunsTheOneOptimizedGraph) {
  manual_seed(1);
  const Tensor w1 = normal({20, 16}) * 0.2, b1 = normal({16}), w2 = normal({16, 5}) * 0.3;
  for (const char* level : {"1", "2"}) {
    ::setenv("SPORE_OPT_LEVEL", level, 1);
    auto f = jit([&](const Tensor& x) { return mlp(x, w1, b1, w2); });
    const auto before = transforms::jit_run_stats();
    for (int64_t n : {8, 3, 11, 1, 8, 64}) {
      const Tensor x = normal({n, 20});
      const auto got = f(x).to_vector<float>(), want = mlp(x, w1, b1, w2).to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << level << " " << n;
    }
    EXPECT_EQ(f.core().traces(), 5) << level;  // 8, 3, 11, 1, 64: the second 8 is cached
    EXPECT_EQ(f.core().optimizations(), 2) << level;
    EXPECT_EQ(transforms::jit_run_stats().interpreted_runs, before.interpreted_runs) << transforms::last_interpreted_reason();
    EXPECT_EQ(transforms::jit_run_stats().plan_runs - before.plan_runs, 6);
  }
  ::unsetenv("SPORE_OPT_LEVEL");
}

// A training step whose last batch is smaller (a data set that the batch size does not divide):
// one more trace for the second size, none after; the losses are PyNative's.
TEST(JitDynamic, TrainingStepServesTheShortLastBatch) {
  int optimizations = 0;
  auto losses = [&optimizations](Mode mode, int& traces) {
    manual_seed(3);
    auto net = std::make_unique<nn::SequentialCell>();
    net->add(std::make_unique<nn::Dense>(12, 16));
    net->add(std::make_unique<nn::ReLU>());
    net->add(std::make_unique<nn::Dense>(16, 4));
    set_context(mode);
    optim::SGD opt(net->parameters(), {.lr = 0.1, .momentum = 0.9});
    train::Model model(*net, [](const Tensor& o, const Tensor& y) { return cross_entropy(o, y); }, opt);
    std::vector<float> out;
    manual_seed(9);
    for (int epoch = 0; epoch < 2; ++epoch)
      for (int64_t b : {16, 16, 5, 9}) {
        const Tensor x = normal({b, 12}), y = randint(0, 4, {b});
        out.push_back(model.train_step(x, y).first.item<float>());
      }
    traces = model.train_traces();
    optimizations = model.train_optimizations();
    set_context(Mode::PyNative);
    return out;
  };
  int eager_traces = 0, graph_traces = 0;
  const auto eager = losses(Mode::PyNative, eager_traces), graph = losses(Mode::Graph, graph_traces);
  EXPECT_EQ(graph, eager);
  EXPECT_EQ(graph_traces, 3);  // 16, 5 and 9 (the guard trace)
  EXPECT_EQ(optimizations, 2) << "sizes 5 and 9 should share one optimized graph";
}

// A training BatchNorm updates its running variance with the unbiased batch variance, n / (n - 1)
// of a count that depends on the batch: it enters the trace as a size (dim_value), so the step
// still generalizes over the batch. Losses and running statistics are PyNative's, bit for bit.
TEST(JitDynamic, BatchNormTrainingStepServesEverySizeFromOneGraph) {
  int optimizations = 0;
  auto run = [&optimizations](Mode mode, int& traces, std::vector<float>& running) {
    manual_seed(5);
    auto net = std::make_unique<nn::SequentialCell>();
    net->add(std::make_unique<nn::Conv2d>(3, 6, 3, 1, 1));
    auto bn_cell = std::make_unique<nn::BatchNorm2d>(6);
    nn::BatchNorm2d* bn = bn_cell.get();
    net->add(std::move(bn_cell));
    net->add(std::make_unique<nn::ReLU>());
    net->add(std::make_unique<nn::Flatten>());
    net->add(std::make_unique<nn::Dense>(6 * 5 * 5, 4));
    set_context(mode);
    optim::SGD opt(net->parameters(), {.lr = 0.05, .momentum = 0.9});
    train::Model model(*net, [](const Tensor& o, const Tensor& y) { return cross_entropy(o, y); }, opt);
    std::vector<float> out;
    manual_seed(9);
    for (int64_t b : {8, 8, 5, 6, 3, 8}) {
      const Tensor x = normal({b, 3, 5, 5}), y = randint(0, 4, {b});
      out.push_back(model.train_step(x, y).first.item<float>());
    }
    traces = model.train_traces();
    optimizations = model.train_optimizations();
    running = bn->running_var.to_vector<float>();
    set_context(Mode::PyNative);
    return out;
  };
  int eager_traces = 0, graph_traces = 0;
  std::vector<float> eager_var, graph_var;
  const auto eager = run(Mode::PyNative, eager_traces, eager_var), graph = run(Mode::Graph, graph_traces, graph_var);
  EXPECT_EQ(graph, eager);
  EXPECT_EQ(graph_var, eager_var);
  EXPECT_EQ(graph_traces, 4);  // 8, 5, and the guard traces of 6 and 3
  EXPECT_EQ(optimizations, 2) << "sizes 5, 6 and 3 should share one optimized graph";
}

// A size folded into a value (here the mean's 1/n written as a literal by the function): the
// traces differ by more than sizes and stay per size, still correct.
TEST(JitDynamic, ValuesMadeFromSizesKeepTracesPerSize) {
  auto f = jit([](const Tensor& x) { return sum(x) * (1.0 / static_cast<double>(x.size(0))); });
  for (int64_t n : {4, 2, 8}) {
    const Tensor x = ones({n});
    EXPECT_FLOAT_EQ(f(x).item<float>(), 1.0f) << n;
  }
  EXPECT_EQ(f.core().traces(), 3);
  EXPECT_EQ(f.core().optimizations(), 3);
}

// Two captured tensors equal today are still two tensors: a size whose trace reads the other
// one gets a graph of its own, so a later change to it shows (it must not read the first one).
TEST(JitDynamic, EqualCapturedTensorsAreNotTheSameTensor) {
  Tensor a = ones({4}), b = ones({4});
  auto fn = [&](const Tensor& x) { return x * (x.size(0) >= 8 ? b : a); };
  auto f = jit(fn);
  for (int64_t n : {2, 4, 8}) f(ones({n, 4}));
  copy_(b, full({4}, 2.0));
  const Tensor x = ones({8, 4});
  EXPECT_EQ(f(x).to_vector<float>(), fn(x).to_vector<float>());
  EXPECT_EQ(f(x).to_vector<float>()[0], 2.0f);
}

// An integer attribute outside int64 (a random key's seed) is not taken for a size, and the
// traces stay per size instead of the call throwing.
TEST(JitDynamic, HugeIntegerAttributesAreNoSize) {
  auto fn = [](const Tensor& x) {
    return x + uniform(x.shape(), 0.0, 1.0, {}, RandomKey{0xF000000000000000ull + static_cast<uint64_t>(x.size(0)), 0});
  };
  auto f = jit(fn);
  for (int64_t n : {2, 3, 5}) {
    const Tensor x = zeros({n});
    EXPECT_EQ(f(x).to_vector<float>(), fn(x).to_vector<float>()) << n;
  }
}

// Why every new size is traced once: the function's C++ reads the size where no graph sees it.
// Sizes 2 and 3 take one branch, and their traces agree but for sizes; 8 takes the other, and
// its guard trace is not the symbolic graph at 8, so it runs a graph of its own: correct.
TEST(JitDynamic, ABranchOnASizeInCppIsCaughtByTheGuardTrace) {
  auto fn = [](const Tensor& x) { return x.size(0) > 4 ? relu(x) * 3.0 : x * 2.0; };
  auto f = jit(fn);
  for (int64_t n : {2, 3, 8, 5, 4}) {
    const Tensor x = normal({n, 3});
    EXPECT_EQ(f(x).to_vector<float>(), fn(x).to_vector<float>()) << n;
  }
  EXPECT_EQ(f.core().traces(), 5);
  // 2 on its own, {2, 3} generalized, 8 on its own, {8, 5} generalized; 4 is the first graph.
  EXPECT_EQ(f.core().optimizations(), 4);
}

}  // namespace
}  // namespace spore

namespace spore {
namespace {

// The plans of one graph over a symbolic dimension share one memory layout (offsets affine in the
// size, passes/plan_family.h) and one arena: an inference network whose BatchNorms fold into its
// conv weights (steps on parameters alone, kept between calls) folds them once for every size
// that fits the arena, not once per size; a weight changed in place between sizes is still seen,
// and each size's results are PyNative's.
TEST(JitDynamic, SizesShareOneArenaAndTheWeightsFoldedOnce) {
  struct Level {
    Level() { ::setenv("SPORE_OPT_LEVEL", "2", 1); }
    ~Level() { ::unsetenv("SPORE_OPT_LEVEL"); }
  } level;
  manual_seed(4);
  nn::SequentialCell net;
  net.add(std::make_unique<nn::Conv2d>(3, 8, 3, 1, 1));
  net.add(std::make_unique<nn::BatchNorm2d>(8));
  net.add(std::make_unique<nn::ReLU>());
  net.add(std::make_unique<nn::Conv2d>(8, 4, 3, 1, 1));
  net.add(std::make_unique<nn::BatchNorm2d>(4));
  // Running statistics away from (0, 1), so the fold is no identity.
  for (auto& [name, b] : net.named_buffers()) {
    if (name.find("running_mean") != std::string::npos) ops::copy_(b, normal(b.shape()) * 0.3);
    if (name.find("running_var") != std::string::npos) ops::copy_(b, uniform(b.shape(), 0.5, 2.0));
  }
  net.eval();
  auto f = jit([&](const Tensor& x) { return net(x); });
  auto check = [&](int64_t n) {
    const Tensor x = normal({n, 3, 6, 6});
    const auto got = f(x).to_vector<float>(), want = net(x).to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << n << " at " << i;
  };
  check(8);
  check(5);  // the graph over a symbolic size: this plan starts the family's layout
  check(6);  // the first plan in the shared layout, folding the weights into its new arena
  check(5);  // lowered again, now in the shared layout (and arena)
  const int64_t folds = runtime::invariant_step_runs();
  check(3);  // (where a kernel's scratch is above its bound here, the layout is made again)
  check(7);  // a larger arena: the folded weights are copied into it
  check(6);
  EXPECT_EQ(runtime::invariant_step_runs(), folds) << "sizes that fit the arena refolded the weights";
  // A weight written in place: every size sees it.
  auto params = net.parameters();
  ops::copy_(params[0], params[0] * 1.5);
  check(7);
  check(4);
  EXPECT_GT(runtime::invariant_step_runs(), folds);
  EXPECT_EQ(f.core().optimizations(), 2);
}

}  // namespace
}  // namespace spore
