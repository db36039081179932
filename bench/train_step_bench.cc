// SPDX-License-Identifier: Apache-2.0
// An MLP training step (issue 4's Graph-mode figure): 784-512-256-10, batch 128, cross-entropy,
// SGD with momentum 0.9 written with ops, eager (PyNative) and jitted. The jitted step runs as a
// compiled plan; SPORE_EXECUTOR=interpreter runs the same graph through the interpreter. The
// thread count is the benchmark's argument.
// Also: the cost of new batch sizes under jit, with and without dynamic dimensions.
#include <benchmark/benchmark.h>

#include <spore/models/resnet.h>
#include <spore/spore.h>

#include <cmath>
#include <vector>

#include "codegen/compiler.h"

namespace {
using namespace spore;

struct TrainStep {
  std::vector<Tensor> params, moments;
  TrainStep() {
    const int64_t sizes[] = {784, 512, 256, 10};
    for (int i = 0; i < 3; ++i) {
      const double scale = 1.0 / std::sqrt(static_cast<double>(sizes[i]));
      params.push_back(ops::uniform({sizes[i], sizes[i + 1]}, -scale, scale));
      params.push_back(ops::uniform({sizes[i + 1]}, -scale, scale));
    }
    for (const Tensor& p : params) moments.push_back(ops::zeros_like(p));
  }
  static Tensor loss(const std::vector<Tensor>& p, const Tensor& x, const Tensor& y) {
    Tensor h = x;
    for (size_t i = 0; i < 3; ++i) {
      h = ops::addmm(p[2 * i + 1], h, p[2 * i]);
      if (i < 2) h = ops::relu(h);
    }
    return ops::cross_entropy(h, y);
  }
  // `traced`: the loss reads copies of the parameters, since a trace refuses to write a tensor
  // that views were taken of (the backward transposes the weights).
  Tensor operator()(const Tensor& x, const Tensor& y, bool traced) {
    auto p = [&](size_t i) { return traced ? params[i].clone() : params[i]; };
    auto [v, g] = value_and_grad(
        [&](const Tensor& w0, const Tensor& b0, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
          return loss({w0, b0, w1, b1, w2, b2}, x, y);
        },
        {0, 1, 2, 3, 4, 5})(p(0), p(1), p(2), p(3), p(4), p(5));
    for (size_t i = 0; i < params.size(); ++i) {
      ops::copy_(moments[i], moments[i] * 0.9 + g[i]);
      ops::copy_(params[i], params[i] - moments[i] * 0.01);
    }
    return v;
  }
};

void BM_mlp_train_step(benchmark::State& st) {
  set_num_threads(static_cast<int>(st.range(1)));
  st.counters["threads"] = static_cast<double>(st.range(1));
  const bool jitted = st.range(0) != 0;
  st.SetLabel(jitted ? "jit" : "eager");
  TrainStep step;
  const Tensor x = ops::normal({128, 784}), y = ops::randint(0, 10, {128});
  auto compiled = jit([&](const Tensor& a, const Tensor& b) { return step(a, b, true); });
  for (int i = 0; i < 3; ++i) jitted ? compiled(x, y) : step(x, y, false);  // warm-up: trace, lower, fill caches
  codegen::wait_for_compiles();  // O2: time the compiled fused kernels, not the interpreter serving meanwhile
  const uint64_t allocs = memory_stats().system_allocations;
  for (auto _ : st) benchmark::DoNotOptimize(jitted ? compiled(x, y) : step(x, y, false));
  st.counters["system_allocations"] = static_cast<double>(memory_stats().system_allocations - allocs);
  st.counters["steps_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_mlp_train_step)->ArgsProduct({{0, 1}, {2}})->ArgNames({"jit", "threads"})->Unit(benchmark::kMillisecond);

}  // namespace

namespace {
// The cost of new batch sizes (issue 4, dynamic batch): a jitted ResNet-18 forward (32x32
// inputs) first called at batch 2 and 3, then timed over its first calls at batches 4-7, with
// dynamic dimensions (one optimized graph over a symbolic batch: a guard trace and a lowering
// per size) and without (trace, passes and lowering per size). Each first call also runs once.
void BM_jit_new_batch_sizes(benchmark::State& state) {
  ::setenv("SPORE_JIT_DYNAMIC", state.range(0) ? "1" : "0", 1);
  ::setenv("SPORE_OPT_LEVEL", "2", 1);
  set_num_threads(2);
  manual_seed(0);
  auto net = models::resnet18(10);
  net->eval();
  std::vector<Tensor> xs;
  for (int64_t b = 2; b < 8; ++b) xs.push_back(ops::normal({b, 3, 32, 32}));
  for (auto _ : state) {
    state.PauseTiming();
    auto f = jit([&](const Tensor& x) { return (*net)(x); });
    f(xs[0]);
    f(xs[1]);
    state.ResumeTiming();
    for (size_t i = 2; i < xs.size(); ++i) benchmark::DoNotOptimize(f(xs[i]));
    state.counters["optimizations"] = f.core().optimizations();
  }
  ::unsetenv("SPORE_JIT_DYNAMIC");
  ::unsetenv("SPORE_OPT_LEVEL");
}
BENCHMARK(BM_jit_new_batch_sizes)->Arg(1)->Arg(0)->ArgNames({"dynamic"})->Unit(benchmark::kMillisecond);
}  // namespace
