// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/dense.h"

#include <cmath>

#include "nn/param_init.h"
#include "spore/ops.h"

namespace spore::nn {

Dense::Dense(int64_t in, int64_t out, bool with_bias) : UnaryCell("Dense"), in_features(in), out_features(out) {
  SPORE_CHECK(in > 0 && out > 0, "[Dense] in_features and out_features must be positive, got ", in, " and ", out);
  weight = init::empty({out, in});
  register_parameter("weight", &weight);
  if (with_bias) {
    bias = init::empty({out});
    register_parameter("bias", &bias);
  }
  reset_own();  // the constructor draws what reset_parameters() redraws, by the same code
}

void Dense::reset_own() {
  default_weight_(weight);
  if (bias.defined()) default_bias_(bias, in_features);
}

Tensor Dense::construct(const Tensor& x) {
  SPORE_CHECK(x.dim() >= 1 && x.size(-1) == in_features, "[Dense] input has shape ", shape_str(x.shape()),
              " but the cell takes ", in_features, " features on the last axis; reshape the input or fix in_features");
  const Tensor wt = weight.transpose(0, 1);
  if (x.dim() == 2 && bias.defined()) return ops::addmm(bias, x, wt);  // one fused GEMM
  Tensor y = ops::matmul(x, wt);
  return bias.defined() ? y + bias : y;
}

Flatten::Flatten(int64_t start_axis, int64_t end_axis) : UnaryCell("Flatten"), start_(start_axis), end_(end_axis) {}

Tensor Flatten::construct(const Tensor& x) { return ops::flatten(x, start_, end_); }

}  // namespace spore::nn
