// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <utility>

#include "spore/optim/optimizer.h"

namespace spore::optim {

/// Adam (Kingma & Ba) with PyTorch's semantics: bias-corrected moments, L2 weight decay added
/// to the gradient, optional AMSGrad. Per-group override names: lr, beta1, beta2, eps,
/// weight_decay, amsgrad.
struct AdamOptions {
  double lr = 1e-3;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions o = {});
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults = {});

 protected:
  Adam(std::string name, std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled);
  std::vector<std::string> slot_names(size_t group) const override;
  void update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) override;

 private:
  bool decoupled_ = false;
};

/// AdamW (Loshchilov & Hutter): Adam with decoupled weight decay, param *= 1 - lr * wd before
/// the Adam update (PyTorch's AdamW; its default weight_decay is 0.01).
struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions o = {});
  AdamW(std::vector<ParamGroup> groups, AdamWOptions defaults = {});
};

}  // namespace spore::optim
