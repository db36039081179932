// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/adam.h"

#include <cmath>

#include "optim/bias_correction.h"
#include "spore/ops.h"

namespace spore::optim {
namespace {

std::map<std::string, double> adam_defaults(const AdamOptions& o) {
  return {{"lr", o.lr},
          {"beta1", o.betas.first},
          {"beta2", o.betas.second},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay},
          {"amsgrad", o.amsgrad ? 1.0 : 0.0}};
}

AdamOptions from_adamw(const AdamWOptions& o) { return {o.lr, o.betas, o.eps, o.weight_decay, o.amsgrad}; }

}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions o) : Adam(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions defaults) : Adam("Adam", std::move(groups), defaults, false) {}

Adam::Adam(std::string name, std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled)
    : Optimizer(std::move(name), std::move(groups), adam_defaults(defaults)), decoupled_(decoupled) {
  schedule_option("beta1", 0, std::nextafter(1.0, 0.0));
  check_range("beta2", 0, std::nextafter(1.0, 0.0));
  check_range("eps", 0, INFINITY);
  check_range("weight_decay", 0, INFINITY);
  init_state();
}

std::vector<std::string> Adam::slot_names(size_t group) const {
  if (option("amsgrad", group) != 0) return {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"step", "exp_avg", "exp_avg_sq"};
}

void Adam::update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) {
  // beta1 as a tensor: a schedule (OneCycleLR) may change it between compiled steps.
  const Tensor b1 = option_as(group, "beta1", DType::Float64);
  const double b2 = option("beta2", group), wd = option("weight_decay", group);
  const DType dt = param.dtype();
  const Tensor lr = lr_as(group, DType::Float64);
  Tensor& step = slots[0];
  Tensor& exp_avg = slots[1];
  Tensor& exp_avg_sq = slots[2];
  ops::copy_(step, step + 1.0);
  Tensor g = grad;
  if (decoupled_) {
    ops::copy_(param, param * ops::cast(1.0 - lr * wd, dt));
  } else if (wd != 0) {
    g = grad + param * wd;
  }
  ops::copy_(exp_avg, exp_avg * ops::cast(b1, dt) + g * ops::cast(1.0 - b1, dt));
  ops::copy_(exp_avg_sq, exp_avg_sq * b2 + g * g * (1.0 - b2));
  const BiasCorrection bc = bias_correction(step, b1, b2);
  const Tensor step_size = ops::cast(lr / bc.first, dt);
  Tensor v = exp_avg_sq;
  if (option("amsgrad", group) != 0) {
    ops::copy_(slots[3], ops::maximum(slots[3], exp_avg_sq));
    v = slots[3];
  }
  const Tensor denom = ops::sqrt(v) / ops::cast(ops::sqrt(bc.second), dt) + option("eps", group);
  ops::copy_(param, param - step_size * (exp_avg / denom));
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions o)
    : AdamW(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions defaults)
    : Adam("AdamW", std::move(groups), from_adamw(defaults), true) {}

}  // namespace spore::optim
