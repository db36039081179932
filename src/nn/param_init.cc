// SPDX-License-Identifier: Apache-2.0
#include "nn/param_init.h"

#include <cmath>

namespace spore::nn {

Tensor default_weight(const Shape& shape) { return init::kaiming_uniform(shape, std::sqrt(5.0)); }

Tensor default_bias(const Shape& shape, int64_t fan_in) {
  if (fan_in <= 0) return init::zeros(shape);
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return init::uniform(shape, -bound, bound);
}

}  // namespace spore::nn
