// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace spore::optim {

LRScheduler::LRScheduler(Optimizer& opt) : opt_(opt) {
  for (size_t g = 0; g < opt.num_groups(); ++g) base_lrs_.push_back(opt.lr(g));
}

LRScheduler::~LRScheduler() = default;

void LRScheduler::apply() {
  for (size_t g = 0; g < opt_.num_groups(); ++g) opt_.set_lr(lr_at(last_step_, g), g);
  apply_options(last_step_);
}

void LRScheduler::apply_options(int64_t) {}

void LRScheduler::step() {
  ++last_step_;
  apply();
}

void LRScheduler::set_last_step(int64_t step) {
  SPORE_CHECK(step >= 0, "[LRScheduler] step ", step, " is negative");
  last_step_ = step;
  apply();
}

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma)
    : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {
  SPORE_CHECK(step_size > 0, "[StepLR] step_size ", step_size, " must be positive");
  apply();
}

double StepLR::lr_at(int64_t step, size_t group) const {
  return base_lrs_.at(group) * std::pow(gamma_, static_cast<double>(step / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(opt), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  apply();
}

double MultiStepLR::lr_at(int64_t step, size_t group) const {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), step) - milestones_.begin();
  return base_lrs_.at(group) * std::pow(gamma_, static_cast<double>(passed));
}

ExponentialLR::ExponentialLR(Optimizer& opt, double gamma) : LRScheduler(opt), gamma_(gamma) { apply(); }

double ExponentialLR::lr_at(int64_t step, size_t group) const {
  return base_lrs_.at(group) * std::pow(gamma_, static_cast<double>(step));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min, int64_t warmup_steps,
                                     double warmup_start_factor)
    : LRScheduler(opt), t_max_(t_max), eta_min_(eta_min), warmup_(warmup_steps), start_factor_(warmup_start_factor) {
  SPORE_CHECK(t_max > 0, "[CosineAnnealingLR] t_max ", t_max, " must be positive (the steps of the cosine phase)");
  SPORE_CHECK(warmup_steps >= 0, "[CosineAnnealingLR] warmup_steps ", warmup_steps, " is negative");
  SPORE_CHECK(warmup_start_factor >= 0 && warmup_start_factor <= 1, "[CosineAnnealingLR] warmup_start_factor ",
              warmup_start_factor, " must be in [0, 1]");
  apply();
}

double CosineAnnealingLR::lr_at(int64_t step, size_t group) const {
  const double base = base_lrs_.at(group);
  if (step < warmup_)
    return base * (start_factor_ + (1.0 - start_factor_) * static_cast<double>(step) / static_cast<double>(warmup_));
  const double t = static_cast<double>(step - warmup_) / static_cast<double>(t_max_);
  return eta_min_ + (base - eta_min_) * (1.0 + std::cos(std::numbers::pi * t)) / 2.0;
}

PolynomialLR::PolynomialLR(Optimizer& opt, int64_t total_iters, double power)
    : LRScheduler(opt), total_iters_(total_iters), power_(power) {
  SPORE_CHECK(total_iters > 0, "[PolynomialLR] total_iters ", total_iters, " must be positive");
  apply();
}

double PolynomialLR::lr_at(int64_t step, size_t group) const {
  const double frac = static_cast<double>(std::min(step, total_iters_)) / static_cast<double>(total_iters_);
  return base_lrs_.at(group) * std::pow(1.0 - frac, power_);
}

