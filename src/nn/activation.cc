// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/activation.h"

#include "spore/ops.h"

namespace spore::nn {

Tensor ReLU::construct(const Tensor& x) { return ops::relu(x); }
Tensor ReLU6::construct(const Tensor& x) { return ops::relu6(x); }
Tensor Sigmoid::construct(const Tensor& x) { return ops::sigmoid(x); }
Tensor Tanh::construct(const Tensor& x) { return ops::tanh(x); }
Tensor SiLU::construct(const Tensor& x) { return ops::silu(x); }
Tensor Mish::construct(const Tensor& x) { return ops::mish(x); }
Tensor SELU::construct(const Tensor& x) { return ops::selu(x); }
Tensor Hardswish::construct(const Tensor& x) { return ops::hardswish(x); }
Tensor Hardsigmoid::construct(const Tensor& x) { return ops::hardsigmoid(x); }
Tensor GELU::construct(const Tensor& x) { return ops::gelu(x, approximate_); }
Tensor LeakyReLU::construct(const Tensor& x) { return ops::leaky_relu(x, slope_); }
Tensor ELU::construct(const Tensor& x) { return ops::elu(x, alpha_); }
Tensor Softplus::construct(const Tensor& x) { return ops::softplus(x, beta_, threshold_); }
Tensor Softmax::construct(const Tensor& x) { return ops::softmax(x, axis_); }
Tensor LogSoftmax::construct(const Tensor& x) { return ops::log_softmax(x, axis_); }

}  // namespace spore::nn
