// SPDX-License-Identifier: Apache-2.0
// `make demo` (until the training issue lands): a tour of eager Spore ops printing real results.
#include <cstdio>
#include <iostream>

#include <spore/spore.h>

using namespace spore;

namespace {
void section(const char* title) { std::printf("\n== %s ==\n", title); }
}  // namespace

int main() {
  manual_seed(0);
  std::printf("Spore op tour (PyNative mode): %d threads\n", num_threads());

  section("tensors, dtypes and promotion");
  Tensor a = ops::tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  std::cout << "a = " << a << "\n";
  std::cout << "a * 2 + 0.5 = " << (a * 2 + 0.5) << "\n";
  std::cout << "arange(6) (int64) + 1.5 -> " << (ops::arange(6) + 1.5) << "\n";
  std::cout << "float16 stays float16 with a weak literal: " << (a.to(DType::Float16) * 3).str() << "\n";

  section("views share storage");
  Tensor t = a.transpose(0, 1);
  std::cout << "a.T = " << t << "  contiguous: " << (t.is_contiguous() ? "yes" : "no") << "\n";
  std::cout << "a[:, ::2] = " << a.slice(1, 0, 3, 2) << "\n";
  std::cout << "broadcast (3,1) + (3,) = " << (ops::arange(3).reshape({3, 1}) + ops::arange(3)) << "\n";

  section("reductions");
  std::cout << "sum(a, axis 1) = " << ops::sum(a, {1}) << "\n";
  std::cout << "mean(a) = " << ops::mean(a) << ", std(a) = " << ops::std(a) << "\n";
  std::cout << "argmax(a, axis 1) = " << ops::argmax(a, 1) << "\n";
  std::cout << "logsumexp(a, axis 1) = " << ops::logsumexp(a, {1}) << "\n";

  section("linear algebra (oneDNN)");
  Tensor w = ops::normal({3, 4});
  std::cout << "a @ w = " << ops::matmul(a, w) << "\n";
  std::cout << "einsum('ij,jk->ik') equals matmul: "
            << ops::all(ops::less(ops::abs(ops::einsum("ij,jk->ik", {a, w}) - ops::matmul(a, w)), ops::full({}, 1e-5)))
            << "\n";

  section("neural-network kernels");
  Tensor x = ops::normal({2, 3, 8, 8});
  Tensor k = ops::normal({4, 3, 3, 3}) * 0.1;
  ops::ConvOptions co;
  co.padding = {1};
  Tensor y = ops::conv2d(x, k, {}, co);
  std::cout << "conv2d (2,3,8,8) * (4,3,3,3) -> " << shape_str(y.shape()) << "\n";
  ops::PoolOptions po;
  po.kernel = {2, 2};
  std::cout << "max_pool2d -> " << shape_str(ops::max_pool2d(y, po).shape()) << "\n";
  std::cout << "softmax([1, 2, 3]) = " << ops::softmax(ops::tensor({1.f, 2.f, 3.f})) << "\n";
  std::cout << "layer_norm(a) = " << ops::layer_norm(a, {3}) << "\n";
  Tensor logits = ops::normal({4, 5});
  Tensor target = ops::tensor({0, 3, 1, 4});
  std::cout << "cross_entropy = " << ops::cross_entropy(logits, target) << "\n";

  section("random (Philox, explicit keys: the same numbers at any thread count)");
  manual_seed(42);
  std::cout << "uniform(4) = " << ops::uniform({4}) << "\n";
  std::cout << "normal(4) = " << ops::normal({4}) << "\n";
  std::cout << "randint(0, 10, 6) = " << ops::randint(0, 10, {6}) << "\n";
  std::cout << "permutation(6) = " << ops::permutation(6) << "\n";

  section("errors name the op, the shapes and the fix");
  try {
    ops::matmul(ops::zeros({32, 64}), ops::zeros({65, 10}));
  } catch (const Error& e) {
    std::cout << e.what() << "\n";
  }

  section("memory");
  MemoryStats m = memory_stats();
  std::printf("in use %zu bytes, peak %zu, cached %zu, system allocations %llu\n", m.bytes_in_use,
              m.peak_bytes_in_use, m.bytes_cached, static_cast<unsigned long long>(m.system_allocations));
  return 0;
}
