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

PlateauRun run_plateau(int64_t epochs, const fs::path& dir, Resume resume, const std::string& from = "") {
  Harness h;
  optim::ReduceLROnPlateau plateau(h.opt, plateau_options());
  LROnPlateau on_plateau(plateau, "loss");
  if (resume != Resume::Fresh) {
    Checkpoint c = load_checkpoint(from);
    h.model.restore(resume == Resume::Full ? c : without_callback_state(c));
  }
  // The checkpoint callback comes first in the list: fit still runs it after the plateau
  // callback, so the epoch's checkpoint holds the epoch's reduction.
  CheckpointCallback ck(dir.string(), 0, /*every_epochs=*/1, /*keep=*/100);
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
  // Outside fit a checkpoint holds no callback state, but one restored carries it on.
  EXPECT_FALSE(h.model.checkpoint().has_prefix("callback."));
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

}  // namespace
}  // namespace spore::train
