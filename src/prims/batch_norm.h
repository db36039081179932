// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// Batch norm of x (N, C, *) per channel. Inputs: x, then weight, bias (C) and the running mean
/// and variance (C) when the flags say so. Training normalizes with the batch statistics;
/// inference with the running ones (then has_running must be set).
struct BatchNormAttrs {
  bool training = true;
  double eps = 1e-5;
  bool has_weight = false;
  bool has_bias = false;
  bool has_running = false;
  static constexpr auto fields() {
    return std::make_tuple(field("training", &BatchNormAttrs::training), field("eps", &BatchNormAttrs::eps),
                           field("has_weight", &BatchNormAttrs::has_weight),
                           field("has_bias", &BatchNormAttrs::has_bias),
                           field("has_running", &BatchNormAttrs::has_running));
  }
};

/// Outputs: y; the mean and biased variance used (C), in the statistics dtype. The primitive
/// is pure: the public op updates the running statistics from outputs 1 and 2.
const Primitive& batch_norm_primitive();

}  // namespace spore::prims
