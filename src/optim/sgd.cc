// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/sgd.h"

#include <cmath>

#include "spore/ops.h"

namespace spore::optim {
namespace {

std::map<std::string, double> sgd_defaults(const SGDOptions& o) {
  return {{"lr", o.lr},
          {"momentum", o.momentum},
          {"dampening", o.dampening},
          {"nesterov", o.nesterov ? 1.0 : 0.0},
          {"weight_decay", o.weight_decay}};
}

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions o) : SGD(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions defaults)
    : Optimizer("SGD", std::move(groups), sgd_defaults(defaults)) {
  check_range("momentum", 0, INFINITY);
  check_range("weight_decay", 0, INFINITY);
  for (size_t g = 0; g < num_groups(); ++g)
    SPORE_CHECK(option("nesterov", g) == 0 || (option("momentum", g) > 0 && option("dampening", g) == 0),
                "[SGD] nesterov in group ", g, " needs momentum > 0 and dampening = 0 (got momentum ",
                option("momentum", g), ", dampening ", option("dampening", g), ")");
  schedule_option("momentum", 0, INFINITY, /*keep_zero=*/true);
  init_state();
}

std::vector<std::string> SGD::slot_names(size_t group) const {
  // The step count tells the first update, where PyTorch starts the buffer as the gradient.
  if (built_option("momentum", group) != 0) return {"step", "momentum_buffer"};
  return {};
}

void SGD::update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) {
  const double wd = option("weight_decay", group);
  Tensor d_p = wd != 0 ? grad + param * wd : grad;
  if (built_option("momentum", group) != 0) {
    // A tensor: a schedule (OneCycleLR) may change it between compiled steps.
    const Tensor momentum = option_as(group, "momentum", param.dtype());
    Tensor& step = slots[0];
    Tensor& buf = slots[1];
    const double dampening = option("dampening", group);
    // PyTorch starts the buffer as the first gradient. The buffer starts at zero, so without
    // dampening momentum * 0 + d_p is that gradient already and the per-step select over the
    // whole tensor (a fifth of an MLP step) is not needed.
    const Tensor next = dampening == 0 ? buf * momentum + d_p
                                       : ops::where(ops::equal(step, ops::weak_scalar(0.0)), d_p,
                                                    buf * momentum + d_p * (1.0 - dampening));
    ops::copy_(buf, next);
    ops::copy_(step, step + 1.0);
    d_p = option("nesterov", group) != 0 ? d_p + next * momentum : next;
  }
  ops::copy_(param, param - lr_as(group, param.dtype()) * d_p);
}

}  // namespace spore::optim
