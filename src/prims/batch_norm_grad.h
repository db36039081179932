// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// The backward of a training batch norm (MindSpore's BatchNormGrad) in one primitive.
/// Inputs: dy and x (N, C, *), the batch mean and biased variance batch_norm returned (C, in
/// the statistics dtype), then the weight (C) when has_weight. Outputs: dx (x's dtype and
/// shape), and the weight and bias gradients sum(dy * xhat) and sum(dy) (C, statistics dtype).
/// autodiff emits it for the usual case, a batch norm whose statistics outputs get no
/// cotangent; its kernel reads dy and x twice (per-channel sums, then dx) where the unfused
/// formula makes and reads several full-size temporaries.
struct BatchNormGradAttrs {
  double eps = 1e-5;
  bool has_weight = false;
  static constexpr auto fields() {
    return std::make_tuple(field("eps", &BatchNormGradAttrs::eps), field("has_weight", &BatchNormGradAttrs::has_weight));
  }
};

const Primitive& batch_norm_grad_primitive();

}  // namespace spore::prims