OneCycleLR::OneCycleLR(Optimizer& opt, std::vector<double> max_lrs, int64_t total_steps, OneCycleOptions o)
    : LRScheduler(opt), total_steps_(total_steps), o_(o) {
  SPORE_CHECK(total_steps > 0, "[OneCycleLR] total_steps ", total_steps, " must be positive");
  SPORE_CHECK(o.pct_start >= 0 && o.pct_start <= 1, "[OneCycleLR] pct_start ", o.pct_start, " must be in [0, 1]");
  SPORE_CHECK(max_lrs.size() == 1 || max_lrs.size() == opt.num_groups(), "[OneCycleLR] ", max_lrs.size(),
              " max_lrs for ", opt.num_groups(), " parameter groups; give one for all or one per group");
  SPORE_CHECK(o.div_factor > 0 && o.final_div_factor > 0, "[OneCycleLR] div_factor ", o.div_factor,
              " and final_div_factor ", o.final_div_factor, " must be positive");
  for (size_t g = 0; g < opt.num_groups(); ++g) base_lrs_[g] = max_lrs.size() == 1 ? max_lrs[0] : max_lrs[g];
  const double init = 1.0 / o.div_factor, low = init / o.final_div_factor, n = static_cast<double>(total_steps);
  const double hi = o.max_momentum, lo = o.base_momentum;
  if (o.three_phase)
    phases_ = {{o.pct_start * n - 1, init, 1.0, hi, lo}, {2 * o.pct_start * n - 2, 1.0, init, lo, hi},
               {n - 1, init, low, hi, hi}};
  else
    phases_ = {{o.pct_start * n - 1, init, 1.0, hi, lo}, {n - 1, 1.0, low, lo, hi}};
  if (o.cycle_momentum) {
    const auto& names = opt.scheduled_options();
    for (const char* name : {"beta1", "momentum"})
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        momentum_option_ = name;
        break;
      }
    SPORE_CHECK(!momentum_option_.empty(), "[OneCycleLR] cycle_momentum needs an optimizer with momentum or beta1; ",
                opt.name(), " has neither: set cycle_momentum = false");
    const double top = momentum_option_ == "beta1" ? std::nextafter(1.0, 0.0) : INFINITY;
    SPORE_CHECK(o.base_momentum >= 0 && o.base_momentum <= top && o.max_momentum >= 0 && o.max_momentum <= top,
                "[OneCycleLR] base_momentum ", o.base_momentum, " and max_momentum ", o.max_momentum, " must be in [0, ",
                top, momentum_option_ == "beta1" ? ") for " : "] for ", opt.name(), "'s ", momentum_option_);
    for (size_t g = 0; g < opt.num_groups(); ++g)
      SPORE_CHECK(momentum_option_ != "momentum" || opt.option("momentum", g) != 0, "[OneCycleLR] cycle_momentum sets ",
                  opt.name(), "'s momentum, but group ", g, " was built with momentum 0 (no momentum buffer): build it ",
                  "with momentum > 0 or set cycle_momentum = false");
  }
  apply();
}

std::pair<const OneCycleLR::Phase*, double> OneCycleLR::phase_at(int64_t step) const {
  SPORE_CHECK(step >= 0 && step <= total_steps_, "[OneCycleLR] step ", step, " is past total_steps ", total_steps_,
              "; build the schedule with the number of steps the training runs");
  const double s = static_cast<double>(step);
  double start_step = 0;
  for (size_t i = 0;; ++i) {
    const Phase& p = phases_[i];
    if (s <= p.end_step || i + 1 == phases_.size()) return {&p, (s - start_step) / (p.end_step - start_step)};
    start_step = p.end_step;
  }
}

double OneCycleLR::anneal(double a, double b, double pct) const {
  return o_.cos_anneal ? b + (a - b) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0) : (b - a) * pct + a;
}

double OneCycleLR::lr_at(int64_t step, size_t group) const {
  const auto [p, pct] = phase_at(step);
  return anneal(base_lrs_.at(group) * p->start_factor, base_lrs_.at(group) * p->end_factor, pct);
}

double OneCycleLR::momentum_at(int64_t step) const {
  if (!o_.cycle_momentum) return o_.max_momentum;
  const auto [p, pct] = phase_at(step);
  return anneal(p->start_momentum, p->end_momentum, pct);
}

void OneCycleLR::apply_options(int64_t step) {
  if (!momentum_option_.empty()) opt_.set_option(momentum_option_, momentum_at(step));
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& opt, PlateauOptions o) : opt_(opt), o_(o) {
  SPORE_CHECK(o.factor < 1.0 && o.factor >= 0, "[ReduceLROnPlateau] factor ", o.factor, " must be in [0, 1)");
  SPORE_CHECK(o.patience >= 0 && o.cooldown >= 0, "[ReduceLROnPlateau] patience ", o.patience, " and cooldown ",
              o.cooldown, " must not be negative");
  state_.best = o.maximize ? -INFINITY : INFINITY;
}

bool ReduceLROnPlateau::is_better(double a) const {
  const double best = state_.best, th = o_.threshold;
  if (!o_.maximize) return o_.relative_threshold ? a < best * (1.0 - th) : a < best - th;
  return o_.relative_threshold ? a > best * (th + 1.0) : a > best + th;
}

void ReduceLROnPlateau::step(double metric) {
  ++state_.last_step;
  if (is_better(metric)) {
    state_.best = metric;
    state_.num_bad_steps = 0;
  } else {
    ++state_.num_bad_steps;
  }
  if (state_.cooldown_counter > 0) {
    --state_.cooldown_counter;
    state_.num_bad_steps = 0;
  }
  if (state_.num_bad_steps > o_.patience) {
    for (size_t g = 0; g < opt_.num_groups(); ++g) {
      const double old = opt_.lr(g), next = std::max(old * o_.factor, o_.min_lr);
      if (old - next > o_.eps) opt_.set_lr(next, g);
    }
    state_.cooldown_counter = o_.cooldown;
    state_.num_bad_steps = 0;
  }
}

}  // namespace spore::optim
