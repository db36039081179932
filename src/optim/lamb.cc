// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/lamb.h"

#include <cmath>

#include "optim/bias_correction.h"
#include "spore/ops.h"

namespace spore::optim {
namespace {

std::map<std::string, double> lamb_defaults(const LAMBOptions& o) {
  return {{"lr", o.lr}, {"beta1", o.betas.first}, {"beta2", o.betas.second}, {"eps", o.eps},
          {"weight_decay", o.weight_decay}};
}

}  // namespace

LAMB::LAMB(std::vector<Tensor> params, LAMBOptions o) : LAMB(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}

LAMB::LAMB(std::vector<ParamGroup> groups, LAMBOptions defaults)
    : Optimizer("LAMB", std::move(groups), lamb_defaults(defaults)) {
  schedule_option("beta1", 0, std::nextafter(1.0, 0.0));
  check_range("beta2", 0, std::nextafter(1.0, 0.0));
  check_range("eps", 0, INFINITY);
  check_range("weight_decay", 0, INFINITY);
  init_state();
}

std::vector<std::string> LAMB::slot_names(size_t) const { return {"step", "exp_avg", "exp_avg_sq"}; }

void LAMB::update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) {
  // beta1 as a tensor: a schedule (OneCycleLR) may change it between compiled steps.
  const Tensor b1 = option_as(group, "beta1", DType::Float64);
  const double b2 = option("beta2", group), wd = option("weight_decay", group);
  const DType dt = param.dtype();
  Tensor& step = slots[0];
  Tensor& exp_avg = slots[1];
  Tensor& exp_avg_sq = slots[2];
  ops::copy_(step, step + 1.0);
  ops::copy_(exp_avg, exp_avg * ops::cast(b1, dt) + grad * ops::cast(1.0 - b1, dt));
  ops::copy_(exp_avg_sq, exp_avg_sq * b2 + grad * grad * (1.0 - b2));
  const BiasCorrection bc = bias_correction(step, b1, b2);
  const Tensor m_hat = exp_avg / ops::cast(bc.first, dt);
  const Tensor v_hat = exp_avg_sq / ops::cast(bc.second, dt);
  Tensor u = m_hat / (ops::sqrt(v_hat) + option("eps", group));
  if (wd != 0) u = u + param * wd;
  // The trust ratio: a selection on tensors, not a C++ branch, so it also runs under jit.
  const Tensor w_norm = ops::norm(param), u_norm = ops::norm(u);
  const Tensor zero = ops::weak_scalar(0.0);
  const Tensor usable = ops::logical_and(ops::greater(w_norm, zero), ops::greater(u_norm, zero));
  const Tensor trust = ops::where(usable, w_norm / ops::where(usable, u_norm, ops::ones_like(u_norm)),
                                  ops::ones_like(w_norm));
  ops::copy_(param, param - (lr_as(group, dt) * trust) * u);
}

}  // namespace spore::optim
