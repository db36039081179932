// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "core/primitive.h"

namespace spore::prims {

/// How a loss combines its per-element values (the order of spore::ops::Reduction).
enum class LossReduction : uint8_t { None = 0, Mean = 1, Sum = 2 };

/// Negative log likelihood against class indices. Inputs: log-probabilities (N, C, d...) or (C),
/// int64 targets (N, d...) or (), then a class weight (C) when has_weight. With
/// label_smoothing > 0 it is PyTorch's smoothed cross-entropy term on top (cross_entropy).
struct NllLossAttrs {
  int64_t ignore_index = -100;
  LossReduction reduction = LossReduction::Mean;
  double label_smoothing = 0.0;
  bool has_weight = false;
  /// Set by cross_entropy so a bad target is reported as "[cross_entropy]", the op called.
  bool cross_entropy = false;
  static constexpr auto fields() {
    return std::make_tuple(field("ignore_index", &NllLossAttrs::ignore_index),
                           field("reduction", &NllLossAttrs::reduction),
                           field("label_smoothing", &NllLossAttrs::label_smoothing),
                           field("has_weight", &NllLossAttrs::has_weight),
                           field("cross_entropy", &NllLossAttrs::cross_entropy));
  }
};

/// Output: per-element losses shaped like the target (None) or a 0-d tensor; lp's dtype.
/// A target outside [0, C) other than ignore_index is an error naming it.
const Primitive& nll_loss_primitive();

/// Cross-entropy of log-probabilities against class probabilities of the same shape
/// (PyTorch's soft-label cross_entropy, label smoothing applied to the target).
struct SoftNllLossAttrs {
  LossReduction reduction = LossReduction::Mean;
  double label_smoothing = 0.0;
  bool has_weight = false;
  static constexpr auto fields() {
    return std::make_tuple(field("reduction", &SoftNllLossAttrs::reduction),
                           field("label_smoothing", &SoftNllLossAttrs::label_smoothing),
                           field("has_weight", &SoftNllLossAttrs::has_weight));
  }
};

/// Inputs: log-probabilities, target probabilities (same shape and dtype), weight (C) if flagged.
const Primitive& soft_nll_loss_primitive();

}  // namespace spore::prims
