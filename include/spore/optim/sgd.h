// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "spore/optim/optimizer.h"

namespace spore::optim {

/// Stochastic gradient descent with PyTorch's semantics: weight decay added to the gradient,
/// a momentum buffer that starts as the first gradient, dampening, Nesterov momentum.
struct SGDOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  bool nesterov = false;
  double weight_decay = 0;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions o = {});
  SGD(std::vector<ParamGroup> groups, SGDOptions defaults = {});

 protected:
  std::vector<std::string> slot_names(size_t group) const override;
  void update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) override;
};

}  // namespace spore::optim
