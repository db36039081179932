// SPDX-License-Identifier: Apache-2.0
// Spore's side of `make bench` (Google Benchmark). bench/run.sh runs this and
// bench/torch_bench.py in the same run and prints one JSON line per figure with the ratio.
// Every benchmark takes the thread count as its last argument.
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <spore/spore.h>

namespace {
using namespace spore;

void threads(benchmark::State& st, int64_t n) {
  set_num_threads(static_cast<int>(n));
  st.counters["threads"] = static_cast<double>(n);
}

// Eager dispatch of a tiny op: the whole path (checks, promotion, inference, allocation,
// kernel) for a 1-element add.
void BM_dispatch_add_1elem(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor a = ops::full({1}, 1.0), b = ops::full({1}, 2.0);
  for (auto _ : st) benchmark::DoNotOptimize(ops::add(a, b));
}
BENCHMARK(BM_dispatch_add_1elem)->Arg(1);

// The same with a C++ literal operand (`a + 1.0`): the literal is built in place, no dispatch.
void BM_dispatch_add_literal(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor a = ops::full({1}, 1.0);
  for (auto _ : st) benchmark::DoNotOptimize(a + 1.0);
}
BENCHMARK(BM_dispatch_add_literal)->Arg(1);

void BM_matmul_1024(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor a = ops::normal({1024, 1024}), b = ops::normal({1024, 1024});
  for (auto _ : st) benchmark::DoNotOptimize(ops::matmul(a, b));
  st.counters["GFLOPS"] = benchmark::Counter(2.0 * 1024 * 1024 * 1024, benchmark::Counter::kIsIterationInvariantRate,
                                             benchmark::Counter::kIs1000);
}
BENCHMARK(BM_matmul_1024)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same GEMM through oneDNN's matmul primitive directly: created once, output preallocated.
void BM_onednn_matmul_1024(benchmark::State& st) {
  threads(st, st.range(0));
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::desc md({1024, 1024}, memory::data_type::f32, memory::format_tag::ab);
  matmul mm(matmul::primitive_desc(matmul::desc(md, md, md), eng));
  Tensor a = ops::normal({1024, 1024}), b = ops::normal({1024, 1024}), c = ops::zeros({1024, 1024});
  memory ma(md, eng, a.data_ptr()), mb(md, eng, b.data_ptr()), mc(md, eng, c.data_ptr());
  for (auto _ : st) {
    mm.execute(s, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    s.wait();
  }
  st.counters["GFLOPS"] = benchmark::Counter(2.0 * 1024 * 1024 * 1024, benchmark::Counter::kIsIterationInvariantRate,
                                             benchmark::Counter::kIs1000);
}
BENCHMARK(BM_onednn_matmul_1024)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_conv2d_3x3_64_b8_56(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor x = ops::normal({8, 64, 56, 56}), w = ops::normal({64, 64, 3, 3}) * 0.05;
  ops::ConvOptions o;
  o.padding = {1};
  for (auto _ : st) benchmark::DoNotOptimize(ops::conv2d(x, w, {}, o));
}
BENCHMARK(BM_conv2d_3x3_64_b8_56)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_softmax_16384x768(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor x = ops::normal({16384, 768});
  for (auto _ : st) benchmark::DoNotOptimize(ops::softmax(x, -1));
}
BENCHMARK(BM_softmax_16384x768)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_layer_norm_16384x768(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor x = ops::normal({16384, 768}), g = ops::ones({768}), b = ops::zeros({768});
  for (auto _ : st) benchmark::DoNotOptimize(ops::layer_norm(x, {768}, g, b));
}
BENCHMARK(BM_layer_norm_16384x768)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// A fresh 16M-float output every iteration, steady state: the caching allocator hands back the
// same pages, so no page faults.
void BM_fresh_output_16M(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor x = ops::normal({16 << 20});
  for (auto _ : st) benchmark::DoNotOptimize(ops::relu(x));
}
BENCHMARK(BM_fresh_output_16M)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
