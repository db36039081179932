// SPDX-License-Identifier: Apache-2.0
// The autodiff figures of `make bench` (issue 3), side by side with bench/torch_autodiff_bench.py:
// PyNative training step of an MLP, a Hessian-vector product, per-example gradients, and the
// per-op overhead of the tape (a chain of tiny ops, one LSTM step). Every benchmark takes the
// thread count as its last argument; PyTorch runs each figure with the same count.
#include <benchmark/benchmark.h>

#include <spore/spore.h>
#include <spore/vmap.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace {
using namespace spore;

void threads(benchmark::State& st, int64_t n) {
  set_num_threads(static_cast<int>(n));
  st.counters["threads"] = static_cast<double>(n);
}

// An MLP's parameters as a dict tree: w{i} is (in, out) so a layer is addmm(b, x, w), the same
// GEMM and bias add as PyTorch's nn.Linear (which stores (out, in) and multiplies by w^T).
TensorTree mlp_params(const std::vector<int64_t>& sizes) {
  std::vector<TensorTree::Item> items;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(sizes[i]));
    const char digit = static_cast<char>('0' + i);  // fewer than 10 layers
    items.emplace_back(std::string{'w', digit}, ops::uniform({sizes[i], sizes[i + 1]}, -scale, scale));
    items.emplace_back(std::string{'b', digit}, ops::uniform({sizes[i + 1]}, -scale, scale));
  }
  return TensorTree::dict(std::move(items));
}

// Logits of x (N, in) or (in): relu between layers, none after the last.
Tensor mlp_forward(const TensorTree& p, Tensor h) {
  const size_t layers = p.size() / 2;
  for (size_t i = 0; i < layers; ++i) {
    const Tensor& w = p[2 * i].tensor();
    const Tensor& b = p[2 * i + 1].tensor();
    h = h.dim() == 1 ? ops::matmul(h, w) + b : ops::addmm(b, h, w);
    if (i + 1 < layers) h = ops::relu(h);
  }
  return h;
}

Tensor mlp_loss(const TensorTree& p, const Tensor& x, const Tensor& y) {
  return ops::cross_entropy(mlp_forward(p, x), y);
}

// 1. One training step's forward and backward: loss and gradients of every parameter.
void BM_ad_mlp_value_and_grad(benchmark::State& st) {
  threads(st, st.range(0));
  TensorTree p = mlp_params({784, 512, 256, 10});
  Tensor x = ops::normal({128, 784}), y = ops::randint(0, 10, {128});
  auto step = value_and_grad(mlp_loss, 0);
  for (auto _ : st) benchmark::DoNotOptimize(step(p, x, y));
}
BENCHMARK(BM_ad_mlp_value_and_grad)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// 2. H·v of the same loss with respect to all parameters (v a tree like them), by
// forward-over-reverse: jvp of grad. PyTorch's autograd.functional.hvp is reverse-over-reverse.
void BM_ad_mlp_hvp_params(benchmark::State& st) {
  threads(st, st.range(0));
  TensorTree p = mlp_params({784, 512, 256, 10});
  std::vector<Tensor> vl;
  for (const Tensor& l : p.leaves()) vl.push_back(ops::normal(l.shape()));
  TensorTree v = p.with_leaves(vl);
  Tensor x = ops::normal({128, 784}), y = ops::randint(0, 10, {128});
  auto g = grad([&](const TensorTree& q) { return mlp_loss(q, x, y); });
  for (auto _ : st) benchmark::DoNotOptimize(jvp(g, p, v).second);
}
BENCHMARK(BM_ad_mlp_hvp_params)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

