// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "spore/optim/optimizer.h"

namespace spore::optim {

/// RMSProp with PyTorch's semantics (eps added outside the square root; optional momentum and
/// centered variance).
struct RMSPropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;
};

class RMSProp : public Optimizer {
 public:
  RMSProp(std::vector<Tensor> params, RMSPropOptions o = {});
  RMSProp(std::vector<ParamGroup> groups, RMSPropOptions defaults = {});

 protected:
  std::vector<std::string> slot_names(size_t group) const override;
  void update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) override;
};

}  // namespace spore::optim
