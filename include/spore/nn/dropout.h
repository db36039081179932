// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "spore/nn/cell.h"

namespace spore::nn {

/// Zeroes each element with probability p and scales the rest by 1/(1-p) while training;
/// the identity in eval mode.
class Dropout : public UnaryCell {
 public:
  explicit Dropout(double p = 0.5);
  Tensor construct(const Tensor& x) override;
  double p() const { return p_; }

 private:
  double p_;
};

}  // namespace spore::nn
