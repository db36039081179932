// SPDX-License-Identifier: Apache-2.0
#pragma once
// Model: the training and evaluation loop around a network, a loss and an optimizer
// (MindSpore's train.Model). Its train step is forward + loss + gradients + optimizer update as
// ONE function (MindSpore's TrainOneStepCell): in Graph mode (set_context(Mode::Graph)) it is
// compiled once by jit into one plan whose parameter and optimizer-state updates are written in
// place; in PyNative mode the same code runs eagerly. The learning rate and step count reach the
// compiled step as tensors (the optimizer's), and train/eval are two separately compiled
// functions, so neither a schedule nor a mode switch is ever frozen into a graph.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spore/nn/cell.h"
#include "spore/optim/optimizer.h"
#include "spore/tensor.h"
#include "spore/train/batch_source.h"
#include "spore/train/callbacks.h"
#include "spore/train/checkpoint.h"
#include "spore/train/metrics.h"

namespace spore::train {

struct EpochProgress;  // src/train/resume_state.h

/// loss(network output, labels) -> a 0-d mean loss.
using LossFn = std::function<Tensor(const Tensor& output, const Tensor& labels)>;

struct FitResult {
  int64_t epochs_run = 0;
  int64_t steps = 0;
  double seconds = 0;
  double samples_per_second = 0;  // over the whole fit, evaluation excluded
  double train_loss = 0;          // mean loss of the last epoch
  std::map<std::string, double> train_metrics;  // last epoch
  std::map<std::string, double> eval_metrics;   // last validation, if any
};

class Model {
 public:
  /// `net`, `optimizer` must outlive the Model. The optimizer holds any subset of the network's
  /// parameters (frozen layers), in any groups. `metrics` are names for make_metric.
  Model(nn::UnaryCell& net, LossFn loss, optim::Optimizer& optimizer,
        std::vector<std::string> metrics = {"accuracy", "loss"});
  ~Model();

  /// Clips the gradients to a total 2-norm of `max_norm` before each update (0 = off). Set it
  /// before the first train step: the bound is part of the compiled step.
  Model& clip_grad_norm(double max_norm);
  /// One optimizer step on a batch; returns the batch's loss and the network's output.
  std::pair<Tensor, Tensor> train_step(const Tensor& x, const Tensor& y);
  /// The network's output in eval mode.
  Tensor predict(const Tensor& x);
  /// Metrics over one pass of `data` in eval mode: the model's named ones, and `extra` ones the
  /// caller owns and reads afterwards (a ConfusionMatrix's matrix(), say), reset first.
  std::map<std::string, double> evaluate(BatchSource& data, const std::vector<Metric*>& extra = {});
  /// Trains for `epochs` epochs (counting those a restored checkpoint already ran), evaluating
  /// on `valid` after each epoch when given. Resumes from the position restore() set, or where
  /// the last fit stopped (a callback's stop inside an epoch keeps that epoch's totals pending).
  FitResult fit(int64_t epochs, BatchSource& train, const std::vector<Callback*>& callbacks = {},
                BatchSource* valid = nullptr);

  /// A snapshot (copies) of the parameters and buffers ("model."), optimizer state ("optim."),
  /// step, position in the data (epoch, batch index in it) and the random generator's state;
  /// taken during fit, also the state of its stateful callbacks ("callback.", see
  /// Callback::state_name) and, inside an epoch, the epoch's running metrics and loss sum
  /// ("epoch_progress."), so a resumed epoch reports what the whole epoch would have. Taken
  /// between fits, it holds what one taken at the last fit's end would have (its callbacks'
  /// states, an unfinished epoch's totals), or a restored checkpoint's entries not resumed yet.
  /// The data's own settings (seed, batch size) are the caller's to record and check.
  Checkpoint checkpoint() const;
  void save_checkpoint(const std::string& path) const;
  /// Loads everything checkpoint() saved; the next fit continues from the saved position, hands
  /// its callbacks their saved state, and reproduces the uninterrupted run's losses exactly.
  void restore(const Checkpoint& c);
  void load_checkpoint(const std::string& path);

  int64_t global_step() const { return step_; }
  nn::UnaryCell& network() { return net_; }
  optim::Optimizer& optimizer() { return opt_; }
  /// How many times the compiled train step was traced (1 in a steady Graph-mode run).
  int train_traces() const;
  /// How many times the compiled step went through the pass pipeline (sizes served by one graph
  /// over a symbolic batch share one run).
  int train_optimizations() const;

 private:
  struct Compiled;
  nn::UnaryCell& net_;
  LossFn loss_;
  optim::Optimizer& opt_;
  std::vector<std::string> metric_names_;
  std::unique_ptr<Compiled> compiled_;
  std::vector<size_t> grad_index_;  // per optimizer parameter: its index in net_.parameters()
  double clip_norm_ = 0;
  bool stepped_ = false;  // a train step ran (settings traced into the step are fixed)
  int64_t step_ = 0;
  int64_t epoch_ = 0;          // the epoch to run next (or resume)
  int64_t batch_in_epoch_ = 0; // batches of epoch_ already done
  // While fit runs: the callbacks whose state checkpoint() saves, and the epoch's running totals.
  const std::vector<Callback*>* fit_callbacks_ = nullptr;
  EpochProgress* fit_progress_ = nullptr;
  // restore()'s callback and epoch-progress entries, or the totals of the epoch the last fit
  // stopped inside, for the next fit.
  Checkpoint resume_state_;
  Checkpoint last_fit_callbacks_;  // the last fit's callback states, for checkpoint() between fits
};

}  // namespace spore::train
