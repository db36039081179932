// SPDX-License-Identifier: Apache-2.0
// Gradient-check cases of the primitives whose derivative is zero by definition. Finite
// differences see stop_gradient as the identity, so these check only that jvp and vjp agree
// (order 0) and that the tape records them.
#include "autodiff/grad_cases.h"

namespace spore::gradcheck {
namespace {

using namespace ops;


}  // namespace

SPORE_GRAD_CASES(misc) {
  {
    GradCase c;
    c.name = "stop_gradient/mixed";
    c.prims = {"stop_gradient"};
    c.fn = [](const std::vector<Tensor>& x) { return x[0] * stop_gradient(x[0]) + x[0]; };
    c.inputs = {R({2, 3}, 501)};
    c.order = 0;
    cases.push_back(c);
  }
  {
    GradCase c;
    c.name = "bernoulli/probabilities";
    c.prims = {"bernoulli"};
    // Seeded inside, so every evaluation draws the same mask.
    c.fn = [](const std::vector<Tensor>& x) {
      manual_seed(3);
      return bernoulli(x[0]) * x[0];
    };
    c.inputs = {R({4, 5}, 502, oracle::Fill::Unit) * 0.4 + 0.5};
    c.order = 0;
    cases.push_back(c);
  }
}

}  // namespace spore::gradcheck
