// SPDX-License-Identifier: Apache-2.0
// Resuming through DatasetBatches (the pipeline-backed source): a run interrupted mid-epoch,
// checkpointed, and continued by a fresh model, optimizer and pipeline gives bit-identical
// losses, parameters, optimizer state and epoch metrics to the uninterrupted run.
#include <gtest/gtest.h>
#include <spore/data/random.h>
#include <spore/data/sources.h>
#include <spore/data/transforms.h>
#include <spore/nn.h>
#include <spore/optim/optim.h>
#include <spore/spore.h>
#include <spore/train/dataset_batches.h>
#include <spore/train/model.h>

#include <filesystem>
#include <memory>

#include <unistd.h>

#include "train_test_util.h"

namespace spore::train {
namespace {

namespace fs = std::filesystem;
using testing::bitwise_equal;
using testing::ce;
using testing::ModeGuard;
using testing::toy_data;

// Shuffled by (seed, epoch), every sample jittered by noise drawn from its own key (seed,
// epoch, sample index), two map workers, and a partial last batch (200 = 6 * 32 + 8).
std::shared_ptr<const data::Dataset> pipeline() {
  // Drawn once: drawing them re-seeds the generator, which would undo a restored state.
  static const std::pair<Tensor, Tensor> xy = toy_data(200, 1);
  const auto& [x, y] = xy;
  auto jitter = data::per_sample(
      "jitter",
      [](const Tensor& sample, uint64_t key) {
        Tensor out = sample.contiguous().clone();
        data::KeyedRandom r(key);
        float* p = out.data<float>();
        for (int64_t i = 0; i < out.numel(); ++i) p[i] += static_cast<float>(r.uniform(-0.3, 0.3));
        return out;
      },
      /*seed=*/9);
  return data::from_tensors({x, y})->shuffle(200, /*seed=*/3)->map({jitter}, 0, /*workers=*/2)->batch(32)->prefetch(2);
}
constexpr int64_t kStepsPerEpoch = 7;

// Dropout makes the generator's state part of what a resume must restore.
std::unique_ptr<nn::SequentialCell> make_net(uint64_t seed) {
  manual_seed(seed);
  auto net = std::make_unique<nn::SequentialCell>();
  net->add(std::make_unique<nn::Dense>(6, 16));
  net->add(std::make_unique<nn::ReLU>());
  net->add(std::make_unique<nn::Dropout>(0.2));
  net->add(std::make_unique<nn::Dense>(16, 3));
  return net;
}

struct ResumeRun {
  std::vector<double> losses;  // per step
  std::vector<std::map<std::string, double>> epoch_metrics;
  FitResult result;
  std::vector<std::pair<std::string, Tensor>> params, optim_state;
};

struct Recorder : Callback {
  int64_t stop_at = -1;
  std::string save_to;
  std::vector<double> losses;
  std::vector<std::map<std::string, double>> epochs;
  void on_step_end(RunContext& c) override {
    losses.push_back(c.loss);
    if (c.global_step == stop_at) {
      c.model->save_checkpoint(save_to);
      c.stop = true;
    }
  }
  void on_epoch_end(RunContext& c) override {
    if (!c.stop) epochs.push_back(c.train_metrics);
  }
};

// Trains a network built under `init_seed` for `epochs` epochs: from scratch, or continuing
// `resume_from`; with `stop_at` > 0 it saves a checkpoint to `save_to` at that step and stops.
ResumeRun run(Mode mode, int64_t epochs, uint64_t init_seed, const std::string& resume_from = "", int64_t stop_at = -1,
              const std::string& save_to = "") {
  ModeGuard guard(mode);
  DatasetBatches data(pipeline());
  auto net = make_net(init_seed);
  optim::Adam opt(net->parameters(), {.lr = 0.01});
  Model model(*net, ce, opt);
  if (!resume_from.empty()) model.load_checkpoint(resume_from);
  Recorder rec;
  rec.stop_at = stop_at;
  rec.save_to = save_to;
  ResumeRun r;
  r.result = model.fit(epochs, data, {&rec});
  r.losses = rec.losses;
  r.epoch_metrics = rec.epochs;
  for (auto& [n, t] : net->state_dict()) r.params.emplace_back(n, t.clone());
  r.optim_state = opt.state_dict();
  return r;
}

TEST(DatasetResume, ThePipelineDependsOnTheEpochAlone) {
  // What makes the resume test meaningful: each epoch reads other batches (order and noise),
  // and one epoch read twice gives the same ones, prefetch and workers notwithstanding.
  DatasetBatches a(pipeline()), b(pipeline());
  EXPECT_EQ(a.batches_per_epoch(), kStepsPerEpoch);
  a.start_epoch(1, /*skip=*/3);
  b.start_epoch(1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(b.next().has_value());
  auto x = a.next(), y = b.next();
  ASSERT_TRUE(x && y);
  EXPECT_TRUE(bitwise_equal({{"x", x->x}, {"y", x->y}}, {{"x", y->x}, {"y", y->y}}));
  a.start_epoch(0);
  b.start_epoch(1);
  x = a.next();
  y = b.next();
  EXPECT_FALSE(bitwise_equal({{"x", x->x}}, {{"x", y->x}}));
}

TEST(DatasetResume, InterruptedMidEpochMatchesTheUninterruptedRun) {
  const fs::path dir = fs::temp_directory_path() / ("spore_dsresume_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string ckpt = (dir / "mid.spore").string();
  const int64_t kEpochs = 3, kCut = 10;  // step 10 is batch 3 of epoch 1
  for (Mode mode : {Mode::PyNative, Mode::Graph}) {
    SCOPED_TRACE(mode == Mode::Graph ? "graph" : "pynative");
    const ResumeRun full = run(mode, kEpochs, /*init_seed=*/7);
    ASSERT_EQ(full.losses.size(), static_cast<size_t>(kEpochs * kStepsPerEpoch));
    const ResumeRun first = run(mode, kEpochs, 7, "", kCut, ckpt);
    ASSERT_EQ(first.losses.size(), static_cast<size_t>(kCut));
    for (int64_t i = 0; i < kCut; ++i) ASSERT_EQ(first.losses[static_cast<size_t>(i)], full.losses[static_cast<size_t>(i)]);
    // A fresh network built from another seed, a fresh optimizer and pipeline: everything that
    // matters comes from the checkpoint.
    const ResumeRun rest = run(mode, kEpochs, /*init_seed=*/99, ckpt);
    ASSERT_EQ(rest.losses.size(), full.losses.size() - kCut);
    for (size_t i = 0; i < rest.losses.size(); ++i) EXPECT_EQ(rest.losses[i], full.losses[kCut + i]) << "step " << kCut + i + 1;
    EXPECT_TRUE(bitwise_equal(rest.params, full.params));
    EXPECT_TRUE(bitwise_equal(rest.optim_state, full.optim_state));
    // The interrupted epoch's metrics cover the whole epoch, its first three steps included.
    ASSERT_EQ(rest.epoch_metrics.size(), 2u);
    EXPECT_EQ(rest.epoch_metrics[0], full.epoch_metrics[1]);
    EXPECT_EQ(rest.epoch_metrics[1], full.epoch_metrics[2]);
    EXPECT_EQ(rest.result.train_loss, full.result.train_loss);
    EXPECT_EQ(rest.result.steps, full.result.steps);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace spore::train
