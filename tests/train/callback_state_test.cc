// SPDX-License-Identifier: Apache-2.0
// Callback state in checkpoints: a run with LROnPlateau or EarlyStopping, interrupted and
// resumed from a checkpoint, decides exactly as the uninterrupted run; the same checkpoint with
// the callback entries removed (a file from before they were saved) still loads, and decides
// differently, which shows the state is what makes the difference.
#include <gtest/gtest.h>
#include <spore/optim/optim.h>
#include <spore/spore.h>
#include <spore/train/model.h>

#include <filesystem>
#include <fstream>
#include <cmath>
#include <limits>
#include <memory>

#include <unistd.h>

#include "error_matchers.h"
#include "train_test_util.h"

namespace spore::train {
namespace {

namespace fs = std::filesystem;
using testing::ce;
using testing::TinyNet;
using testing::toy_data;

// Everything a run needs, built in a fixed order so every run starts from the same weights.
struct Harness {
  struct Seeded {
    explicit Seeded(uint64_t s) { manual_seed(s); }
  };
  std::pair<Tensor, Tensor> xy = toy_data(200, 1);
  Seeded seeded{7};
  TinyNet net;
  optim::SGD opt{net.parameters(), {.lr = 0.1, .momentum = 0.9}};
  Model model{net, ce, opt};
  TensorBatches data{xy.first, xy.second, 32, /*shuffle=*/true, /*seed=*/5};
};

struct EpochLog : Callback {
  void on_epoch_end(RunContext& c) override {
    losses.push_back(c.train_metrics.at("loss"));
    lrs.push_back(c.model->optimizer().lr());
  }
  std::vector<double> losses, lrs;
};

// The checkpoint as a file from before callbacks saved state would be.
Checkpoint without_callback_state(Checkpoint c) {
  std::erase_if(c.tensors, [](const auto& e) { return e.first.rfind("callback.", 0) == 0; });
  std::erase_if(c.ints, [](const auto& e) { return e.first.rfind("callback.", 0) == 0; });
  std::erase_if(c.texts, [](const auto& e) { return e.first.rfind("callback.", 0) == 0; });
  return c;
}

enum class Resume { Fresh, Full, WithoutCallbackState };

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("spore_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// Threshold 0.02 (absolute): after epoch 2 no epoch improves by that much, so the bad-epoch count
// and the cooldown alone decide each reduction.
optim::PlateauOptions plateau_options() {
  return {.factor = 0.5, .patience = 1, .threshold = 0.02, .relative_threshold = false, .cooldown = 2};
}

struct PlateauRun {
  std::vector<double> losses, lrs;
  optim::ReduceLROnPlateau::State state;
};

PlateauRun run_plateau(int64_t epochs, const fs::path& dir, Resume resume, const std::string& from = "",
                       int64_t every_steps = 0, int64_t every_epochs = 1) {
  Harness h;
  optim::ReduceLROnPlateau plateau(h.opt, plateau_options());
  LROnPlateau on_plateau(plateau, "loss");
  if (resume != Resume::Fresh) {
    Checkpoint c = load_checkpoint(from);
    h.model.restore(resume == Resume::Full ? c : without_callback_state(c));
  }
  // The checkpoint callback comes first in the list: fit still runs it after the plateau
  // callback, so the epoch's checkpoint holds the epoch's reduction.
  CheckpointCallback ck(dir.string(), every_steps, every_epochs, /*keep=*/100);
  EpochLog log;
  h.model.fit(epochs, h.data, {&ck, &on_plateau, &log});
  return {log.losses, log.lrs, plateau.state()};
}

std::string ckpt_at(const fs::path& dir, int64_t step) { return (dir / ("ckpt-" + std::to_string(step) + ".spore")).string(); }

TEST(CallbackState, LROnPlateauResumesExactly) {
  TempDir a("plateau_a"), b("plateau_b");
  // 200 samples / 32 -> 7 batches an epoch. The rate drops at the end of epochs 4, 8 and 12
  // (0-based); the cut falls right after the first drop, so the checkpoint must hold the lowered
  // rate and the cooldown (a fresh plateau would drop one epoch early).
  const int64_t kEpochs = 14, kCut = 5, kSteps = 7;
  PlateauRun full = run_plateau(kEpochs, a.path, Resume::Fresh);
  ASSERT_EQ(full.lrs.size(), static_cast<size_t>(kEpochs));
  // The schedule the comment describes: drops before and after the cut, or the test proves nothing.
  const std::vector<double> want = {0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025, 0.0125, 0.0125};
  EXPECT_EQ(full.lrs, want);

  // Interrupted after kCut epochs, then resumed from that epoch's checkpoint by new objects.
  PlateauRun first = run_plateau(kCut, b.path, Resume::Fresh);
  ASSERT_EQ(first.lrs.size(), static_cast<size_t>(kCut));
  const std::string cut = ckpt_at(b.path, kCut * kSteps);
  ASSERT_TRUE(fs::exists(cut));
  const Checkpoint saved = load_checkpoint(cut);
  EXPECT_EQ(saved.texts.at("callback.lr_on_plateau.monitor"), "loss");
  EXPECT_EQ(saved.get_int("callback.lr_on_plateau.last_step"), kCut);
  EXPECT_EQ(saved.get_int("callback.lr_on_plateau.num_bad_steps"), first.state.num_bad_steps);
  EXPECT_EQ(saved.get_double("callback.lr_on_plateau.best"), first.state.best);
  EXPECT_EQ(saved.get_int("callback.lr_on_plateau.cooldown_counter"), 2);

  PlateauRun rest = run_plateau(kEpochs, b.path, Resume::Full, cut);
  ASSERT_EQ(rest.lrs.size(), static_cast<size_t>(kEpochs - kCut));
  for (int64_t e = kCut; e < kEpochs; ++e) {
    EXPECT_EQ(rest.losses[static_cast<size_t>(e - kCut)], full.losses[static_cast<size_t>(e)]) << "epoch " << e;
    EXPECT_EQ(rest.lrs[static_cast<size_t>(e - kCut)], full.lrs[static_cast<size_t>(e)]) << "epoch " << e;
  }
  EXPECT_EQ(rest.state.best, full.state.best);
  EXPECT_EQ(rest.state.num_bad_steps, full.state.num_bad_steps);
  EXPECT_EQ(rest.state.cooldown_counter, full.state.cooldown_counter);
  EXPECT_EQ(rest.state.last_step, full.state.last_step);

  // Without the callback entries the file still loads, the plateau restarts from scratch and
  // the rates part from the uninterrupted run's.
  PlateauRun blind = run_plateau(kEpochs, b.path, Resume::WithoutCallbackState, cut);
  ASSERT_EQ(blind.lrs.size(), rest.lrs.size());
  EXPECT_NE(blind.lrs, rest.lrs);
}

struct EarlyRun {
  std::vector<double> losses;
  FitResult result;
  int64_t stopped_epoch;
};

// min_delta 0.01: the loss stops improving by that much after epoch 2, so with patience 2 the
// run stops at the end of epoch 5.
EarlyRun run_early(const fs::path& dir, Resume resume, const std::string& from = "") {
  Harness h;
  EarlyStopping early("loss", /*patience=*/2, /*min_delta=*/0.01);
  if (resume != Resume::Fresh) {
    Checkpoint c = load_checkpoint(from);
    h.model.restore(resume == Resume::Full ? c : without_callback_state(c));
  }
  CheckpointCallback ck(dir.string(), 0, /*every_epochs=*/1, /*keep=*/100);
  EpochLog log;
  FitResult r = h.model.fit(30, h.data, {&ck, &early, &log});
  return {log.losses, r, early.stopped_epoch()};
}

TEST(CallbackState, EarlyStoppingResumesExactly) {
  TempDir a("early_a"), b("early_b");
  EarlyRun full = run_early(a.path, Resume::Fresh);
  ASSERT_EQ(full.stopped_epoch, 5);
  ASSERT_EQ(full.losses.size(), 6u);
  // Resumed after epoch 3 (one bad epoch counted): it stops where the uninterrupted run stopped.
  const std::string cut = ckpt_at(a.path, 4 * 7);
  EXPECT_EQ(load_checkpoint(cut).get_int("callback.early_stopping.bad_epochs"), 1);
  EarlyRun rest = run_early(b.path, Resume::Full, cut);
  EXPECT_EQ(rest.stopped_epoch, 5);
  ASSERT_EQ(rest.losses.size(), 2u);
  EXPECT_EQ(rest.losses[0], full.losses[4]);
  EXPECT_EQ(rest.losses[1], full.losses[5]);
  EXPECT_EQ(rest.result.steps, full.result.steps);
  // Without its state the callback starts counting again and stops two epochs later.
  EarlyRun blind = run_early(b.path, Resume::WithoutCallbackState, cut);
  EXPECT_EQ(blind.stopped_epoch, 7);
  // Resumed from the checkpoint written as it stopped, fit runs no further epoch, as the
  // uninterrupted run ran none.
  EarlyRun after = run_early(b.path, Resume::Full, ckpt_at(a.path, 6 * 7));
  EXPECT_EQ(after.result.epochs_run, 0);
  EXPECT_EQ(after.result.steps, 6 * 7);
  EXPECT_EQ(after.stopped_epoch, 5);
}

TEST(CallbackState, NamesAndErrors) {
  TempDir dir("cbnames");
  Harness h;
  // Two callbacks of one kind get their own entries, numbered in list order.
  EarlyStopping by_loss("loss", 5), by_accuracy("accuracy", 5, 0, /*maximize=*/true);
  CheckpointCallback ck(dir.path.string(), 0, 1);
  h.model.fit(1, h.data, {&by_loss, &by_accuracy, &ck});
  const Checkpoint c = load_checkpoint(ck.last_saved());
  EXPECT_EQ(c.texts.at("callback.early_stopping.monitor"), "loss");
  EXPECT_EQ(c.texts.at("callback.early_stopping_1.monitor"), "accuracy");
  // Between fits a checkpoint holds what one at the last fit's end held; a restored one's
  // entries replace those.
  EXPECT_EQ(h.model.checkpoint().texts.at("callback.early_stopping_1.monitor"), "accuracy");
  Model untouched(h.net, ce, h.opt);
  EXPECT_FALSE(untouched.checkpoint().has_prefix("callback."));
  h.model.restore(c);
  EXPECT_EQ(h.model.checkpoint().texts.at("callback.early_stopping_1.monitor"), "accuracy");
  // Resuming with the callbacks in another order hands each the other's state: refused, and
  // the state stays pending for a fit with the right order.
  EXPECT_ERROR(h.model.fit(2, h.data, {&by_accuracy, &by_loss}),
               "[EarlyStopping] the checkpoint's state monitors 'loss' but this callback monitors 'accuracy'");
  EXPECT_EQ(h.model.global_step(), 7);
  EarlyStopping again_loss("loss", 5), again_accuracy("accuracy", 5, 0, true);
  FitResult r = h.model.fit(2, h.data, {&again_loss, &again_accuracy});
  EXPECT_EQ(r.epochs_run, 1);
  EXPECT_EQ(h.model.global_step(), 14);
  EXPECT_ERROR(h.model.fit(2, h.data, {nullptr}), "callback 0 is null");
}

// A step checkpoint that falls on an epoch's last step is written after that epoch's end ran,
// so the resumed run neither skips nor repeats the epoch's plateau decision.
TEST(CallbackState, StepCheckpointOnEpochBoundaryHoldsTheEpochEnd) {
  TempDir a("boundary_a"), b("boundary_b");
  const int64_t kEpochs = 14, kSteps = 7;
  PlateauRun full = run_plateau(kEpochs, a.path, Resume::Fresh);
  // Every 35 steps: step 35 is the last of epoch 4 (0-based), where the rate first drops.
  PlateauRun first = run_plateau(6, b.path, Resume::Fresh, "", /*every_steps=*/5 * kSteps, /*every_epochs=*/0);
  const std::string cut = ckpt_at(b.path, 5 * kSteps);
  ASSERT_TRUE(fs::exists(cut));
  const Checkpoint saved = load_checkpoint(cut);
  EXPECT_EQ(saved.get_int("epoch"), 5);
  EXPECT_EQ(saved.get_int("batch_in_epoch"), 0);
  EXPECT_EQ(saved.get_int("callback.lr_on_plateau.last_step"), 5);  // epoch 4's end is in it
  EXPECT_EQ(saved.get_int("callback.lr_on_plateau.cooldown_counter"), 2);
  PlateauRun rest = run_plateau(kEpochs, b.path, Resume::Full, cut, 5 * kSteps, 0);
  ASSERT_EQ(rest.lrs.size(), static_cast<size_t>(kEpochs - 5));
  for (int64_t e = 5; e < kEpochs; ++e) {
    EXPECT_EQ(rest.losses[static_cast<size_t>(e - 5)], full.losses[static_cast<size_t>(e)]) << "epoch " << e;
    EXPECT_EQ(rest.lrs[static_cast<size_t>(e - 5)], full.lrs[static_cast<size_t>(e)]) << "epoch " << e;
  }
  EXPECT_EQ(rest.state.last_step, full.state.last_step);
}

// Stops fit after `at` global steps, inside an epoch.
struct StopAt : Callback {
  explicit StopAt(int64_t at) : at_(at) {}
  void on_step_end(RunContext& c) override {
    if (c.global_step == at_) c.stop = true;
  }
  void on_epoch_end(RunContext& c) override { complete.push_back(c.epoch_complete); }
  int64_t at_;
  std::vector<bool> complete;
};

// A fit stopped inside an epoch runs its epoch end, but plateau and early stopping skip the
// partial epoch; the checkpoint then holds their state from the last whole epoch, and the
// resumed run finishes the epoch and decides as the uninterrupted run did.
TEST(CallbackState, StopInsideAnEpochLeavesPerEpochStateAlone) {
  TempDir a("partial_a"), b("partial_b");
  const int64_t kEpochs = 8;
  PlateauRun full = run_plateau(kEpochs, a.path, Resume::Fresh);
  Checkpoint cut;
  {
    Harness h;
    optim::ReduceLROnPlateau plateau(h.opt, plateau_options());
    LROnPlateau on_plateau(plateau, "loss");
    EarlyStopping early("loss", 100);
    StopAt stop(4 * 7 + 3);  // three batches into epoch 4
    CheckpointCallback ck(b.path.string(), 0, 1, 100);
    h.model.fit(kEpochs, h.data, {&ck, &stop, &on_plateau, &early});
    EXPECT_EQ(stop.complete, (std::vector<bool>{true, true, true, true, false}));
    EXPECT_EQ(plateau.state().last_step, 4);
    cut = load_checkpoint(ck.last_saved());
    EXPECT_EQ(cut.get_int("batch_in_epoch"), 3);
    EXPECT_EQ(cut.get_int("callback.lr_on_plateau.last_step"), 4);
  }
  const std::string path = (b.path / "partial.spore").string();
  save_checkpoint(path, cut);
  PlateauRun rest = run_plateau(kEpochs, b.path, Resume::Full, path);
  ASSERT_EQ(rest.lrs.size(), static_cast<size_t>(kEpochs - 4));
  for (int64_t e = 5; e < kEpochs; ++e)
    EXPECT_EQ(rest.lrs[static_cast<size_t>(e - 4)], full.lrs[static_cast<size_t>(e)]) << "epoch " << e;
  EXPECT_EQ(rest.lrs[0], full.lrs[4]);
  EXPECT_EQ(rest.losses[0], full.losses[4]);  // the partial epoch's totals carried on
  EXPECT_EQ(rest.state.last_step, full.state.last_step);
  EXPECT_EQ(rest.state.best, full.state.best);
}

// A fit that a callback stopped inside an epoch leaves the epoch's totals pending: a second fit
// on the same model finishes the epoch with the uninterrupted run's mean loss, and a checkpoint
// taken between the two fits holds them.
TEST(CallbackState, SecondFitContinuesAStoppedEpoch) {
  TempDir a("second_a");
  const int64_t kEpochs = 6;
  PlateauRun full = run_plateau(kEpochs, a.path, Resume::Fresh);
  Harness h;
  optim::ReduceLROnPlateau plateau(h.opt, plateau_options());
  LROnPlateau on_plateau(plateau, "loss");
  StopAt stop(4 * 7 + 3);
  TempDir logs("second_logs");
  MetricsLog mlog(logs.path.string());
  h.model.fit(kEpochs, h.data, {&stop, &on_plateau, &mlog});
  ASSERT_EQ(h.model.global_step(), 4 * 7 + 3);
  {  // the stopped epoch is logged as incomplete, the whole ones as complete
    std::ifstream in(logs.path / "metrics.jsonl");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_EQ(lines.size(), 6u);  // five epoch lines and the end
    EXPECT_NE(lines[3].find("\"complete\": true"), std::string::npos) << lines[3];
    EXPECT_NE(lines[4].find("\"complete\": false"), std::string::npos) << lines[4];
  }
  const Checkpoint between = h.model.checkpoint();
  EXPECT_EQ(between.get_int("epoch_progress.loss_count"), 3 * 32);
  EXPECT_EQ(between.get_int("callback.lr_on_plateau.last_step"), 4);
  EpochLog log;
  h.model.fit(kEpochs, h.data, {&on_plateau, &log});
  ASSERT_EQ(log.losses.size(), 2u);
  EXPECT_EQ(log.losses[0], full.losses[4]);
  EXPECT_EQ(log.losses[1], full.losses[5]);
  EXPECT_EQ(log.lrs, (std::vector<double>{full.lrs[4], full.lrs[5]}));
  // The checkpoint taken between the fits resumes exactly with new objects too.
  Harness fresh;
  optim::ReduceLROnPlateau plateau2(fresh.opt, plateau_options());
  LROnPlateau on_plateau2(plateau2, "loss");
  fresh.model.restore(between);
  EpochLog log2;
  fresh.model.fit(kEpochs, fresh.data, {&on_plateau2, &log2});
  EXPECT_EQ(log2.losses, log.losses);
  EXPECT_EQ(log2.lrs, log.lrs);
  EXPECT_EQ(plateau2.state().best, plateau.state().best);
  // restore() while a fit runs is refused.
  struct RestoreInside : Callback {
    Model* m;
    Checkpoint c;
    void on_step_end(RunContext&) override { m->restore(c); }
  } inside;
  inside.m = &fresh.model;
  inside.c = between;
  EXPECT_ERROR(fresh.model.fit(kEpochs + 1, fresh.data, {&inside}), "[Model::restore] called while fit runs");
}

// The checkpoint a fresh run writes at step 3, inside its first epoch (7 batches).
Checkpoint checkpoint_at_step_3(const TempDir& dir) {
  Harness h;
  CheckpointCallback ck(dir.path.string(), 3, 0);
  h.model.fit(1, h.data, {&ck});
  return load_checkpoint((dir.path / "ckpt-3.spore").string());
}

// A diverged run (an inf or NaN loss in the epoch so far) is still resumable: the sum is its
// true state, only the counts are checked.
TEST(CallbackState, NonFiniteLossSumsResume) {
  TempDir dir("diverged");
  Checkpoint c = checkpoint_at_step_3(dir);
  const double inf = std::numeric_limits<double>::infinity();
  c.set_double("epoch_progress.loss_sum", inf);
  bool found = false;
  for (auto& [name, t] : c.tensors)
    if (name == "epoch_progress.metric.loss") {
      t = ops::from_vector(std::vector<double>{inf, 96});
      found = true;
    }
  ASSERT_TRUE(found);
  Harness h;
  h.model.restore(c);
  EpochLog log;
  // A diverged metric is a bad epoch for early stopping (patience 0: it stops), not an error.
  EarlyStopping early("loss", 0);
  h.model.fit(3, h.data, {&log, &early});
  ASSERT_EQ(log.losses.size(), 1u);
  EXPECT_TRUE(std::isinf(log.losses[0]));
  EXPECT_EQ(early.stopped_epoch(), 0);
  LossMetric loss;
  loss.load_state({std::nan(""), 2});
  EXPECT_TRUE(std::isnan(loss.value()));
}

// The second callback refusing its state leaves the first one as it was.
TEST(CallbackState, RefusedResumeChangesNoCallback) {
  TempDir dir("refuse");
  Harness h;
  // Patience 0 with an unreachable min_delta: stops at the end of epoch 1.
  EarlyStopping quick("loss", 0, 1e9), by_accuracy("accuracy", 5, 0, true);
  CheckpointCallback ck(dir.path.string(), 0, 1);
  h.model.fit(3, h.data, {&quick, &by_accuracy, &ck});
  ASSERT_EQ(quick.stopped_epoch(), 1);
  h.model.restore(load_checkpoint(ck.last_saved()));
  EarlyStopping fresh("loss", 0, 1e9), wrong("loss", 5);
  EXPECT_ERROR(h.model.fit(5, h.data, {&fresh, &wrong}),
               "[EarlyStopping] the checkpoint's state monitors 'accuracy' but this callback monitors 'loss'");
  EXPECT_EQ(fresh.stopped_epoch(), -1);
  // The direction is checked too, not only the name.
  EarlyStopping fresh2("loss", 0, 1e9), minimizing("accuracy", 5, 0, /*maximize=*/false);
  EXPECT_ERROR(h.model.fit(5, h.data, {&fresh2, &minimizing}),
               "the checkpoint's state maximizes 'accuracy' but this callback minimizes it");
  EXPECT_EQ(fresh2.stopped_epoch(), -1);
}

// LROnPlateau's saved state says which way it measures: a schedule of the other mode refuses it.
TEST(CallbackState, LROnPlateauChecksTheScheduleMode) {
  TempDir dir("plateau_mode");
  Checkpoint saved;
  {
    Harness h;
    optim::ReduceLROnPlateau plateau(h.opt, plateau_options());
    LROnPlateau on_plateau(plateau, "loss");
    CheckpointCallback ck(dir.path.string(), 0, 1);
    h.model.fit(2, h.data, {&ck, &on_plateau});
    saved = load_checkpoint(ck.last_saved());
  }
  EXPECT_EQ(saved.ints.at("callback.lr_on_plateau.maximize"), 0);
  Harness h;
  optim::PlateauOptions o = plateau_options();
  o.maximize = true;
  optim::ReduceLROnPlateau maximizing(h.opt, o);
  LROnPlateau on_plateau(maximizing, "loss");
  h.model.restore(saved);
  EXPECT_ERROR(h.model.fit(4, h.data, {&on_plateau}),
               "[LROnPlateau] the checkpoint's state minimizes 'loss' but this schedule maximizes it");
}

// A corrupted epoch_progress entry is refused before any hook runs, and stays pending: a
// second fit refuses it again instead of resuming with zeroed totals.
TEST(CallbackState, BadEpochProgressRefusedAtFitStart) {
  TempDir dir("badprogress");
  Checkpoint c = checkpoint_at_step_3(dir);
  ASSERT_EQ(c.get_int("batch_in_epoch"), 3);
  c.ints["epoch_progress.loss_count"] = -5;
  Harness h;
  h.model.restore(c);
  StopAt probe(-1);
  EXPECT_ERROR(h.model.fit(1, h.data, {&probe}), "counts -5 samples; a count >= 0 is expected");
  EXPECT_TRUE(probe.complete.empty());
  EXPECT_EQ(h.model.global_step(), 3);
  EXPECT_ERROR(h.model.fit(1, h.data, {&probe}), "counts -5 samples; a count >= 0 is expected");
  EXPECT_EQ(h.model.global_step(), 3);
}

TEST(CallbackState, CountersAndMetricStatesChecked) {
  TempDir dir("counters");
  Harness h;
  EarlyStopping early("loss", 5);
  CheckpointCallback ck(dir.path.string(), 0, 1);
  h.model.fit(1, h.data, {&early, &ck});
  Checkpoint c = load_checkpoint(ck.last_saved());
  c.ints["callback.early_stopping.bad_epochs"] = -3;
  h.model.restore(c);
  EarlyStopping again("loss", 5);
  EXPECT_ERROR(h.model.fit(2, h.data, {&again}), "'callback.early_stopping.bad_epochs' is -3, below 0");
  Accuracy acc;
  EXPECT_ERROR((acc.load_state({std::nan(""), 2})), "[Accuracy.load_state] a count is nan");
  EXPECT_ERROR((acc.load_state({3, 2})), "3 correct out of 2 samples");
  LossMetric loss;
  EXPECT_ERROR((loss.load_state({1.0, -1})), "a count is -1");
}

struct NamedState : Callback {
  explicit NamedState(std::string n) : n_(std::move(n)) {}
  std::string state_name() const override { return n_; }
  std::string n_;
};

TEST(CallbackState, StateNamesValidated) {
  Harness h;
  EarlyStopping e1("loss", 5), e2("loss", 5);
  NamedState clash("early_stopping_1"), dotted("early.stopping");
  EXPECT_ERROR(h.model.fit(1, h.data, {&e1, &e2, &clash}),
               "two callbacks save their state under 'callback.early_stopping_1.'");
  EXPECT_ERROR(h.model.fit(1, h.data, {&dotted}), "callback state name 'early.stopping' may hold only letters, digits, '_' and '-'");
  EXPECT_EQ(h.model.global_step(), 0);
  NamedState dashed("Early-Stopping");
  h.model.fit(1, h.data, {&dashed});
  EXPECT_EQ(h.model.global_step(), 7);
}

TEST(CallbackState, DuplicateMetricsRefused) {
  Harness h;
  EXPECT_ERROR((Model(h.net, ce, h.opt, {"accuracy", "loss", "accuracy"})),
               "[Model] metric 'accuracy' is listed twice (positions 0 and 2)");
}

// A user metric written before metrics had state: it compiles, and a resume resets it.
struct Counting : Metric {
  std::string name() const override { return "counting"; }
  void reset() override { n = 0; }
  void update(const Tensor&, const Tensor&, const Tensor&) override { ++n; }
  double value() const override { return static_cast<double>(n); }
  int64_t n = 0;
};

TEST(CallbackState, MetricWithoutStateResetsOnResume) {
  Counting m;
  m.n = 4;
  EXPECT_TRUE(m.state().empty());
  m.load_state(m.state());
  EXPECT_EQ(m.n, 0);
}

}  // namespace
}  // namespace spore::train
