// SPDX-License-Identifier: Apache-2.0
// The three examples of MindSpore's own introduction, in C++ (issue 3), plus a second
// derivative. Prints exactly five lines: 3, 12, 14, 7, 12.
#include <cstdio>

#include "spore/spore.h"

using namespace spore;

// A Cell-like network: construct() is its forward function (nn::Cell arrives with the training
// issue; this mirrors MindSpore's `class Net(nn.Cell)` example).
struct Net {
  Tensor construct(const Tensor& x, const Tensor& y) const { return x + y; }
  Tensor operator()(const Tensor& x, const Tensor& y) const { return construct(x, y); }
};

Tensor f(const Tensor& x) { return x * x * x + 2.0 * x; }

void print_value(const Tensor& t) { std::printf("%g\n", t.item<double>()); }

int main() {
  set_context(Mode::PyNative);
  Net net;
  print_value(net(ops::scalar_tensor(1, DType::Int32), ops::scalar_tensor(2, DType::Int32)));

  const Tensor x = ops::scalar_tensor(2.0, DType::Float32);
  print_value(f(x));
  print_value(grad(f)(x));

  auto add = jit([](const Tensor& a, const Tensor& b) { return a + b; });
  print_value(add(ops::scalar_tensor(3, DType::Int32), ops::scalar_tensor(4, DType::Int32)));

  print_value(grad(grad(f))(x));
  return 0;
}
