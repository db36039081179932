// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/optimizer.h"

#include <cmath>
#include <set>

#include "spore/ops.h"

namespace spore::optim {
namespace {

std::string known_names(const std::map<std::string, double>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

Optimizer::~Optimizer() = default;

Optimizer::Optimizer(std::string name, std::vector<ParamGroup> groups, std::map<std::string, double> defaults)
    : name_(std::move(name)) {
  SPORE_CHECK(!groups.empty(), "[", name_, "] no parameter groups; pass the parameters to optimize");
  std::set<const Storage*> seen;
  for (size_t g = 0; g < groups.size(); ++g) {
    Group grp;
    grp.options = defaults;
    for (const auto& [k, v] : groups[g].options) {
      SPORE_CHECK(defaults.count(k), "[", name_, "] parameter group ", g, " sets unknown option '", k, "'; ", name_,
                  "'s options are: ", known_names(defaults));
      grp.options[k] = v;
    }
    for (size_t i = 0; i < groups[g].params.size(); ++i) {
      const Tensor& p = groups[g].params[i];
      SPORE_CHECK(p.defined(), "[", name_, "] parameter ", i, " of group ", g, " is an undefined tensor");
      SPORE_CHECK(is_floating(p.dtype()), "[", name_, "] parameter ", i, " of group ", g, " is ",
                  dtype_name(p.dtype()), "; only floating-point parameters can be optimized");
      SPORE_CHECK(seen.insert(p.storage().get()).second, "[", name_, "] parameter ", i, " of group ", g,
                  " shares its storage with an earlier parameter; pass each parameter once");
    }
    grp.params = groups[g].params;
    num_params_ += grp.params.size();
    grp.lr_value = grp.options.at("lr");
    grp.lr = ops::scalar_tensor(grp.lr_value, DType::Float32);
    groups_.push_back(std::move(grp));
  }
  check_range("lr", 0, INFINITY);
}

void Optimizer::init_state() {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const auto names = slot_names(g);
    groups_[g].slots.clear();
    for (const Tensor& p : groups_[g].params) {
      std::vector<Tensor> s;
      for (const auto& n : names) s.push_back(init_slot(n, p, g));
      groups_[g].slots.push_back(std::move(s));
    }
  }
}

Tensor Optimizer::init_slot(const std::string& slot, const Tensor& param, size_t) const {
  if (slot == "step") return ops::scalar_tensor(0.0, DType::Float32);
  return ops::zeros(param.shape(), {param.dtype(), param.device()});
}

void Optimizer::check_range(const std::string& option, double lo, double hi) const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const double v = groups_[g].options.at(option);
    SPORE_CHECK(v >= lo && v <= hi, "[", name_, "] ", option, " = ", v, " in group ", g, " is out of range; it must be in [",
                lo, ", ", hi, "]");
  }
}

void Optimizer::step(const std::vector<Tensor>& grads) {
  SPORE_CHECK(grads.size() == num_params_, "[", name_, ".step] got ", grads.size(), " gradients for ", num_params_,
              " parameters; pass one per parameter in params() order (an undefined Tensor skips one)");
  // Every gradient is checked before any parameter moves, so a bad one leaves the model as it was.
  size_t k = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& grp = groups_[g];
    for (size_t i = 0; i < grp.params.size(); ++i, ++k) {
      const Tensor& gr = grads[k];
      if (!gr.defined()) continue;
      const Tensor& p = grp.params[i];
      SPORE_CHECK(gr.shape() == p.shape(), "[", name_, ".step] gradient ", k, " has shape ", shape_str(gr.shape()),
                  " but its parameter (group ", g, ", index ", i, ") has shape ", shape_str(p.shape()),
                  "; pass gradients in params() order");
      SPORE_CHECK(gr.dtype() == p.dtype(), "[", name_, ".step] gradient ", k, " is ", dtype_name(gr.dtype()),
                  " but its parameter is ", dtype_name(p.dtype()), "; cast the gradient to the parameter's dtype");
    }
  }
  k = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    Group& grp = groups_[g];
    for (size_t i = 0; i < grp.params.size(); ++i, ++k)
      if (grads[k].defined()) update(g, grp.params[i], grads[k], grp.slots[i]);
  }
}

void Optimizer::step(const TensorTree& grads) {
  // A flat list may hold None for a parameter without a gradient; leaves() would drop it.
  bool flat = grads.is_list() && grads.size() == num_params_;
  for (size_t i = 0; flat && i < grads.size(); ++i) flat = grads[i].is_none() || grads[i].is_tensor();
  if (!flat) {
    step(grads.leaves());
    return;
  }
  std::vector<Tensor> gs;
  for (size_t i = 0; i < grads.size(); ++i) gs.push_back(grads[i].is_tensor() ? grads[i].tensor() : Tensor());
  step(gs);
}

