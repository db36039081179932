// SPDX-License-Identifier: Apache-2.0
// Gradient-check cases of the elementwise primitives.
#include "autodiff/grad_cases.h"

namespace spore::gradcheck {
namespace {

using namespace ops;
using oracle::Fill;

Tensor R(const Shape& s, uint64_t seed, Fill fill = Fill::Normal) {
  return oracle::rand_tensor(s, DType::Float64, seed, fill);
}

}  // namespace

SPORE_GRAD_CASES(elementwise) {
  cases.push_back({"mul/broadcast", {"mul"}, [](const std::vector<Tensor>& x) { return x[0] * x[1]; },
                   {R({2, 3}, 1), R({3}, 2)}, {}, 2, 1e-6, "mul", {}, 0});
  cases.push_back({"exp/basic", {"exp"}, [](const std::vector<Tensor>& x) { return exp(x[0]); },
                   {R({2, 3}, 3)}, {}, 2, 1e-6, "exp", {}, 0});
}

}  // namespace spore::gradcheck
