// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/dropout.h"

#include "spore/ops.h"

namespace spore::nn {

Dropout::Dropout(double p) : UnaryCell("Dropout"), p_(p) {
  SPORE_CHECK(p >= 0 && p <= 1, "[Dropout] p must be in [0, 1], got ", p);
}

Tensor Dropout::construct(const Tensor& x) {
  if (!is_training() || p_ == 0) return x;
  return ops::dropout(x, p_, true);
}

}  // namespace spore::nn