std::vector<Tensor> Optimizer::params() const {
  std::vector<Tensor> out;
  for (const auto& g : groups_) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

const std::vector<Tensor>& Optimizer::group_params(size_t group) const {
  SPORE_CHECK(group < groups_.size(), "[", name_, "] group ", group, " does not exist; there are ", groups_.size());
  return groups_[group].params;
}

double Optimizer::option(const std::string& name, size_t group) const {
  SPORE_CHECK(group < groups_.size(), "[", name_, "] group ", group, " does not exist; there are ", groups_.size());
  const auto it = groups_[group].options.find(name);
  SPORE_CHECK(it != groups_[group].options.end(), "[", name_, "] unknown option '", name, "'; ", name_,
              "'s options are: ", known_names(groups_[group].options));
  return it->second;
}

void Optimizer::set_lr(double lr, size_t group) {
  SPORE_CHECK(lr >= 0, "[", name_, ".set_lr] learning rate ", lr, " is negative");
  SPORE_CHECK(group == SIZE_MAX || group < groups_.size(), "[", name_, ".set_lr] group ", group,
              " does not exist; there are ", groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (group != SIZE_MAX && g != group) continue;
    groups_[g].lr_value = lr;
    groups_[g].options["lr"] = lr;
    ops::fill_(groups_[g].lr, lr);
  }
}

double Optimizer::lr(size_t group) const {
  SPORE_CHECK(group < groups_.size(), "[", name_, ".lr] group ", group, " does not exist; there are ", groups_.size());
  return groups_[group].lr_value;
}

const Tensor& Optimizer::lr_tensor(size_t group) const {
  SPORE_CHECK(group < groups_.size(), "[", name_, ".lr_tensor] group ", group, " does not exist; there are ",
              groups_.size());
  return groups_[group].lr;
}

Tensor Optimizer::lr_as(size_t group, DType dtype) const { return ops::cast(groups_[group].lr, dtype); }

void Optimizer::schedule_option(const std::string& name, double lo, double hi, bool keep_zero) {
  SPORE_ASSERT(groups_.front().options.count(name), name_, " schedules unknown option ", name);
  check_range(name, lo, hi);
  scheduled_.push_back(name);
  schedulable_[name] = {lo, hi, keep_zero};
  for (Group& g : groups_) {
    g.scheduled[name] = ops::scalar_tensor(g.options.at(name), DType::Float64);
    g.built[name] = g.options.at(name);
  }
}

double Optimizer::built_option(const std::string& name, size_t group) const {
  const auto it = groups_.at(group).built.find(name);
  return it != groups_[group].built.end() ? it->second : option(name, group);
}

Tensor Optimizer::option_as(size_t group, const std::string& name, DType dtype) const {
  return ops::cast(groups_[group].scheduled.at(name), dtype);
}

void Optimizer::check_scheduled(const std::string& name, double value, size_t g, const char* caller) const {
  const Schedulable& s = schedulable_.at(name);
  SPORE_CHECK(value >= s.lo && value <= s.hi, "[", name_, ".", caller, "] ", name, " = ", value,
              " is out of range; it must be in [", s.lo, ", ", s.hi, "]");
  SPORE_CHECK(!s.keep_zero || value == 0 || groups_[g].built.at(name) != 0, "[", name_, ".", caller, "] group ", g,
              " was built with ", name, " = 0 and keeps no state for it; build the optimizer with ", name,
              " > 0 to change it later");
}

void Optimizer::set_option(const std::string& name, double value, size_t group) {
  const auto it = schedulable_.find(name);
  SPORE_CHECK(it != schedulable_.end(), "[", name_, ".set_option] '", name, "' cannot be changed after construction",
              scheduled_.empty() ? std::string("; ") + name_ + " has no such option"
                                 : "; the options " + name_ + " reads as tensors are: " + [&] {
                                     std::string o;
                                     for (const auto& n : scheduled_) o += (o.empty() ? "" : ", ") + n;
                                     return o;
                                   }());
  SPORE_CHECK(group == SIZE_MAX || group < groups_.size(), "[", name_, ".set_option] group ", group,
              " does not exist; there are ", groups_.size());
  // Every group is checked before any changes.
  for (size_t g = 0; g < groups_.size(); ++g)
    if (group == SIZE_MAX || g == group) check_scheduled(name, value, g, "set_option");
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (group != SIZE_MAX && g != group) continue;
    groups_[g].options[name] = value;
    ops::fill_(groups_[g].scheduled.at(name), value);
  }
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state_dict() const {
  std::vector<std::pair<std::string, Tensor>> sd;
  for (size_t g = 0; g < groups_.size(); ++g) {
    // The rate exactly as set (float64), not the float32 tensor the step reads.
    sd.emplace_back(std::to_string(g) + ".lr", ops::scalar_tensor(groups_[g].lr_value, DType::Float64));
    for (const std::string& n : scheduled_) sd.emplace_back(std::to_string(g) + "." + n, groups_[g].scheduled.at(n).clone());
    const auto names = slot_names(g);
    for (size_t i = 0; i < groups_[g].slots.size(); ++i)
      for (size_t s = 0; s < names.size(); ++s)
        sd.emplace_back(std::to_string(g) + "." + std::to_string(i) + "." + names[s], groups_[g].slots[i][s].clone());
  }
  return sd;
}

void Optimizer::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& sd) {
  // Every target first: nothing is written unless every entry matches.
  std::map<std::string, Tensor*> targets;
  std::vector<Tensor> lrs;
  for (size_t g = 0; g < groups_.size(); ++g) lrs.push_back(ops::scalar_tensor(groups_[g].lr_value, DType::Float64));
  std::vector<std::map<std::string, Tensor>> scheduled_values(groups_.size());
  // Scheduled options start at their current values: a checkpoint written before they were
  // saved (they came with OneCycleLR's momentum) lacks them, and loads keeping these.
  std::set<std::string> optional_keys;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (const std::string& n : scheduled_) {
      scheduled_values[g][n] = groups_[g].scheduled.at(n).clone();
      optional_keys.insert(std::to_string(g) + "." + n);
    }
  for (size_t g = 0; g < groups_.size(); ++g) {
    targets[std::to_string(g) + ".lr"] = &lrs[g];
    for (const std::string& n : scheduled_) targets[std::to_string(g) + "." + n] = &scheduled_values[g].at(n);
    const auto names = slot_names(g);
    for (size_t i = 0; i < groups_[g].slots.size(); ++i)
      for (size_t s = 0; s < names.size(); ++s)
        targets[std::to_string(g) + "." + std::to_string(i) + "." + names[s]] = &groups_[g].slots[i][s];
  }
  std::set<std::string> given;
  for (const auto& [k, t] : sd) {
    const auto it = targets.find(k);
    SPORE_CHECK(it != targets.end(), "[", name_, ".load_state_dict] unexpected entry '", k,
                "'; the state_dict is from an optimizer with other groups, parameters or options (", name_, " has ",
                targets.size(), " entries)");
    SPORE_CHECK(given.insert(k).second, "[", name_, ".load_state_dict] entry '", k, "' appears twice");
    SPORE_CHECK(t.defined(), "[", name_, ".load_state_dict] entry '", k, "' is an undefined tensor");
    const Tensor& dst = *it->second;
    SPORE_CHECK(t.shape() == dst.shape() && t.dtype() == dst.dtype(), "[", name_, ".load_state_dict] entry '", k,
                "' is ", dtype_name(t.dtype()), " ", shape_str(t.shape()), " but this optimizer's is ", dtype_name(dst.dtype()), " ",
                shape_str(dst.shape()), "; load the state of an optimizer built on the same parameters");
  }
  for (const auto& [k, t] : targets)
    SPORE_CHECK(given.count(k) || optional_keys.count(k), "[", name_, ".load_state_dict] missing entry '", k, "' (", given.size(), " of ",
                targets.size(), " entries given); the state_dict is from an optimizer with other groups or options");
  for (const auto& [k, t] : sd) {
    if (k.size() < 3 || k.compare(k.size() - 3, 3, ".lr") != 0) continue;
    const double lr = t.to(DType::Float64).item<double>();
    SPORE_CHECK(lr >= 0 && lr == lr, "[", name_, ".load_state_dict] entry '", k, "' is a learning rate of ", lr,
                ", negative or NaN; the state_dict is corrupted");
  }
  // Scheduled options land in temporaries first and are checked as set_option checks them,
  // before any state is written.
  std::set<const Tensor*> temporaries;
  for (size_t g = 0; g < groups_.size(); ++g)
    for (const auto& [n, t] : scheduled_values[g]) temporaries.insert(&t);
  for (const auto& [k, t] : sd)
    if (temporaries.count(targets.at(k))) ops::copy_(*targets.at(k), t);
  for (size_t g = 0; g < groups_.size(); ++g)
    for (const std::string& n : scheduled_) check_scheduled(n, scheduled_values[g].at(n).item<double>(), g, "load_state_dict");
  for (const auto& [k, t] : sd)
    if (!temporaries.count(targets.at(k))) ops::copy_(*targets.at(k), t);
  for (size_t g = 0; g < groups_.size(); ++g) {
    set_lr(lrs[g].item<double>(), g);
    for (const std::string& n : scheduled_) set_option(n, scheduled_values[g].at(n).item<double>(), g);
  }
}

}  // namespace spore::optim
