// SPDX-License-Identifier: Apache-2.0
#pragma once
// PyTorch's default initialization of Dense and convolution parameters, shared by their cells'
// constructors and reset_parameters(): in place, so both run the same draws.
#include "spore/nn/init.h"

namespace spore::nn {

/// kaiming_uniform(a = sqrt(5)) by fan_in, i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
void default_weight_(Tensor& weight);
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)); zeros when fan_in is 0.
void default_bias_(Tensor& bias, int64_t fan_in);

}  // namespace spore::nn
