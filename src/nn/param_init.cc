// SPDX-License-Identifier: Apache-2.0
#include "nn/param_init.h"

#include <cmath>

namespace spore::nn {

void default_weight_(Tensor& weight) { init::kaiming_uniform_(weight, std::sqrt(5.0)); }

void default_bias_(Tensor& bias, int64_t fan_in) {
  if (fan_in <= 0) return init::zeros_(bias);
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  init::uniform_(bias, -bound, bound);
}

}  // namespace spore::nn
