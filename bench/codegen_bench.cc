// SPDX-License-Identifier: Apache-2.0
// Kernel generation (issue 4): y = gelu(x * w + b) * sigmoid(z) over 16M float32, every operand
// full size, under jit at level 2 (one fused node: on the loop interpreter, and compiled by the
// host compiler), and at level 1 (the five ops unfused), side by side with PyTorch eager
// (torch_bench.py). Also the time from a fused node's first call to its compiled kernel being
// ready, with a cold and with a warm kernel cache.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <spore/spore.h>

#include "codegen/compiler.h"

namespace {
using namespace spore;

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
  unsetenv("SPORE_CXX");
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
  benchmark::DoNotOptimize(f(x, w, b, z));
  unsetenv("SPORE_OPT_LEVEL");
  codegen::wait_for_compiles();
  benchmark::DoNotOptimize(f(x, w, b, z));
  for (auto _ : st) benchmark::DoNotOptimize(f(x, w, b, z));
}
BENCHMARK(BM_compiled_gelu_bias_sigmoid_16M)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

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
  if (mode == 2) {  // fill the seed cache once
    setenv("SPORE_KERNEL_CACHE", seed.c_str(), 1);
    setenv("SPORE_OPT_LEVEL", "2", 1);
    auto f = jit(chain, "chain_seed");
    benchmark::DoNotOptimize(f(x, w, b, z));
    codegen::wait_for_compiles();
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
    unsetenv("SPORE_CXX");
  }
  unsetenv("SPORE_OPT_LEVEL");
  unsetenv("SPORE_KERNEL_CACHE");
  st.counters["compiles_per_iter"] =
      static_cast<double>(codegen::compiler_invocations() - before) / static_cast<double>(st.iterations());
  fs::remove_all(root);
}
BENCHMARK(BM_kernel_first_call)->Arg(0)->Arg(1)->Arg(2)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
