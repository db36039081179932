// SPDX-License-Identifier: Apache-2.0
// Rules of primitives whose derivative is zero by definition: stop_gradient, and random ops
// with tensor inputs (bernoulli's probabilities are not differentiated, as in PyTorch).
#include "autodiff/rules/util.h"

namespace spore::autodiff {
namespace {

void zero_jvp(const JvpArgs&, std::span<Tensor>) {}
void zero_vjp(const VjpArgs&, std::span<Tensor>) {}

}  // namespace

void install_misc_rules() {
  def_rules("stop_gradient", {}, zero_jvp, zero_vjp);
  def_rules("bernoulli", {}, zero_jvp, zero_vjp);
}

}  // namespace spore::autodiff
