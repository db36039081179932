// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/adagrad.h"

#include <cmath>

#include "spore/ops.h"

namespace spore::optim {
namespace {

std::map<std::string, double> adagrad_defaults(const AdagradOptions& o) {
  return {{"lr", o.lr},
          {"lr_decay", o.lr_decay},
          {"weight_decay", o.weight_decay},
          {"initial_accumulator_value", o.initial_accumulator_value},
          {"eps", o.eps}};
}

}  // namespace

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions o)
    : Adagrad(std::vector<ParamGroup>{{std::move(params), {}}}, o) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, AdagradOptions defaults)
    : Optimizer("Adagrad", std::move(groups), adagrad_defaults(defaults)) {
  check_range("lr_decay", 0, INFINITY);
  check_range("weight_decay", 0, INFINITY);
  check_range("initial_accumulator_value", 0, INFINITY);
  check_range("eps", 0, INFINITY);
  init_state();
}

std::vector<std::string> Adagrad::slot_names(size_t) const { return {"step", "sum"}; }

Tensor Adagrad::init_slot(const std::string& slot, const Tensor& param, size_t group) const {
  if (slot == "sum")
    return ops::full(param.shape(), option("initial_accumulator_value", group), {param.dtype(), param.device()});
  return Optimizer::init_slot(slot, param, group);
}

void Adagrad::update(size_t group, Tensor& param, const Tensor& grad, std::vector<Tensor>& slots) {
  const double wd = option("weight_decay", group);
  Tensor& step = slots[0];
  Tensor& sum = slots[1];
  ops::copy_(step, step + 1.0);
  const Tensor g = wd != 0 ? grad + param * wd : grad;
  // lr / (1 + (step - 1) * lr_decay), in float64 as PyTorch's Python arithmetic.
  const Tensor t = ops::cast(step, DType::Float64);
  const Tensor clr = lr_as(group, DType::Float64) / (1.0 + (t - 1.0) * option("lr_decay", group));
  ops::copy_(sum, sum + g * g);
  const Tensor std = ops::sqrt(sum) + option("eps", group);
  ops::copy_(param, param - ops::cast(clr, param.dtype()) * (g / std));
}

}  // namespace spore::optim
