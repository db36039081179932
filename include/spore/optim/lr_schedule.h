// SPDX-License-Identifier: Apache-2.0
#pragma once
// Learning-rate schedules with torch.optim.lr_scheduler's values. A schedule sets each group's
// learning rate through Optimizer::set_lr, which writes the 0-d lr tensor in place, so a
// compiled train step sees the new rate without recompiling. As in PyTorch, constructing a
// schedule applies its step-0 rate, and step() advances one step (an epoch or an iteration,
// as the caller uses it). lr_at(step) is the same value as a pure function.
#include <cstdint>
#include <string>
#include <vector>

#include "spore/optim/optimizer.h"

namespace spore::optim {

/// Base of the closed-form schedules: the rate of each group is a function of the step count and
/// of that group's base rate (its learning rate when the schedule was built).
class LRScheduler {
 public:
  virtual ~LRScheduler();
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances one step and sets every group's rate to lr_at(last_step()).
  void step();
  /// The rate of `group` after `step` steps.
  virtual double lr_at(int64_t step, size_t group = 0) const = 0;
  /// Steps taken so far (0 right after construction).
  int64_t last_step() const { return last_step_; }
  /// Jumps to `step` (resuming from a checkpoint) and sets the rates for it.
  void set_last_step(int64_t step);
  const std::vector<double>& base_lrs() const { return base_lrs_; }

 protected:
  /// Records the base rates; subclasses call apply() at the end of their constructor.
  explicit LRScheduler(Optimizer& opt);
  /// Sets every group's rate to lr_at(last_step()), then apply_options(last_step()).
  void apply();
  /// Sets other scheduled options for `step` (OneCycleLR's momentum); default none.
  virtual void apply_options(int64_t step);

  Optimizer& opt_;
  std::vector<double> base_lrs_;

 private:
  int64_t last_step_ = 0;
};

/// base * gamma ^ floor(step / step_size) (torch StepLR).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t step, size_t group = 0) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// base * gamma ^ (number of milestones <= step) (torch MultiStepLR).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1);
  double lr_at(int64_t step, size_t group = 0) const override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

/// base * gamma ^ step (torch ExponentialLR).
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& opt, double gamma);
  double lr_at(int64_t step, size_t group = 0) const override;

 private:
  double gamma_;
};

/// Optional linear warmup from base * warmup_start_factor to base over `warmup_steps`, then
/// cosine annealing from base to eta_min over `t_max` steps: eta_min + (base - eta_min) *
/// (1 + cos(pi * (step - warmup_steps) / t_max)) / 2. Without warmup this is torch's
/// CosineAnnealingLR; with it, SequentialLR(LinearLR, CosineAnnealingLR) at milestone
/// warmup_steps.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0, int64_t warmup_steps = 0,
                    double warmup_start_factor = 0);
  double lr_at(int64_t step, size_t group = 0) const override;

 private:
  int64_t t_max_;
  double eta_min_;
  int64_t warmup_;
  double start_factor_;
};

/// base * (1 - min(step, total_iters) / total_iters) ^ power (torch PolynomialLR).
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(Optimizer& opt, int64_t total_iters = 5, double power = 1.0);
  double lr_at(int64_t step, size_t group = 0) const override;

 private:
  int64_t total_iters_;
  double power_;
};

/// torch OneCycleLR (per iteration): the rate goes from max_lr / div_factor up to max_lr over
/// pct_start of total_steps, then down to max_lr / div_factor / final_div_factor (three_phase:
/// back to the initial rate first). With cycle_momentum (PyTorch's default) the momentum moves
/// the other way, from max_momentum down to base_momentum while the rate rises and back up
/// (three_phase: it stays at max_momentum in the last phase): SGD's and RMSProp's "momentum",
/// or the Adam family's and LAMB's "beta1", set through Optimizer::set_option, so a compiled
/// step sees it change. Base rates are max_lr, not the optimizer's; stepping past total_steps
/// is an error.
struct OneCycleOptions {
  double pct_start = 0.3;
  bool cos_anneal = true;  // false: linear
  double div_factor = 25;
  double final_div_factor = 1e4;
  bool three_phase = false;
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
};

class OneCycleLR : public LRScheduler {
 public:
  /// One max_lr for every group, or one per group.
  OneCycleLR(Optimizer& opt, std::vector<double> max_lrs, int64_t total_steps, OneCycleOptions o = {});
  double lr_at(int64_t step, size_t group = 0) const override;
  /// The momentum (or beta1) after `step` steps; max_momentum throughout without cycle_momentum.
  double momentum_at(int64_t step) const;
  /// The option it cycles ("momentum" or "beta1"); empty without cycle_momentum.
  const std::string& momentum_option() const { return momentum_option_; }

 private:
  struct Phase {
    double end_step;
    double start_factor, end_factor;  // multiples of max_lr
    double start_momentum, end_momentum;
  };
  void apply_options(int64_t step) override;
  // The phase `step` is in and how far through it (0 to 1).
  std::pair<const Phase*, double> phase_at(int64_t step) const;
  double anneal(double start, double end, double pct) const;

  int64_t total_steps_;
  OneCycleOptions o_;
  std::vector<Phase> phases_;
  std::string momentum_option_;
};

/// torch ReduceLROnPlateau: multiplies every group's rate by `factor` (not below min_lr) when
/// the metric has not improved for more than `patience` steps, then waits `cooldown` steps.
struct PlateauOptions {
  bool maximize = false;  // mode "max": a larger metric is better
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  bool relative_threshold = true;  // threshold_mode "rel"; false: "abs"
  int64_t cooldown = 0;
  double min_lr = 0;
  double eps = 1e-8;  // changes smaller than this are ignored
};

class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& opt, PlateauOptions o = {});
  /// Records one metric value (a NaN never counts as an improvement) and reduces the rates if
  /// the plateau lasted long enough.
  void step(double metric);

  /// What a checkpoint needs to resume the schedule.
  struct State {
    double best;
    int64_t num_bad_steps = 0;
    int64_t cooldown_counter = 0;
    int64_t last_step = 0;
  };
  const State& state() const { return state_; }
  void load_state(const State& s) { state_ = s; }

  /// The options it was made with (a resumed callback checks its mode against the saved one).
  const PlateauOptions& options() const { return o_; }

 private:
  bool is_better(double a) const;
  Optimizer& opt_;
  PlateauOptions o_;
  State state_;
};

}  // namespace spore::optim
