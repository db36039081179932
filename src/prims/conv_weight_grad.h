// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "prims/conv.h"

namespace spore::prims {

/// The weight gradient of "conv" (MindSpore's Conv2DBackpropFilter, over 1-3 spatial dims):
/// dW[o, c, k] = sum over n and output positions q of dy[n, o, q] * x[n, g(o) * Cg + c,
/// q * stride + k * dilation - pad_l]. Inputs: x (N, C, *S) and dy (N, O, *Q), the conv's input
/// and its output's cotangent; output (O, C / groups, *K) in x's dtype, K = `kernel`. The conv
/// attributes are those of the conv it differentiates. One node, so the oneDNN kernel runs
/// backward-weights on x and dy directly (reordered to its blocked layout), padding included,
/// where the rewrite as a conv over swapped dims needed a padded copy of x and views.
struct ConvWeightGradAttrs {
  IntList stride, pad_l, pad_r, dilation, kernel;
  int64_t groups = 1;
  static constexpr auto fields() {
    return std::make_tuple(field("stride", &ConvWeightGradAttrs::stride), field("pad_l", &ConvWeightGradAttrs::pad_l),
                           field("pad_r", &ConvWeightGradAttrs::pad_r), field("dilation", &ConvWeightGradAttrs::dilation),
                           field("kernel", &ConvWeightGradAttrs::kernel), field("groups", &ConvWeightGradAttrs::groups));
  }
  ConvAttrs conv() const { return {stride, pad_l, pad_r, dilation, groups}; }
};

const Primitive& conv_weight_grad_primitive();

/// Plain C++ kernel (any float dtype and strides; 16-bit floats accumulate in float32).
void conv_weight_grad_reference(const ConvWeightGradAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out);

}  // namespace spore::prims
