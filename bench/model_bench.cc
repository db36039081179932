// SPDX-License-Identifier: Apache-2.0
// Spore's side of the model-level figures of issue 4 (bench/model_bench.sh runs it beside
// bench/torch_model_bench.py and bench/ort_bench.js). A small main printing one JSON line per
// figure rather than a Google Benchmark: the compile-time figures need a fresh process each.
//   spore_model_bench infer DIR NAME   ResNet-18 / MobileNetV2 ("resnet18", "mobilenet_v2")
//       inference at 224x224, batch 1 and 16, eval mode, the forward jit-compiled (Graph mode),
//       with the weights bench/export_models.py wrote to DIR/NAME (torchvision's state_dict,
//       loaded strictly by name); also the max |difference| from torch's output on DIR/NAME/input.npy.
//   spore_model_bench train            ResNet-18 training step, batch 16, cross-entropy, SGD
//       lr 0.01 momentum 0.9: train::Model::train_step in Graph mode (one compiled plan), with
//       the allocator's peak bytes in use over one steady step.
//   spore_model_bench transformer      4 post-norm TransformerEncoderLayer (d_model 256, 4 heads,
//       ff 1024, ReLU, dropout 0, batch first) on (16, 128, 256), loss mean(out^2): value_and_grad
//       w.r.t. every parameter in Graph mode (one compiled forward+backward).
//   spore_model_bench compile resnet18|transformer [LABEL]   the first call in this process of the
//       ResNet-18 eval forward (batch 1) or of the transformer's train step (train::Model, SGD
//       momentum): trace, passes, lowering, kernel preparation (first_call_ms), and until every
//       generated kernel is built and loaded (ready_ms); compile_ms = ready_ms minus the fastest of
//       3 later calls (the run time the first call also contains). The kernel cache is wherever
//       SPORE_KERNEL_CACHE points: model_bench.sh runs it cold (empty directory), then warm
//       (a second process on the same directory); LABEL ("cold", "warm") is copied to the line.
// `--quick` shortens the timing budgets. Two threads throughout.
#include <spore/data/sources.h>
#include <spore/models/mobilenet.h>
#include <spore/models/resnet.h>
#include <spore/nn/transformer.h>
#include <spore/optim/sgd.h>
#include <spore/spore.h>
#include <spore/train/model.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compiler.h"
#include "transforms/jit_stats.h"

namespace {
using namespace spore;
using Clock = std::chrono::steady_clock;

bool g_quick = false;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Timing {
  double median_ms, min_ms;
  int runs;
};

// Median of runs over `budget_s` seconds (at least 5 runs) after `warmup` calls.
Timing time_it(const std::function<void()>& fn, double budget_s, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  const auto start = Clock::now();
  while (t.size() < 5 || (ms_since(start) < budget_s * 1e3 && t.size() < 200)) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t[0], static_cast<int>(t.size())};
}

// How the process's jit calls ran (a figure must come from compiled plans, not the interpreter),
// and the optimization level (SPORE_OPT_LEVEL; default 1), as the JSON line's last fields.
std::string run_stats() {
  const auto r = transforms::jit_run_stats();
  const char* level = std::getenv("SPORE_OPT_LEVEL");
  std::string why = transforms::last_interpreted_reason();
  for (char& c : why)
    if (c == '"' || c == '\\' || c == '\n') c = ' ';
  return ", \"plan_runs\": " + std::to_string(r.plan_runs) + ", \"interpreted_runs\": " +
         std::to_string(r.interpreted_runs) + ", \"interpreted_reason\": \"" + why + "\", \"opt_level\": \"" +
         (level && *level ? level : "default") + "\"}";
}

// Puts PyNative back (and keeps 2 threads) however a figure leaves.
struct ModeScope {
  explicit ModeScope(Mode m) { set_context(m); }
  ~ModeScope() { set_context(Mode::PyNative); }
};

std::unique_ptr<nn::UnaryCell> image_model(const std::string& name) {
  if (name == "resnet18") return models::resnet18();
  if (name == "mobilenet_v2") return models::mobilenet_v2();
  SPORE_CHECK(false, "spore_model_bench: unknown model '", name, "' (resnet18, mobilenet_v2)");
  return nullptr;
}

