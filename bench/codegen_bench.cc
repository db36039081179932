// SPDX-License-Identifier: Apache-2.0
// Kernel generation (issue 4): y = gelu(x * w + b) * sigmoid(z) over 16M float32, every operand
// full size, under jit at level 2 (one fused node: on the loop interpreter, and compiled by the
// host compiler), and at level 1 (the five ops unfused), side by side with PyTorch eager
// (torch_bench.py). Also the time from a fused node's first call to its compiled kernel being
// ready, with a cold and with a warm kernel cache. Kernels are cached in a temporary directory
// (removed at exit), never in the user's ~/.cache.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <spore/spore.h>

#include "codegen/compiler.h"
#include "codegen/kernel_cache.h"

namespace {
using namespace spore;

// The benchmark's own kernel cache, made before any benchmark (and thread) runs, and the
// SPORE_CXX the run started with (benchmarks that force "none" put it back).
std::string g_cache_dir;
const char* const g_cxx_env = std::getenv("SPORE_CXX");
const bool g_cxx_set = g_cxx_env != nullptr;
const std::string g_startup_cxx = g_cxx_set ? g_cxx_env : "";

void restore_cxx() {
  if (g_cxx_set) setenv("SPORE_CXX", g_startup_cxx.c_str(), 1);
  else unsetenv("SPORE_CXX");
}

void remove_cache_dir() {
  std::error_code ec;
  std::filesystem::remove_all(g_cache_dir, ec);
}

[[maybe_unused]] const bool kPrivateCache = [] {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/spore-bench-cache-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return false;
  g_cache_dir = tmpl;
  ::setenv("SPORE_KERNEL_CACHE", g_cache_dir.c_str(), 1);
  std::atexit(remove_cache_dir);
  return true;
}();

// Units loaded (compiled or from the cache) so far; a compile that did not load adds none.
int64_t kernels_loaded() { return codegen::compiler_invocations() + codegen::kernel_cache_stats().hits; }

// Skips the benchmark (rather than timing the interpreter as "compiled") when the kernel was
// not built between `loaded_before`/`failed_before` and now.
bool compiled_or_skip(benchmark::State& st, int64_t loaded_before, int64_t failed_before) {
  if (!codegen::host_compiler()) {
    st.SkipWithError("no C++ compiler (c++/g++, SPORE_CXX): nothing compiled, not timing the interpreter as compiled");
    return false;
  }
  if (codegen::compile_failures() != failed_before || kernels_loaded() == loaded_before) {
    st.SkipWithError("the fused kernel's compile failed (see stderr): not timing the interpreter as compiled");
    return false;
  }
  return true;
}

Tensor chain(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& z) {
  return ops::gelu(x * w + b) * ops::sigmoid(z);
}

// jit reads SPORE_OPT_LEVEL when it compiles (at the first call), so each benchmark owns its jit.
void run_chain(benchmark::State& st, const char* level) {
  set_num_threads(static_cast<int>(st.range(0)));
  st.counters["threads"] = static_cast<double>(st.range(0));
  const Shape n{16 << 20};
  Tensor x = ops::normal(n), w = ops::normal(n), b = ops::normal(n), z = ops::normal(n);
  setenv("SPORE_OPT_LEVEL", level, 1);
  auto f = jit(chain, std::string("chain_O") + level);
  benchmark::DoNotOptimize(f(x, w, b, z));  // compile outside the timing
  unsetenv("SPORE_OPT_LEVEL");
  for (auto _ : st) benchmark::DoNotOptimize(f(x, w, b, z));
}

// The loop interpreter: SPORE_CXX=none while the node first runs, so it never asks for a compile.
void BM_fused_gelu_bias_sigmoid_16M(benchmark::State& st) {
  setenv("SPORE_CXX", "none", 1);
  run_chain(st, "2");
  restore_cxx();
}
BENCHMARK(BM_fused_gelu_bias_sigmoid_16M)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_unfused_gelu_bias_sigmoid_16M(benchmark::State& st) { run_chain(st, "1"); }
BENCHMARK(BM_unfused_gelu_bias_sigmoid_16M)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The compiled kernel, after its compile (the first call asks for it; wait for it, call again).
void BM_compiled_gelu_bias_sigmoid_16M(benchmark::State& st) {
  set_num_threads(static_cast<int>(st.range(0)));
  st.counters["threads"] = static_cast<double>(st.range(0));
  const Shape n{16 << 20};
  Tensor x = ops::normal(n), w = ops::normal(n), b = ops::normal(n), z = ops::normal(n);
  setenv("SPORE_OPT_LEVEL", "2", 1);
  auto f = jit(chain, "chain_compiled");
  const int64_t loaded = kernels_loaded(), failed = codegen::compile_failures();
  benchmark::DoNotOptimize(f(x, w, b, z));
  unsetenv("SPORE_OPT_LEVEL");
  codegen::wait_for_compiles();
  if (!compiled_or_skip(st, loaded, failed)) return;
  benchmark::DoNotOptimize(f(x, w, b, z));
  for (auto _ : st) benchmark::DoNotOptimize(f(x, w, b, z));
}
BENCHMARK(BM_compiled_gelu_bias_sigmoid_16M)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Row fusion (issue 4: fused row reductions): the gradient of sum(softmax(layer_norm(x)) * t)
// over 4096 rows of 1024 floats, under jit. Level 2 fuses each backward's row sums with the ops
// around them (one row program for softmax's backward, one for layer_norm's, compiled here);
// level 1 runs the reductions and elementwise ops apart. torch_bench.py times the same step
// eager (forward and backward).
Tensor row_loss(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& t) {
  return ops::sum(ops::softmax(ops::layer_norm(x, {x.shape().back()}, w, b), -1) * t);
}

void run_row_grad(benchmark::State& st, const char* level) {
  set_num_threads(2);
  st.counters["threads"] = 2;
  Tensor x = ops::normal({4096, 1024}), w = ops::normal({1024}), b = ops::normal({1024}), t = ops::normal({4096, 1024});
  setenv("SPORE_OPT_LEVEL", level, 1);
  auto f = jit(
      [](const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& t) {
        auto [v, g] = value_and_grad(row_loss, {0, 1, 2})(x, w, b, t);
        return std::vector<Tensor>{v, g[0], g[1], g[2]};
      },
      std::string("row_grad_O") + level);
  const int64_t loaded = kernels_loaded(), failed = codegen::compile_failures();
  benchmark::DoNotOptimize(f(x, w, b, t));
  unsetenv("SPORE_OPT_LEVEL");
  codegen::wait_for_compiles();
  if (level[0] == '2' && !compiled_or_skip(st, loaded, failed)) return;
  benchmark::DoNotOptimize(f(x, w, b, t));
  for (auto _ : st) benchmark::DoNotOptimize(f(x, w, b, t));
}

void BM_row_fused_layer_norm_softmax_grad_4096x1024(benchmark::State& st) { run_row_grad(st, "2"); }
BENCHMARK(BM_row_fused_layer_norm_softmax_grad_4096x1024)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_row_unfused_layer_norm_softmax_grad_4096x1024(benchmark::State& st) { run_row_grad(st, "1"); }
BENCHMARK(BM_row_unfused_layer_norm_softmax_grad_4096x1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// From a fused node's first call (jit tracing and passes included, on 4K elements) until its
// compiled kernel is loaded. range(0): 0 no compiler (jit + interpreter only), 1 cold cache (a
// fresh directory: the compiler runs), 2 warm cache (a fresh directory holding a copy of the
// entry, so dlopen maps a new file rather than reusing the loaded one).
void BM_kernel_first_call(benchmark::State& st) {
  namespace fs = std::filesystem;
  const int mode = static_cast<int>(st.range(0));
  const Shape n{4096};
  Tensor x = ops::normal(n), w = ops::normal(n), b = ops::normal(n), z = ops::normal(n);
  const fs::path root = fs::temp_directory_path() / ("spore-bench-kernels-" + std::to_string(getpid()));
  const fs::path seed = root / "seed";
  fs::create_directories(seed);
  fs::permissions(root, fs::perms::owner_all);
  fs::permissions(seed, fs::perms::owner_all);
  const int64_t loaded = kernels_loaded(), failed = codegen::compile_failures();
  if (mode == 2) {  // fill the seed cache once
    setenv("SPORE_KERNEL_CACHE", seed.c_str(), 1);
    setenv("SPORE_OPT_LEVEL", "2", 1);
    auto f = jit(chain, "chain_seed");
    benchmark::DoNotOptimize(f(x, w, b, z));
    codegen::wait_for_compiles();
    if (!compiled_or_skip(st, loaded, failed)) {
      setenv("SPORE_KERNEL_CACHE", g_cache_dir.c_str(), 1);
      fs::remove_all(root);
      return;
    }
  }
  const int64_t before = codegen::compiler_invocations();
  int k = 0;
  for (auto _ : st) {
    const fs::path dir = root / std::to_string(k++);
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all);
    if (mode == 2)
      for (const auto& e : fs::directory_iterator(seed)) fs::copy_file(e.path(), dir / e.path().filename());
    setenv("SPORE_KERNEL_CACHE", dir.c_str(), 1);
    setenv("SPORE_OPT_LEVEL", "2", 1);
    if (mode == 0) setenv("SPORE_CXX", "none", 1);
    auto f = jit(chain, "chain_first_" + std::to_string(k));
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(f(x, w, b, z));
    codegen::wait_for_compiles();
    st.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (mode == 0) restore_cxx();
  }
  unsetenv("SPORE_OPT_LEVEL");
  setenv("SPORE_KERNEL_CACHE", g_cache_dir.c_str(), 1);
  if (mode != 0 && !compiled_or_skip(st, loaded, failed)) {
    fs::remove_all(root);
    return;
  }
  st.counters["compiles_per_iter"] =
      static_cast<double>(codegen::compiler_invocations() - before) / static_cast<double>(st.iterations());
  fs::remove_all(root);
}
BENCHMARK(BM_kernel_first_call)->Arg(0)->Arg(1)->Arg(2)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
