// SPDX-License-Identifier: Apache-2.0
// Training as users run it (issues 4 and 5), beside bench/torch_train_bench.py:
//  - one train::Model::train_step of models::mlp({784, 512, 256, 10}) and models::lenet5(), batch
//    128, cross-entropy, SGD (lr 0.01, momentum 0.9), in Graph mode (one compiled step) and in
//    PyNative mode (eager);
//  - one full epoch of Fashion-MNIST through the data pipeline (mnist -> shuffle -> map(to_tensor,
//    normalize) -> batch(128, drop remainder) -> prefetch(2), as `spore train` builds it) and
//    Model::fit, in Graph mode. The IDX files are decoded once, outside the timing (the PyTorch
//    side decodes once into tensors too).
// Two threads (the machine's cores); the steps also at one thread. The mode is global state: every benchmark puts
// PyNative back when it ends so the other benchmarks of spore_bench run as before.
#include <benchmark/benchmark.h>

#include <spore/spore.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "codegen/compiler.h"
#include "spore/data/dataset.h"
#include "spore/data/sources.h"
#include "spore/data/transforms.h"
#include "spore/models/classic.h"
#include "spore/optim/sgd.h"
#include "spore/train/dataset_batches.h"
#include "spore/train/model.h"

namespace {
using namespace spore;

constexpr int64_t kBatch = 128;
constexpr int kThreads = 2;

Tensor cross_entropy_loss(const Tensor& out, const Tensor& y) { return ops::cross_entropy(out, y); }

std::unique_ptr<nn::SequentialCell> make_net(bool lenet) {
  manual_seed(0);
  return lenet ? models::lenet5() : models::mlp({784, 512, 256, 10});
}

// Restores the global mode however the benchmark leaves.
struct ModeScope {
  explicit ModeScope(Mode m, int threads = kThreads) {
    set_num_threads(threads);
    set_context(m);
  }
  ~ModeScope() { set_context(Mode::PyNative); }
};

// st.range(0): 0 = MLP, 1 = LeNet-5; st.range(1): 1 = Graph, 0 = PyNative; st.range(2): threads
// (2 is the figure; 1 shows the work without the cost of sharing cores on a busy machine).
void BM_train_step(benchmark::State& st) {
  const bool lenet = st.range(0) != 0, graph = st.range(1) != 0;
  ModeScope scope(graph ? Mode::Graph : Mode::PyNative, static_cast<int>(st.range(2)));
  st.SetLabel(std::string(lenet ? "lenet5" : "mlp") + (graph ? " graph" : " pynative"));
  auto net = make_net(lenet);
  optim::SGD opt(net->parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  train::Model model(*net, cross_entropy_loss, opt);
  const Tensor x = ops::normal({kBatch, 1, 28, 28}), y = ops::randint(0, 10, {kBatch});
  for (int i = 0; i < 3; ++i) model.train_step(x, y);  // warm-up: trace and compile (Graph), fill caches
  // At O2 the fused kernels compile in the background while the interpreter serves the first
  // calls: time the steady state, the compiled kernels.
  codegen::wait_for_compiles();
  model.train_step(x, y);
  for (auto _ : st) benchmark::DoNotOptimize(model.train_step(x, y));
  st.counters["steps_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
  st.counters["traces"] = model.train_traces();
}
BENCHMARK(BM_train_step)
    ->ArgsProduct({{0, 1}, {1, 0}, {2, 1}})
    ->ArgNames({"lenet", "graph", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);  // the median of 3 runs of --benchmark_min_time each

// The MLP step in Graph mode at optimization level st.range(0) (1: all passes but fusion, 2:
// fusion too), st.range(1) threads: O1 against O2 in one process, so a busy machine slows both
// alike (run with --benchmark_enable_random_interleaving=true to interleave the repetitions).
void BM_mlp_step_opt_level(benchmark::State& st) {
  const char* saved = std::getenv("SPORE_OPT_LEVEL");
  const std::string restore = saved ? saved : "";
  setenv("SPORE_OPT_LEVEL", std::to_string(st.range(0)).c_str(), 1);  // read when the step is traced
  {
    ModeScope scope(Mode::Graph, static_cast<int>(st.range(1)));
    st.SetLabel("mlp graph O" + std::to_string(st.range(0)));
    auto net = make_net(false);
    optim::SGD opt(net->parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
    train::Model model(*net, cross_entropy_loss, opt);
    const Tensor x = ops::normal({kBatch, 1, 28, 28}), y = ops::randint(0, 10, {kBatch});
    for (int i = 0; i < 3; ++i) model.train_step(x, y);
    codegen::wait_for_compiles();
    model.train_step(x, y);
    for (auto _ : st) benchmark::DoNotOptimize(model.train_step(x, y));
    st.counters["steps_per_s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
  }
  if (saved) setenv("SPORE_OPT_LEVEL", restore.c_str(), 1);
  else unsetenv("SPORE_OPT_LEVEL");
}
BENCHMARK(BM_mlp_step_opt_level)
    ->ArgsProduct({{1, 2}, {2, 1}})
    ->ArgNames({"O", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

std::shared_ptr<data::Dataset> fashion_train() {
  // Decoded once per process: the epochs time the pipeline's per-epoch work, not the file read.
  static std::shared_ptr<data::Dataset> src = [] {
    const char* dir = std::getenv("SPORE_FASHION_MNIST");
    return data::mnist(dir ? dir : "/usr/share/datasets/fashion-mnist", "train");
  }();
  return src;
}

// One epoch of Model::fit in Graph mode, pipeline included; each repetition builds a fresh model
// and compiles its step on one batch before the timed epoch. st.range(0) as in BM_train_step.
void BM_train_epoch(benchmark::State& st) {
  const bool lenet = st.range(0) != 0;
  ModeScope scope(Mode::Graph);
  st.SetLabel(lenet ? "lenet5 graph" : "mlp graph");
  auto src = fashion_train();
  auto pipeline = src->shuffle(src->size(), 42)
                      ->map({data::to_tensor(), data::normalize({0.2860}, {0.3530})})
                      ->batch(kBatch, /*drop_remainder=*/true)
                      ->prefetch(2);
  train::DatasetBatches batches(pipeline);
  auto net = make_net(lenet);
  optim::SGD opt(net->parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  train::Model model(*net, cross_entropy_loss, opt);
  {
    batches.start_epoch(0);
    const train::Batch b = *batches.next();
    model.train_step(b.x, b.y);  // compile outside the timing
  }
  int64_t epochs = 0, samples = 0;
  for (auto _ : st) {
    model.fit(++epochs, batches);
    samples += batches.batches_per_epoch() * kBatch;  // the last partial batch is dropped
  }
  st.counters["samples_per_s"] = benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsRate);
  st.counters["traces"] = model.train_traces();
}
BENCHMARK(BM_train_epoch)
    ->ArgNames({"lenet"})
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

}  // namespace