int infer(const std::string& dir, const std::string& name) {
  manual_seed(0);
  auto net = image_model(name);
  const std::string d = dir + "/" + name;
  std::ifstream keys(d + "/keys.txt");
  SPORE_CHECK(keys.good(), "spore_model_bench: no ", d, "/keys.txt (write it with bench/export_models.py)");
  std::vector<std::pair<std::string, Tensor>> sd;
  for (std::string k; std::getline(keys, k);)
    if (!k.empty()) sd.emplace_back(k, data::read_npy(d + "/" + k + ".npy"));
  net->load_state_dict(sd);
  net->eval();
  double diff = 0;
  {
    auto fwd = jit([&](const Tensor& x) { return (*net)(x); }, name + "_forward");
    const auto got = fwd(data::read_npy(d + "/input.npy")).to_vector<float>();
    const auto want = data::read_npy(d + "/output.npy").to_vector<float>();
    SPORE_CHECK(got.size() == want.size(), "spore_model_bench: output size ", got.size(), " vs torch's ", want.size());
    for (size_t i = 0; i < got.size(); ++i) diff = std::max(diff, static_cast<double>(std::abs(got[i] - want[i])));
  }
  for (int64_t batch : {1, 16}) {
    auto fwd = jit([&](const Tensor& x) { return (*net)(x); }, name + "_forward");
    const Tensor x = ops::normal({batch, 3, 224, 224});
    const Timing t = time_it([&] { fwd(x); }, batch == 1 ? (g_quick ? 1.0 : 3.0) : (g_quick ? 2.0 : 6.0), 3);
    std::printf(
        "{\"bench\": \"spore_infer\", \"model\": \"%s\", \"batch\": %lld, \"threads\": 2, \"ms\": %.4f, \"min_ms\": "
        "%.4f, \"runs\": %d, \"traces\": %d, \"max_abs_diff\": %.3g%s\n",
        name.c_str(), static_cast<long long>(batch), t.median_ms, t.min_ms, t.runs, fwd.core().traces(), diff,
        run_stats().c_str());
    std::fflush(stdout);
  }
  return 0;
}

Tensor cross_entropy_loss(const Tensor& out, const Tensor& y) { return ops::cross_entropy(out, y); }

size_t proc_status_bytes(const char* field) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(std::string(field) + ":", 0) == 0) return std::stoull(line.substr(std::strlen(field) + 1)) * 1024;
  return 0;
}
const size_t g_rss_at_start = proc_status_bytes("VmRSS");  // libraries loaded, nothing allocated yet

int train_resnet18() {
  ModeScope scope(Mode::Graph);
  manual_seed(0);
  auto net = models::resnet18();
  optim::SGD opt(net->parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  train::Model model(*net, cross_entropy_loss, opt);
  const Tensor x = ops::normal({16, 3, 224, 224}), y = ops::randint(0, 1000, {16});
  const Timing t = time_it([&] { model.train_step(x, y); }, g_quick ? 4.0 : 12.0);
  // Peak over one steady step: parameters, momentum, the batch, the plan's arena, gradients.
  const size_t before = memory_stats().bytes_in_use;
  reset_peak_memory_stats();
  model.train_step(x, y);
  const MemoryStats m = memory_stats();
  std::printf(
      "{\"bench\": \"spore_train_resnet18\", \"batch\": 16, \"threads\": 2, \"ms\": %.4f, \"min_ms\": %.4f, "
      "\"runs\": %d, \"traces\": %d, \"peak_bytes\": %zu, \"in_use_before_bytes\": %zu, "
      "\"rss_peak_over_start_bytes\": %zu%s\n",
      t.median_ms, t.min_ms, t.runs, model.train_traces(), m.peak_bytes_in_use, before,
      proc_status_bytes("VmHWM") - g_rss_at_start, run_stats().c_str());
  return 0;
}

std::unique_ptr<nn::SequentialCell> encoder() {
  manual_seed(0);
  auto seq = std::make_unique<nn::SequentialCell>();
  for (int i = 0; i < 4; ++i)
    seq->add(std::make_unique<nn::TransformerEncoderLayer>(
        256, 4, nn::TransformerOptions{.dim_feedforward = 1024, .dropout = 0.0, .batch_first = true}));
  return seq;
}

int transformer() {
  ModeScope scope(Mode::Graph);
  auto net = encoder();
  const Tensor x = ops::normal({16, 128, 256});
  auto step = value_and_grad([&](const TensorTree& p) {
    return nn::functional_call(*net, p, [&] {
      Tensor out = (*net)(x);
      return ops::mean(out * out);
    });
  });
  const Timing t = time_it([&] { step(net->parameter_tree()); }, g_quick ? 3.0 : 8.0);
  std::printf(
      "{\"bench\": \"spore_transformer_fwd_bwd\", \"layers\": 4, \"d_model\": 256, \"heads\": 4, \"ff\": 1024, "
      "\"seq\": 128, \"batch\": 16, \"threads\": 2, \"ms\": %.4f, \"min_ms\": %.4f, \"runs\": %d, \"traces\": %lld%s\n",
      t.median_ms, t.min_ms, t.runs, static_cast<long long>(transforms::total_traces()), run_stats().c_str());
  return 0;
}

// The fastest of 3 later calls: the run time inside the first call, which compile_ms excludes.
double steady_ms(const std::function<void()>& fn) {
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, ms_since(t0));
  }
  return best;
}

