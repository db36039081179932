// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <utility>

#include "spore/optim/optimizer.h"

namespace spore::optim {

/// LAMB (You et al., "Large Batch Optimization for Deep Learning", Algorithm 2) with bias
/// correction: u = m_hat / (sqrt(v_hat) + eps) + weight_decay * p, then
/// p -= lr * r * u with the trust ratio r = ||p|| / ||u|| (1 when either norm is 0).
/// PyTorch has no LAMB; the oracle checks this formula written with torch ops.
struct LAMBOptions {
  double lr = 1e-3;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-6;
  double weight_decay = 0;
};

class LAMB : public Optimizer {
 public:
  LAMB(std::vector<Tensor> params, LAMBOptions o = {});
  LAMB(std::vector<ParamGroup> groups, LAMBOptions defaults = {});

 protected:
  std::vector<std::string> slot_names(size_t group) const override;
  void update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) override;
};

}  // namespace spore::optim
