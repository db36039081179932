// SPDX-License-Identifier: Apache-2.0
#include "spore/train/model.h"

#include <algorithm>
#include <chrono>

#include "spore/autodiff.h"
#include "spore/error.h"
#include "spore/jit.h"
#include "spore/ops.h"
#include "train/resume_state.h"

namespace spore::train {

// The train step and the eval forward, each compiled by its own jit (so train/eval is part of
// what selects a graph); they run compiled only in Graph mode.
struct Model::Compiled {
  using StepFn = std::function<TensorTree(const Tensor&, const Tensor&)>;
  using ForwardFn = std::function<Tensor(const Tensor&)>;
  StepFn step;
  ForwardFn forward;
  JitFunction<StepFn> jit_step;
  JitFunction<ForwardFn> jit_forward;
  Compiled(StepFn s, ForwardFn f)
      : step(s), forward(f), jit_step(std::move(s), "train_step"), jit_forward(std::move(f), "predict") {}
};

Model::Model(nn::UnaryCell& net, LossFn loss, optim::Optimizer& optimizer, std::vector<std::string> metrics)
    : net_(net), loss_(std::move(loss)), opt_(optimizer), metric_names_(std::move(metrics)) {
  SPORE_CHECK(loss_ != nullptr, "[Model] needs a loss function");
  for (const auto& m : metric_names_) make_metric(m);  // unknown names fail now, not after an epoch
  // Metrics are reported and checkpointed by name: a repeated one would overwrite itself.
  for (size_t i = 0; i < metric_names_.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      SPORE_CHECK(make_metric(metric_names_[i])->name() != make_metric(metric_names_[j])->name(),
                  "[Model] metric '", metric_names_[i], "' is listed twice (positions ", j, " and ", i,
                  "); list each metric once");
  // The optimizer may hold any subset of the network's parameters, in any groups and order
  // (frozen layers, no weight decay on biases): each of its parameters is found in the network
  // by storage, and the step hands it that parameter's gradient.
  const auto params = net_.parameters();
  const auto opt_params = opt_.params();
  for (size_t i = 0; i < opt_params.size(); ++i) {
    size_t found = params.size();
    for (size_t j = 0; j < params.size() && found == params.size(); ++j)
      if (params[j].storage() == opt_params[i].storage() && params[j].shape() == opt_params[i].shape()) found = j;
    SPORE_CHECK(found < params.size(), "[Model] the optimizer's parameter ", i, " (shape ",
                shape_str(opt_params[i].shape()), ") is not a parameter of the network ", net_.type_name(),
                "; build the optimizer from network.parameters() or a subset of them");
    grad_index_.push_back(found);
  }
  auto step = [this](const Tensor& x, const Tensor& y) -> TensorTree {
    auto fn = [&](const TensorTree& p) -> std::pair<Tensor, TensorTree> {
      return nn::functional_call(net_, p, [&] {
        Tensor out = net_(x);
        return std::make_pair(loss_(out, y), TensorTree(out));
      });
    };
    auto [loss, grads, out] = value_and_grad(fn)(net_.parameter_tree());
    const std::vector<Tensor> all = grads.leaves();
    std::vector<Tensor> picked;
    picked.reserve(grad_index_.size());
    for (size_t j : grad_index_) picked.push_back(all[j]);
    if (clip_norm_ > 0) {
      // PyTorch's clip_grad_norm_, written out of place: the gradients are traced values (some
      // of them views) that a compiled step cannot overwrite.
      Tensor sq;
      for (const Tensor& g : picked)
        if (g.defined()) sq = sq.defined() ? sq + ops::sum(g * g) : ops::sum(g * g);
      if (sq.defined()) {
        Tensor scale = ops::clamp(clip_norm_ / (ops::sqrt(sq) + 1e-6), 0.0, 1.0);
        for (Tensor& g : picked)
          if (g.defined()) g = g * scale;
      }
    }
    opt_.step(picked);
    return TensorTree(std::vector<Tensor>{loss, out.tensor()});
  };
  auto forward = [this](const Tensor& x) { return net_(x); };
  compiled_ = std::make_unique<Compiled>(step, forward);
}

Model::~Model() = default;

int Model::train_traces() const { return compiled_->jit_step.core().traces(); }
int Model::train_optimizations() const { return compiled_->jit_step.core().optimizations(); }

std::pair<Tensor, Tensor> Model::train_step(const Tensor& x, const Tensor& y) {
  stepped_ = true;
  net_.train();
  TensorTree r = get_mode() == Mode::Graph ? compiled_->jit_step(x, y) : compiled_->step(x, y);
  return {r[0].tensor(), r[1].tensor()};
}

Tensor Model::predict(const Tensor& x) {
  // Eval mode for the call, the caller's mode afterwards (also when the call throws).
  struct EvalScope {
    nn::Cell& net;
    bool was_training;
    ~EvalScope() { net.train(was_training); }
  } scope{net_, net_.is_training()};
  net_.eval();
  return get_mode() == Mode::Graph ? compiled_->jit_forward(x) : compiled_->forward(x);
}

Model& Model::clip_grad_norm(double max_norm) {
  SPORE_CHECK(max_norm >= 0, "[Model::clip_grad_norm] max_norm must be >= 0, got ", max_norm);
  // The bound is a C++ number traced into the step: changing it after a step ran would be
  // silently ignored by the compiled graph, so it is fixed before the first step.
  SPORE_CHECK(!stepped_ && step_ == 0,
              "[Model::clip_grad_norm] set gradient clipping before the first train step");
  clip_norm_ = max_norm;
  return *this;
}

std::map<std::string, double> Model::evaluate(BatchSource& data, const std::vector<Metric*>& extra) {
  std::vector<std::unique_ptr<Metric>> owned;
  for (const auto& m : metric_names_) owned.push_back(make_metric(m));
  std::vector<Metric*> metrics;
  for (auto& m : owned) metrics.push_back(m.get());
  for (Metric* m : extra) {
    SPORE_CHECK(m != nullptr, "[Model::evaluate] an extra metric is null");
    m->reset();
    metrics.push_back(m);
  }
  data.start_epoch(0);
  while (auto b = data.next()) {
    Tensor out = predict(b->x);
    Tensor loss = loss_(out, b->y);
    for (Metric* m : metrics) m->update(out, b->y, loss);
  }
  std::map<std::string, double> r;
  for (Metric* m : metrics) r[m->name()] = m->value();
  return r;
}

namespace {
// Clears the model's view of the running fit when fit returns or throws. A fit that ends inside
// an epoch (a callback stopped it, a step threw) leaves the epoch's totals pending like a
// restored checkpoint's, so the next fit, or a checkpoint taken before it, continues them; the
// callbacks' states are kept for such a checkpoint (the next fit's callbacks keep their own).
struct FitScope {
  const std::vector<Callback*>*& callbacks;
  EpochProgress*& progress;
  Checkpoint& pending;
  Checkpoint& last_callbacks;
  const int64_t& batch_in_epoch;
  ~FitScope() {
    try {
      if (callbacks) save_callback_states(*callbacks, last_callbacks);
      if (progress && batch_in_epoch > 0) save_epoch_progress(*progress, pending);
    } catch (...) {
      // Never throw from a destructor. Saving copies tensors only; should it fail, the next fit
      // starts the epoch's totals at zero and a checkpoint between fits lacks the states.
    }
    callbacks = nullptr;
    progress = nullptr;
  }
};
}  // namespace

FitResult Model::fit(int64_t epochs, BatchSource& train, const std::vector<Callback*>& given, BatchSource* valid) {
  using clock = std::chrono::steady_clock;
  for (size_t i = 0; i < given.size(); ++i)
    SPORE_CHECK(given[i] != nullptr, "[Model::fit] callback ", i, " is null; pass pointers to live callbacks");
  // Checkpointing callbacks run after the others, so what they save includes every update the
  // other callbacks made at the same step or epoch end (a lowered rate, a bad-epoch count).
  std::vector<Callback*> callbacks = given;
  std::stable_partition(callbacks.begin(), callbacks.end(), [](Callback* cb) { return !cb->saves_checkpoints(); });
  // Everything restored is checked and loaded before any hook runs; a refused state stays
  // pending, so a fit with the right callbacks may follow. Handed over once, on success.
  EpochProgress resumed_progress;
  for (const auto& m : metric_names_) resumed_progress.metrics.push_back(make_metric(m));
  if (batch_in_epoch_ > 0) load_epoch_progress(resumed_progress, resume_state_);
  load_callback_states(given, resume_state_);
  resume_state_ = Checkpoint();
  last_fit_callbacks_ = Checkpoint();
  // Resumed inside an epoch: its metrics and mean loss continue from the saved totals.
  EpochProgress progress = std::move(resumed_progress);
  fit_callbacks_ = &given;
  fit_progress_ = &progress;
  FitScope scope{fit_callbacks_, fit_progress_, resume_state_, last_fit_callbacks_, batch_in_epoch_};
  RunContext c;
  c.model = this;
  c.epochs = epochs;
  c.global_step = step_;
  FitResult result;
  for (Callback* cb : callbacks) cb->on_train_begin(c);
  double train_seconds = 0;
  int64_t train_samples = 0;
  const auto t_fit = clock::now();
  bool first_epoch = true;
  while (epoch_ < epochs && !c.stop) {
    if (!first_epoch) {
      progress = EpochProgress();
      for (const auto& m : metric_names_) progress.metrics.push_back(make_metric(m));
    }
    first_epoch = false;
    train.start_epoch(epoch_, batch_in_epoch_);
    c.epoch = epoch_;
    c.step_in_epoch = batch_in_epoch_;
    c.steps_per_epoch = train.batches_per_epoch();
    c.samples_in_epoch = 0;
    c.epoch_seconds = 0;
    c.epoch_complete = false;
    c.train_metrics.clear();
    c.eval_metrics.clear();
    for (Callback* cb : callbacks) cb->on_epoch_begin(c);
    const auto t_epoch = clock::now();
    bool finished = true;
    while (auto b = train.next()) {
      auto [loss, out] = train_step(b->x, b->y);
      ++step_;
      ++batch_in_epoch_;
      // The last batch of an epoch moves the position to the next epoch before the step's
      // callbacks run, so a checkpoint taken now resumes at (epoch + 1, 0).
      const bool last = c.steps_per_epoch >= 0 && batch_in_epoch_ >= c.steps_per_epoch;
      const int64_t n = b->x.shape()[0];
      c.global_step = step_;
      c.step_in_epoch = batch_in_epoch_;
      c.samples_in_epoch += n;
      c.loss = loss.to(DType::Float64).item<double>();
      progress.loss_sum += c.loss * static_cast<double>(n);
      progress.loss_count += n;
      for (auto& m : progress.metrics) m->update(out, b->y, loss);
      c.epoch_seconds = std::chrono::duration<double>(clock::now() - t_epoch).count();
      if (last) {
        ++epoch_;
        batch_in_epoch_ = 0;
      }
      for (Callback* cb : callbacks) cb->on_step_end(c);
      if (last) break;
      if (c.stop) {
        finished = false;
        break;
      }
    }
    train_seconds += std::chrono::duration<double>(clock::now() - t_epoch).count();
    train_samples += c.samples_in_epoch;
    if (finished && epoch_ == c.epoch) {  // an epoch of unknown length ended at the source's end
      ++epoch_;
      batch_in_epoch_ = 0;
    }
    for (auto& m : progress.metrics) c.train_metrics[m->name()] = m->value();
    if (valid) c.eval_metrics = evaluate(*valid);
    result.train_loss = progress.loss_count ? progress.loss_sum / static_cast<double>(progress.loss_count) : 0.0;
    ++result.epochs_run;
    c.epoch_complete = finished;
    for (Callback* cb : callbacks) cb->on_epoch_end(c);
  }
  for (Callback* cb : callbacks) cb->on_train_end(c);
  result.steps = step_;
  result.seconds = std::chrono::duration<double>(clock::now() - t_fit).count();
  result.samples_per_second = train_seconds > 0 ? static_cast<double>(train_samples) / train_seconds : 0.0;
  result.train_metrics = c.train_metrics;
  result.eval_metrics = c.eval_metrics;
  return result;
}

Checkpoint Model::checkpoint() const {
  // A snapshot: later steps do not change a checkpoint already taken.
  Checkpoint c;
  for (auto& [name, t] : net_.state_dict()) c.tensors.emplace_back("model." + name, t.clone());
  for (auto& [name, t] : opt_.state_dict()) c.tensors.emplace_back("optim." + name, t);
  c.ints["step"] = step_;
  c.ints["epoch"] = epoch_;
  c.ints["batch_in_epoch"] = batch_in_epoch_;
  const Generator& g = default_generator();
  c.ints["rng_seed"] = static_cast<int64_t>(g.seed());
  c.ints["rng_offset"] = static_cast<int64_t>(g.offset());
  if (fit_callbacks_) {
    save_callback_states(*fit_callbacks_, c);
    if (fit_progress_ && batch_in_epoch_ > 0) save_epoch_progress(*fit_progress_, c);
  } else {
    append_entries(resume_state_, c);  // restored but not resumed yet: carried on unchanged
    // Between fits: the last fit's callback states, unless restored ones are pending.
    if (!resume_state_.has_prefix("callback.")) append_entries(last_fit_callbacks_, c);
  }
  c.texts["network"] = net_.type_name();
  c.texts["optimizer"] = opt_.name();
  c.texts["producer"] = "spore";
  return c;
}

void Model::save_checkpoint(const std::string& path) const { train::save_checkpoint(path, checkpoint()); }

void Model::restore(const Checkpoint& c) {
  SPORE_CHECK(fit_callbacks_ == nullptr, "[Model::restore] called while fit runs (from a callback?); restore "
              "before fit, or stop the fit and restore after it returns");
  for (const char* key : {"step", "epoch", "batch_in_epoch", "rng_seed", "rng_offset"})
    SPORE_CHECK(c.ints.count(key), "[Model::restore] the checkpoint has no '", key, "' entry; it was not written by Model");
  // Both loads check everything before writing, but the second could still refuse after the
  // first wrote: keep copies to roll back, so a failed restore leaves the model as it was.
  std::vector<std::pair<std::string, Tensor>> net_backup, opt_backup;
  for (auto& [n, t] : net_.state_dict()) net_backup.emplace_back(n, t.clone());
  for (auto& [n, t] : opt_.state_dict()) opt_backup.emplace_back(n, t.clone());
  try {
    net_.load_state_dict(c.with_prefix("model."));
    opt_.load_state_dict(c.with_prefix("optim."));
  } catch (...) {
    net_.load_state_dict(net_backup);
    opt_.load_state_dict(opt_backup);
    throw;
  }
  step_ = c.get_int("step");
  epoch_ = c.get_int("epoch");
  batch_in_epoch_ = c.get_int("batch_in_epoch");
  default_generator().set_state(static_cast<uint64_t>(c.get_int("rng_seed")), static_cast<uint64_t>(c.get_int("rng_offset")));
  // The callbacks and metrics are not known until fit: their entries wait for it.
  resume_state_ = fit_entries(c);
  last_fit_callbacks_ = Checkpoint();
}

void Model::load_checkpoint(const std::string& path) { restore(train::load_checkpoint(path)); }

}  // namespace spore::train