int compile_time(const std::string& what, const std::string& label) {
  const char* cache = std::getenv("SPORE_KERNEL_CACHE");
  double first = 0, ready = 0, second = 0;
  if (what == "resnet18") {
    manual_seed(0);
    auto net = models::resnet18();
    net->eval();
    const Tensor x = ops::normal({1, 3, 224, 224});
    auto fwd = jit([&](const Tensor& in) { return (*net)(in); }, "resnet18_forward");
    const auto t0 = Clock::now();
    fwd(x);
    first = ms_since(t0);
    codegen::wait_for_compiles();
    ready = ms_since(t0);
    second = steady_ms([&] { fwd(x); });
  } else if (what == "transformer") {
    ModeScope scope(Mode::Graph);
    auto net = encoder();
    optim::SGD opt(net->parameters(), optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
    train::Model model(
        *net, [](const Tensor& out, const Tensor& y) { return ops::mean((out - y) * (out - y)); }, opt);
    const Tensor x = ops::normal({16, 128, 256}), y = ops::normal({16, 128, 256});
    const auto t0 = Clock::now();
    model.train_step(x, y);
    first = ms_since(t0);
    codegen::wait_for_compiles();
    ready = ms_since(t0);
    second = steady_ms([&] { model.train_step(x, y); });
  } else {
    SPORE_CHECK(false, "spore_model_bench compile: unknown figure '", what, "' (resnet18, transformer)");
  }
  std::printf(
      "{\"bench\": \"spore_compile\", \"what\": \"%s\", \"cache\": \"%s\", \"kernel_cache\": \"%s\", "
      "\"first_call_ms\": %.3f, \"ready_ms\": %.3f, \"steady_call_ms\": %.3f, \"compile_ms\": %.3f, "
      "\"compiler_invocations\": %lld, \"compile_failures\": %lld%s\n",
      // Compile time is the first call's time to ready less one steady call (the run inside the
      // first call); with a warm cache the two are within the machine's noise of each other, and
      // a difference below zero means no compile time was seen: 0.
      what.c_str(), label.c_str(), cache ? cache : "", first, ready, second, std::max(0.0, ready - second),
      static_cast<long long>(codegen::compiler_invocations()), static_cast<long long>(codegen::compile_failures()),
      run_stats().c_str());
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: spore_model_bench [--quick] infer DIR resnet18|mobilenet_v2 | train | transformer | "
               "compile resnet18|transformer [LABEL]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) g_quick = true;
    else args.emplace_back(argv[i]);
  }
  if (args.empty()) return usage();
  spore::set_num_threads(2);
  try {
    if (args[0] == "infer" && args.size() == 3) return infer(args[1], args[2]);
    if (args[0] == "train" && args.size() == 1) return train_resnet18();
    if (args[0] == "transformer" && args.size() == 1) return transformer();
    if (args[0] == "compile" && (args.size() == 2 || args.size() == 3))
      return compile_time(args[1], args.size() == 3 ? args[2] : "");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return usage();
}