// 3. Per-example gradients of a small MLP (64-32-10, relu), batch 64: vmap of grad over the
// examples, the parameters shared (not batched). PyTorch loops over the 64 examples.
void BM_ad_per_example_grad_vmap(benchmark::State& st) {
  threads(st, st.range(0));
  TensorTree p = mlp_params({64, 32, 10});
  Tensor x = ops::normal({64, 64}), y = ops::randint(0, 10, {64});
  auto one = [](const TensorTree& q, const Tensor& xi, const Tensor& yi) {
    return ops::cross_entropy(mlp_forward(q, xi), yi);
  };
  auto per_example = vmap(grad(one), {-1, 0, 0});  // parameters shared, examples along axis 0
  for (auto _ : st) benchmark::DoNotOptimize(per_example(p, x, y));
}
BENCHMARK(BM_ad_per_example_grad_vmap)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The PyTorch loop's shape in Spore (no vmap): 64 separate grad calls, for reference.
void BM_ad_per_example_grad_loop(benchmark::State& st) {
  threads(st, st.range(0));
  TensorTree p = mlp_params({64, 32, 10});
  Tensor x = ops::normal({64, 64}), y = ops::randint(0, 10, {64});
  std::vector<Tensor> xs, ys;
  for (int64_t i = 0; i < 64; ++i) {
    xs.push_back(x.slice(0, i, i + 1));
    ys.push_back(y.slice(0, i, i + 1));
  }
  auto g = grad(mlp_loss, 0);
  for (auto _ : st)
    for (size_t i = 0; i < xs.size(); ++i) benchmark::DoNotOptimize(g(p, xs[i], ys[i]));
}
BENCHMARK(BM_ad_per_example_grad_loop)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// 4a. Tape overhead: 100 tiny ops (mul, add, sin in turn) on 8 floats, summed, under
// value_and_grad: ~100 recorded nodes and ~200 backward ops for 8 floats of work.
Tensor tiny_chain(const Tensor& x) {
  Tensor h = x;
  for (int i = 0; i < 100; ++i) {
    if (i % 3 == 0) h = h * 0.9;
    else if (i % 3 == 1) h = h + 0.1;
    else h = ops::sin(h);
  }
  return ops::sum(h);
}
void BM_ad_tiny_chain_100(benchmark::State& st) {
  threads(st, st.range(0));
  Tensor x = ops::normal({8});
  auto step = value_and_grad(tiny_chain, 0);
  for (auto _ : st) benchmark::DoNotOptimize(step(x));
}
BENCHMARK(BM_ad_tiny_chain_100)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// 4b. One LSTM cell step (input 256, hidden 256, batch 32) and its backward to every input
// and weight: gates = x·Wx + h·Wh + b, then sigmoid/tanh gates and the c, h updates.
Tensor lstm_loss(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& wx, const Tensor& wh,
                 const Tensor& b) {
  Tensor gates = ops::addmm(b, x, wx) + ops::matmul(h, wh);
  auto g = ops::chunk(gates, 4, 1);
  Tensor i = ops::sigmoid(g[0]), f = ops::sigmoid(g[1]), u = ops::tanh(g[2]), o = ops::sigmoid(g[3]);
  Tensor c2 = f * c + i * u;
  Tensor h2 = o * ops::tanh(c2);
  return ops::sum(h2) + ops::sum(c2);
}
void BM_ad_lstm_step(benchmark::State& st) {
  threads(st, st.range(0));
  const int64_t n = 32, d = 256, hd = 256;
  Tensor x = ops::normal({n, d}), h = ops::normal({n, hd}), c = ops::normal({n, hd});
  Tensor wx = ops::normal({d, 4 * hd}) * 0.05, wh = ops::normal({hd, 4 * hd}) * 0.05, b = ops::zeros({4 * hd});
  auto step = value_and_grad(lstm_loss, {0, 1, 2, 3, 4, 5});
  for (auto _ : st) benchmark::DoNotOptimize(step(x, h, c, wx, wh, b));
}
BENCHMARK(BM_ad_lstm_step)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();


// 5. Reverse mode through a 256-trip while_loop (x <- tanh(x w) + 0.1 x, x 128x256, w 256x256),
// compiled, gradient of w: every trip's residuals kept (checkpoint_every 0) against checkpoints
// every k-th trip. Spore only (PyTorch has no loop node to checkpoint); `peak_mib` is the
// allocator's peak during one gradient, the time is per gradient.
Tensor while_recur(const Tensor& x0, const Tensor& w, const Tensor& n, int64_t every) {
  auto r = while_loop([&](const TensorTree& c) -> Tensor { return c[1].tensor() < n; },
                      [&](const TensorTree& c) {
                        const Tensor x = c[0].tensor();
                        return TensorTree(std::vector<TensorTree>{TensorTree(ops::tanh(ops::matmul(x, w)) + x * 0.1),
                                                                  TensorTree(c[1].tensor() + 1.0)});
                      },
                      TensorTree(std::vector<TensorTree>{TensorTree(x0), TensorTree(ops::zeros_like(n))}),
                      WhileOptions{every});
  return ops::sum(r[0].tensor() * r[0].tensor());
}
void BM_ad_while_grad_checkpoint(benchmark::State& st) {
  threads(st, st.range(1));
  const int64_t every = st.range(0);
  manual_seed(6);
  const Tensor x0 = ops::normal({128, 256}), w = ops::normal({256, 256}, 0, 0.1), n = ops::scalar_tensor(256.0);
  auto f = [every](const Tensor& x, const Tensor& wv, const Tensor& nv) { return while_recur(x, wv, nv, every); };
  auto g = jit([&](const Tensor& x, const Tensor& wv, const Tensor& nv) { return grad(f, {1})(x, wv, nv); });
  benchmark::DoNotOptimize(g(x0, w, n));
  const size_t base = memory_stats().bytes_in_use;
  reset_peak_memory_stats();
  for (auto _ : st) benchmark::DoNotOptimize(g(x0, w, n));
  st.counters["peak_mib"] = static_cast<double>(memory_stats().peak_bytes_in_use - base) / (1 << 20);
  st.counters["checkpoint_every"] = static_cast<double>(every);
}
BENCHMARK(BM_ad_while_grad_checkpoint)
    ->Args({0, 2})->Args({4, 2})->Args({16, 2})->Args({64, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
