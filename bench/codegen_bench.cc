// SPDX-License-Identifier: Apache-2.0
// Kernel generation (issue 4): y = gelu(x * w + b) * sigmoid(z) over 16M float32, every operand
// full size, under jit at level 2 (one fused node on the loop interpreter) and at level 1 (the
// five ops unfused), side by side with PyTorch eager (torch_bench.py).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <spore/spore.h>

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

void BM_fused_gelu_bias_sigmoid_16M(benchmark::State& st) { run_chain(st, "2"); }
BENCHMARK(BM_fused_gelu_bias_sigmoid_16M)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_unfused_gelu_bias_sigmoid_16M(benchmark::State& st) { run_chain(st, "1"); }
BENCHMARK(BM_unfused_gelu_bias_sigmoid_16M)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
