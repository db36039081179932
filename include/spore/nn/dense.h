// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "spore/nn/cell.h"

namespace spore::nn {

/// y = x W^T + b over the last axis (PyTorch's Linear). weight (out, in) is drawn from
/// kaiming_uniform(a = sqrt(5)), bias from U(-1/sqrt(in), 1/sqrt(in)), as PyTorch does.
class Dense : public UnaryCell {
 public:
  Dense(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor construct(const Tensor& x) override;

  Tensor weight;
  Tensor bias;  // undefined when built with bias = false
  const int64_t in_features;
  const int64_t out_features;

 protected:
  void reset_own() override;
};

/// Flattens axes start..end into one (default: everything but the batch axis).
class Flatten : public UnaryCell {
 public:
  explicit Flatten(int64_t start_axis = 1, int64_t end_axis = -1);
  Tensor construct(const Tensor& x) override;

 private:
  int64_t start_, end_;
};

/// Returns its input (a placeholder in a SequentialCell).
class Identity : public UnaryCell {
 public:
  Identity() : UnaryCell("Identity") {}
  Tensor construct(const Tensor& x) override { return x; }
};

}  // namespace spore::nn
