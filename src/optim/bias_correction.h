// SPDX-License-Identifier: Apache-2.0
#pragma once
// Adam-style bias corrections 1 - beta^step as 0-d float64 tensors of the step-count tensor,
// so a compiled step computes them from the current count (PyTorch computes them in double).
#include <utility>

#include "spore/ops.h"

namespace spore::optim {

/// {1 - beta1^step, 1 - beta2^step}, float64.
using BiasCorrection = std::pair<Tensor, Tensor>;

/// `beta1` is a 0-d float64 tensor (a scheduled option: OneCycleLR cycles it), as PyTorch
/// corrects with the current beta1.
inline BiasCorrection bias_correction(const Tensor& step, const Tensor& beta1, double beta2) {
  const Tensor t = ops::cast(step, DType::Float64);
  return {1.0 - ops::pow(beta1, t), 1.0 - ops::pow(ops::scalar_tensor(beta2, DType::Float64), t)};
}

}  // namespace spore::optim
