// SPDX-License-Identifier: Apache-2.0
#pragma once
// Callbacks of Model::fit (MindSpore's train.callback): hooks at the start and end of training,
// of each epoch and after each step, seeing one RunContext. A callback may ask fit to stop.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "spore/optim/lr_schedule.h"
#include "spore/train/checkpoint.h"

namespace spore::train {

class Model;

struct RunContext {
  Model* model = nullptr;
  int64_t epoch = 0;            // 0-based, the epoch running or just finished
  int64_t epochs = 0;           // the last epoch fit runs is epochs - 1
  int64_t global_step = 0;      // optimizer steps taken since the start (resumed runs included)
  int64_t step_in_epoch = 0;    // batches done in this epoch
  int64_t steps_per_epoch = -1; // -1 when the source cannot tell
  int64_t samples_in_epoch = 0;
  double epoch_seconds = 0;     // wall time of this epoch so far
  double loss = 0;              // the last step's loss
  std::map<std::string, double> train_metrics;  // at epoch end: this epoch's running metrics
  std::map<std::string, double> eval_metrics;   // at epoch end, when a validation source is given
  bool stop = false;            // set by a callback: fit ends after this step or epoch
  // At epoch end: false when a callback stopped fit inside the epoch. Callbacks that decide per
  // epoch (plateau, early stopping) skip such an epoch: its metrics cover only part of it, and
  // the resumed run finishes the epoch and decides then. False during an epoch's steps.
  bool epoch_complete = false;
  double samples_per_second() const { return epoch_seconds > 0 ? samples_in_epoch / epoch_seconds : 0; }
};

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_begin(RunContext&) {}
  virtual void on_epoch_begin(RunContext&) {}
  virtual void on_step_end(RunContext&) {}
  virtual void on_epoch_end(RunContext&) {}
  virtual void on_train_end(RunContext&) {}

  /// The name this callback's state goes under in checkpoints ("early_stopping"), or "" (the
  /// default) when a resumed run needs none of it. A checkpoint taken during fit holds each
  /// stateful callback's state under "callback.<name>." ("<name>_1", ... for a second one of
  /// the same name, in list order); the first fit after Model::restore loads it back, so a
  /// resumed run decides as the uninterrupted one would.
  virtual std::string state_name() const { return ""; }
  /// Adds this callback's state to `c`, every entry named `prefix` + something.
  virtual void save_state(Checkpoint& /*c*/, const std::string& /*prefix*/) const {}
  /// Reads back what save_state wrote under `prefix` (only called when `c` has such entries:
  /// a checkpoint from before the callback saved state leaves it as constructed).
  virtual void load_state(const Checkpoint& /*c*/, const std::string& /*prefix*/) {}
  /// Throws spore::Error when load_state would refuse these entries. fit checks every
  /// callback's entries before it loads any, so a refused resume changes no callback; load_state
  /// should refuse nothing check_state lets through.
  virtual void check_state(const Checkpoint& /*c*/, const std::string& /*prefix*/) const {}
  /// True for callbacks that write checkpoints: fit runs their hooks after every other
  /// callback's, so an epoch's checkpoint holds that epoch's updates (a lowered rate, a
  /// counter) whatever the list's order.
  virtual bool saves_checkpoints() const { return false; }
};

/// Prints the loss every `every` steps (MindSpore's LossMonitor) to `out`.
class LossMonitor : public Callback {
 public:
  explicit LossMonitor(int64_t every = 100, std::FILE* out = stdout) : every_(every), out_(out) {}
  void on_step_end(RunContext& c) override;

 private:
  int64_t every_;
  std::FILE* out_;
};

/// One line per epoch on stderr, redrawn in place on a terminal: epoch, step/total, samples/s,
/// ETA and loss. When stderr is not a terminal it prints plain lines about every 10 % of an
/// epoch instead, so logs stay readable.
class ProgressBar : public Callback {
 public:
  explicit ProgressBar(std::FILE* out = stderr);
  void on_epoch_begin(RunContext& c) override;
  void on_step_end(RunContext& c) override;
  void on_epoch_end(RunContext& c) override;

 private:
  void draw(const RunContext& c, bool final);
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point last_draw_;
  int64_t last_decile_ = -1;
};

