// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/rmsprop.h"

#include <cmath>

#include "spore/ops.h"

namespace spore::optim {
namespace {

std::map<std::string, double> rmsprop_defaults(const RMSPropOptions& o) {
  return {{"lr", o.lr},
          {"alpha", o.alpha},
          {"eps", o.eps},
          {"weight_decay", o.weight_decay},
          {"momentum", o.momentum},
          {"centered", o.centered ? 1.0 : 0.0}};
}

}  // namespace

RMSProp::RMSProp(std::vector<Tensor> params, RMSPropOptions o)
    : RMSProp(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}

RMSProp::RMSProp(std::vector<ParamGroup> groups, RMSPropOptions defaults)
    : Optimizer("RMSProp", std::move(groups), rmsprop_defaults(defaults)) {
  check_range("alpha", 0, 1);
  check_range("eps", 0, INFINITY);
  check_range("weight_decay", 0, INFINITY);
  schedule_option("momentum", 0, INFINITY, /*keep_zero=*/true);
  init_state();
}

std::vector<std::string> RMSProp::slot_names(size_t group) const {
  std::vector<std::string> s{"step", "square_avg"};
  if (built_option("momentum", group) > 0) s.push_back("momentum_buffer");
  if (option("centered", group) != 0) s.push_back("grad_avg");
  return s;
}

void RMSProp::update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) {
  const double alpha = option("alpha", group), wd = option("weight_decay", group);
  ops::copy_(slots[0], slots[0] + 1.0);
  const Tensor g = wd != 0 ? grad + param * wd : grad;
  Tensor& square_avg = slots[1];
  ops::copy_(square_avg, square_avg * alpha + g * g * (1.0 - alpha));
  Tensor avg;
  if (option("centered", group) != 0) {
    Tensor& grad_avg = slots.back();
    ops::copy_(grad_avg, grad_avg * alpha + g * (1.0 - alpha));
    avg = ops::sqrt(square_avg - grad_avg * grad_avg);
  } else {
    avg = ops::sqrt(square_avg);
  }
  avg = avg + option("eps", group);
  const Tensor lr = lr_as(group, param.dtype());
  if (built_option("momentum", group) > 0) {
    Tensor& buf = slots[2];
    ops::copy_(buf, buf * option_as(group, "momentum", param.dtype()) + g / avg);
    ops::copy_(param, param - lr * buf);
  } else {
    ops::copy_(param, param - lr * (g / avg));
  }
}

}  // namespace spore::optim
