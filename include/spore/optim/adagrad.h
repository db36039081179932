// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "spore/optim/optimizer.h"

namespace spore::optim {

/// Adagrad with PyTorch's semantics: lr / (1 + (step - 1) * lr_decay), accumulator starting at
/// initial_accumulator_value.
struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0;
  double weight_decay = 0;
  double initial_accumulator_value = 0;
  double eps = 1e-10;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions o = {});
  Adagrad(std::vector<ParamGroup> groups, AdagradOptions defaults = {});

 protected:
  std::vector<std::string> slot_names(size_t group) const override;
  Tensor init_slot(const std::string& slot, const Tensor& param, size_t group) const override;
  void update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) override;
};

}  // namespace spore::optim
