// SPDX-License-Identifier: Apache-2.0
#pragma once
// PyTorch's default initialization of Dense and convolution parameters, shared by their cells.
#include "spore/nn/init.h"

namespace spore::nn {

/// kaiming_uniform(a = sqrt(5)) by fan_in, i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
Tensor default_weight(const Shape& shape);
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)); zeros when fan_in is 0.
Tensor default_bias(const Shape& shape, int64_t fan_in);

}  // namespace spore::nn