/// Saves a checkpoint (Model::checkpoint) every `every_steps` steps and/or at the end of every
/// `every_epochs` epochs into `dir` as ckpt-<step>.spore, keeping the newest `keep` files in the
/// directory (older runs' included). `decorate`, when given, adds entries before each save
/// (e.g. the data settings a resume must match). A step save due on an epoch's last step is
/// taken at that epoch's end, after validation and the other callbacks' epoch end, so it holds
/// their decisions; if one of them throws, that save is not written and the previous file is
/// the one to resume from (a file written before the epoch end would resume past it).
class CheckpointCallback : public Callback {
 public:
  CheckpointCallback(std::string dir, int64_t every_steps, int64_t every_epochs, int keep = 3,
                     std::function<void(Checkpoint&)> decorate = nullptr);
  void on_train_begin(RunContext& c) override;
  void on_step_end(RunContext& c) override;
  void on_epoch_end(RunContext& c) override;
  bool saves_checkpoints() const override { return true; }
  /// The path of the last checkpoint this callback wrote ("" before the first).
  const std::string& last_saved() const { return last_saved_; }
  /// The newest checkpoint (highest step) in `dir`, or "" when there is none.
  static std::string latest(const std::string& dir);

 private:
  void save(RunContext& c);
  std::string dir_;
  int64_t every_steps_, every_epochs_;
  int keep_;
  std::function<void(Checkpoint&)> decorate_;
  std::string last_saved_;
  bool save_at_epoch_end_ = false;  // a step save due on an epoch's last step, deferred
};

/// Stops fit when `monitor` (a key of eval_metrics, else train_metrics, e.g. "loss" or
/// "accuracy") has not improved by `min_delta` for `patience` epochs. Its best value, bad-epoch
/// count and stopping epoch are checkpointed; resuming from a checkpoint written when it
/// stopped ends the resumed fit at once, as the uninterrupted run ended.
class EarlyStopping : public Callback {
 public:
  EarlyStopping(std::string monitor, int64_t patience, double min_delta = 0, bool maximize = false);
  void on_train_begin(RunContext& c) override;
  void on_epoch_end(RunContext& c) override;
  int64_t stopped_epoch() const { return stopped_epoch_; }
  std::string state_name() const override { return "early_stopping"; }
  void save_state(Checkpoint& c, const std::string& prefix) const override;
  void load_state(const Checkpoint& c, const std::string& prefix) override;
  void check_state(const Checkpoint& c, const std::string& prefix) const override;

 private:
  std::string monitor_;
  int64_t patience_;
  double min_delta_;
  bool maximize_;
  double best_;
  int64_t bad_epochs_ = 0;
  int64_t stopped_epoch_ = -1;
  bool stop_at_begin_ = false;  // restored from a run that had stopped
};

/// Appends one JSON object per epoch (and a final one) to <dir>/metrics.jsonl: epoch, step,
/// loss, samples_per_second, seconds, lr and every metric.
class MetricsLog : public Callback {
 public:
  explicit MetricsLog(std::string dir);
  void on_epoch_end(RunContext& c) override;
  void on_train_end(RunContext& c) override;

 private:
  void write(const std::string& line);
  std::string path_;
};

/// Runs `fn(epoch)` at the end of each epoch: the hook for learning-rate schedules
/// (e.g. `[&](int64_t) { schedule.step(); }`).
class EpochHook : public Callback {
 public:
  explicit EpochHook(std::function<void(RunContext&)> fn) : fn_(std::move(fn)) {}
  void on_epoch_end(RunContext& c) override { fn_(c); }

 private:
  std::function<void(RunContext&)> fn_;
};

/// Reduces the learning rate when `monitor` stops improving (MindSpore's ReduceLROnPlateau
/// callback): feeds the epoch's value to `schedule` at the end of each epoch. The rate is the
/// optimizer's tensor, so a compiled step sees the change without retracing. The schedule's
/// state (best value, bad epochs, cooldown) is checkpointed; the rate itself is the optimizer's.
class LROnPlateau : public Callback {
 public:
  LROnPlateau(optim::ReduceLROnPlateau& schedule, std::string monitor = "loss")
      : schedule_(schedule), monitor_(std::move(monitor)) {}
  void on_epoch_end(RunContext& c) override;
  std::string state_name() const override { return "lr_on_plateau"; }
  void save_state(Checkpoint& c, const std::string& prefix) const override;
  void load_state(const Checkpoint& c, const std::string& prefix) override;
  void check_state(const Checkpoint& c, const std::string& prefix) const override;

 private:
  optim::ReduceLROnPlateau& schedule_;
  std::string monitor_;
};

/// Looks up a monitored value: eval_metrics first, then train_metrics; nullopt when fit reports
/// no such metric. The value itself may be NaN (a diverged run).
std::optional<double> monitored_value(const RunContext& c, const std::string& key);

}  // namespace spore::train
