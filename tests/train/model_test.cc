// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/nn/cell.h>
#include <spore/optim/optim.h>
#include <spore/spore.h>
#include <spore/train/model.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <unistd.h>

#include "error_matchers.h"
#include "train_test_util.h"

namespace spore::train {
namespace {

namespace fs = std::filesystem;
using testing::ce;
using testing::ModeGuard;
using testing::TinyNet;
using testing::toy_data;

struct TrainRun {
  std::vector<double> losses;
  std::vector<float> w1;
  FitResult result;
};

class LossLog : public Callback {
 public:
  void on_step_end(RunContext& c) override { losses.push_back(c.loss); }
  std::vector<double> losses;
};

TrainRun train_run(Mode mode, int64_t epochs, const std::string& resume_from = "", const std::string& save_dir = "",
              int64_t stop_after_steps = -1) {
  ModeGuard guard(mode);
  auto [x, y] = toy_data(200, 1);
  manual_seed(7);
  TinyNet net;
  optim::SGD opt(net.parameters(), {.lr = 0.05, .momentum = 0.9});
  Model model(net, ce, opt);
  if (!resume_from.empty()) model.load_checkpoint(resume_from);
  TensorBatches data(x, y, 32, /*shuffle=*/true, /*seed=*/5);
  LossLog log;
  struct StopAt : Callback {
    int64_t at;
    std::string dir;
    void on_step_end(RunContext& c) override {
      if (c.global_step == at) {
        c.model->save_checkpoint(dir + "/mid.spore");
        c.stop = true;
      }
    }
  } stop;
  stop.at = stop_after_steps;
  stop.dir = save_dir;
  std::vector<Callback*> cbs = {&log};
  if (stop_after_steps > 0) cbs.push_back(&stop);
  TrainRun r;
  r.result = model.fit(epochs, data, cbs);
  r.losses = log.losses;
  Tensor w = net.w1.contiguous();
  r.w1.assign(w.data<float>(), w.data<float>() + w.numel());
  return r;
}

TEST(Model, FitReducesLossAndLearns) {
  TrainRun r = train_run(Mode::PyNative, 5);
  ASSERT_EQ(r.losses.size(), 5u * 7u);  // 200 samples / 32 -> 7 batches per epoch
  EXPECT_LT(r.result.train_loss, 0.3);
  EXPECT_LT(r.losses.back(), r.losses.front() * 0.5);
  EXPECT_GT(r.result.train_metrics.at("accuracy"), 0.9);
  EXPECT_EQ(r.result.steps, 35);
  EXPECT_GT(r.result.samples_per_second, 0);
}

TEST(Model, GraphModeMatchesPyNativeAndCompilesOnce) {
  TrainRun eager = train_run(Mode::PyNative, 3);
  TrainRun graph = train_run(Mode::Graph, 3);
  ASSERT_EQ(eager.losses.size(), graph.losses.size());
  for (size_t i = 0; i < eager.losses.size(); ++i) EXPECT_NEAR(graph.losses[i], eager.losses[i], 1e-5) << i;
  for (size_t i = 0; i < eager.w1.size(); ++i) EXPECT_NEAR(graph.w1[i], eager.w1[i], 1e-5) << i;
  // Graph mode traced the step once.
  ModeGuard guard(Mode::Graph);
  auto [x, y] = toy_data(64, 1);
  TinyNet net;
  optim::SGD opt(net.parameters(), {.lr = 0.05});
  Model model(net, ce, opt);
  TensorBatches data(x, y, 32);
  model.fit(3, data);
  EXPECT_EQ(model.train_traces(), 1);
  // The learning rate is a tensor read by the compiled step: changing it needs no retrace and
  // takes effect (a zero rate leaves the weights unchanged).
  opt.set_lr(0.0);
  Tensor before = net.w1.clone();
  model.train_step(x.slice(0, 0, 32), y.slice(0, 0, 32));
  EXPECT_EQ(model.train_traces(), 1);
  EXPECT_TRUE(ops::all(ops::equal(before, net.w1)).item<bool>());
}

TEST(Model, ResumeReproducesTheUninterruptedRun) {
  const fs::path dir = fs::temp_directory_path() / ("spore_model_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (Mode mode : {Mode::PyNative, Mode::Graph}) {
    TrainRun full = train_run(mode, 3);
    TrainRun first = train_run(mode, 3, "", dir.string(), /*stop_after_steps=*/10);  // stops inside epoch 2
    ASSERT_EQ(first.losses.size(), 10u);
    TrainRun rest = train_run(mode, 3, (dir / "mid.spore").string());
    ASSERT_EQ(first.losses.size() + rest.losses.size(), full.losses.size());
    for (size_t i = 0; i < rest.losses.size(); ++i) EXPECT_EQ(rest.losses[i], full.losses[10 + i]) << i;
    EXPECT_EQ(rest.w1, full.w1);
  }
  fs::remove_all(dir);
}

TEST(Model, EvaluateAndCallbacks) {
  const fs::path dir = fs::temp_directory_path() / ("spore_cb_" + std::to_string(::getpid()));
  auto [x, y] = toy_data(96, 2);
  manual_seed(3);
  TinyNet net;
  optim::SGD opt(net.parameters(), {.lr = 0.05, .momentum = 0.9});
  Model model(net, ce, opt, {"accuracy", "top2_accuracy", "loss"});
  TensorBatches train(x, y, 32, true, 1), valid(x, y, 50);
  CheckpointCallback ckpt((dir / "ckpt").string(), /*every_steps=*/2, /*every_epochs=*/0, /*keep=*/2);
  MetricsLog log((dir / "logs").string());
  EarlyStopping early("loss", /*patience=*/0, /*min_delta=*/10.0);  // never improves by 10: stops after epoch 2
  FitResult r = model.fit(10, train, {&ckpt, &log, &early}, &valid);
  EXPECT_EQ(r.epochs_run, 2);
  EXPECT_EQ(early.stopped_epoch(), 1);
  EXPECT_EQ(r.steps, 6);
  EXPECT_TRUE(r.eval_metrics.count("top2_accuracy"));
  // Steps 2, 4, 6 were saved; the newest two are kept.
  EXPECT_FALSE(fs::exists(dir / "ckpt" / "ckpt-2.spore"));
  EXPECT_TRUE(fs::exists(dir / "ckpt" / "ckpt-4.spore"));
  EXPECT_EQ(CheckpointCallback::latest((dir / "ckpt").string()), (dir / "ckpt" / "ckpt-6.spore").string());
  std::ifstream in(dir / "logs" / "metrics.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_NE(line.find("\"eval_accuracy\": "), std::string::npos) << line;
    if (lines <= 2) {
      EXPECT_NE(line.find("\"event\": \"epoch\", \"complete\": true, "), std::string::npos) << line;
    }
  }
  EXPECT_EQ(lines, 3);  // two epochs and the end
  auto ev = model.evaluate(valid);
  EXPECT_DOUBLE_EQ(ev.at("accuracy"), r.eval_metrics.at("accuracy"));
  // A confusion matrix the caller owns, filled by the same pass (reset first: run twice, the
  // counts are one pass's): its diagonal is the accuracy, its rows the label counts.
  ConfusionMatrix cm(3);
  model.evaluate(valid, {&cm});
  ev = model.evaluate(valid, {&cm});
  const auto counts = cm.matrix().to_vector<int64_t>();
  ASSERT_EQ(counts.size(), 9u);
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), int64_t{0}), 96);
  EXPECT_DOUBLE_EQ(static_cast<double>(counts[0] + counts[4] + counts[8]) / 96.0, ev.at("accuracy"));
  EXPECT_DOUBLE_EQ(ev.at("confusion_accuracy"), ev.at("accuracy"));
  const auto labels = y.to_vector<int64_t>();
  EXPECT_EQ(counts[3] + counts[4] + counts[5], std::count(labels.begin(), labels.end(), int64_t{1}));
  fs::remove_all(dir);
}

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int ch; (ch = std::fgetc(f)) != EOF;) s += static_cast<char>(ch);
  return s;
}

// Off a terminal the progress bar writes plain lines (no carriage returns or escape codes): a few
// per epoch and the epoch's summary; the loss monitor one line every N steps.
TEST(Model, ProgressBarAndLossMonitorWritePlainLines) {
  auto [x, y] = toy_data(96, 2);
  manual_seed(4);
  TinyNet net;
  optim::SGD opt(net.parameters(), {.lr = 0.05});
  Model model(net, ce, opt);
  TensorBatches train(x, y, 16, true, 1);  // 6 steps an epoch
  std::FILE* bar_out = std::tmpfile();
  std::FILE* mon_out = std::tmpfile();
  ASSERT_NE(bar_out, nullptr);
  ASSERT_NE(mon_out, nullptr);
  ProgressBar bar(bar_out);
  LossMonitor monitor(4, mon_out);
  model.fit(2, train, {&bar, &monitor});
  const std::string b = read_all(bar_out), m = read_all(mon_out);
  std::fclose(bar_out);
  std::fclose(mon_out);
  EXPECT_EQ(b.find('\r'), std::string::npos) << b;
  EXPECT_EQ(b.find('\033'), std::string::npos) << b;
  EXPECT_NE(b.find("epoch 1/2  step 6/6"), std::string::npos) << b;
  EXPECT_NE(b.find("epoch 2/2  step 6/6"), std::string::npos) << b;
  EXPECT_NE(b.find("samples/s"), std::string::npos) << b;
  // Steps 4, 8 and 12 of the 12.
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 3) << m;
  EXPECT_NE(m.find("epoch 1 step 4 loss "), std::string::npos) << m;
  EXPECT_NE(m.find("epoch 2 step 12 loss "), std::string::npos) << m;
}

// The optimizer may hold a subset of the parameters (frozen layers) in groups of its own.
TEST(Model, FrozenParametersAndGroups) {
  auto [x, y] = toy_data(64, 4);
  manual_seed(5);
  TinyNet net;
  Tensor w1 = net.w1.clone(), b1 = net.b1.clone();
  // Only the second layer trains, with two groups in reverse order of the network's.
  optim::SGD opt(std::vector<optim::ParamGroup>{{{net.b2}, {{"lr", 0.5}}}, {{net.w2}, {}}}, {.lr = 0.1});
  for (Mode mode : {Mode::PyNative, Mode::Graph}) {
    ModeGuard guard(mode);
    Model model(net, ce, opt);
    Tensor w2 = net.w2.clone(), b2 = net.b2.clone();
    model.train_step(x, y);
    EXPECT_TRUE(ops::all(ops::equal(net.w1, w1)).item<bool>());  // frozen
    EXPECT_TRUE(ops::all(ops::equal(net.b1, b1)).item<bool>());
    // The update of each trained parameter is its own gradient times its group's rate.
    auto g = grad([&](const TensorTree& p) { return nn::functional_call(net, p, [&] { return ce(net(x), y); }); })(
        [&] {
          auto sd = net.parameter_tree();
          std::vector<std::pair<std::string, Tensor>> items;
          for (const auto& [k, v] : net.named_parameters()) items.emplace_back(k, k == "w2" ? w2 : k == "b2" ? b2 : v);
          std::vector<TensorTree::Item> tree;
          for (auto& [k, v] : items) tree.emplace_back(k, TensorTree(v));
          return TensorTree::dict(tree);
        }());
    Tensor want_w2 = w2 - g["w2"].tensor() * 0.1, want_b2 = b2 - g["b2"].tensor() * 0.5;
    EXPECT_LT(ops::amax(ops::abs(net.w2 - want_w2)).item<float>(), 1e-6f);
    EXPECT_LT(ops::amax(ops::abs(net.b2 - want_b2)).item<float>(), 1e-6f);
  }
}

TEST(Model, GradientClipping) {
  auto [x, y] = toy_data(64, 4);
  for (Mode mode : {Mode::PyNative, Mode::Graph}) {
    ModeGuard guard(mode);
    manual_seed(5);
    TinyNet net;
    optim::SGD opt(net.parameters(), {.lr = 1.0});
    Model model(net, ce, opt);
    model.clip_grad_norm(1e-3);
    std::vector<Tensor> before;
    for (const Tensor& p : net.parameters()) before.push_back(p.clone());
    model.train_step(x, y);
    // With lr 1 the update is the clipped gradient: its total norm is the bound.
    double sq = 0;
    auto params = net.parameters();
    for (size_t i = 0; i < params.size(); ++i) sq += ops::sum((params[i] - before[i]) * (params[i] - before[i])).item<float>();
    EXPECT_NEAR(std::sqrt(sq), 1e-3, 1e-6);
    EXPECT_ERROR(model.clip_grad_norm(1.0), "before the first train step");
  }
}

// A checkpoint written at the last step of an epoch resumes at the next epoch's start.
TEST(Model, CheckpointAtAnEpochBoundary) {
  const fs::path dir = fs::temp_directory_path() / ("spore_eb_" + std::to_string(::getpid()));
  auto [x, y] = toy_data(64, 4);
  manual_seed(5);
  TinyNet net;
  optim::SGD opt(net.parameters(), {.lr = 0.05});
  Model model(net, ce, opt);
  TensorBatches data(x, y, 32);  // 2 batches per epoch
  CheckpointCallback ck(dir.string(), /*every_steps=*/2, /*every_epochs=*/1);
  model.fit(1, data, {&ck});
  Checkpoint c = load_checkpoint(ck.last_saved());
  EXPECT_EQ(c.get_int("step"), 2);
  EXPECT_EQ(c.get_int("epoch"), 1);
  EXPECT_EQ(c.get_int("batch_in_epoch"), 0);
  fs::remove_all(dir);
}

TEST(Model, LROnPlateauLowersTheRate) {
  auto [x, y] = toy_data(64, 4);
  manual_seed(5);
  TinyNet net;
  optim::SGD opt(net.parameters(), {.lr = 0.1});
  Model model(net, ce, opt);
  TensorBatches data(x, y, 32);
  // The accuracy cannot exceed 1.0 + 10 (threshold): never an improvement after the first epoch.
  optim::ReduceLROnPlateau plateau(opt, {.maximize = true, .factor = 0.5, .patience = 0, .threshold = 10,
                                         .relative_threshold = false});
  LROnPlateau cb(plateau, "accuracy");
  model.fit(3, data, {&cb});
  EXPECT_DOUBLE_EQ(opt.lr(), 0.1 * 0.5 * 0.5);
  LROnPlateau bad(plateau, "f1");
  EXPECT_ERROR(model.fit(4, data, {&bad}), "monitors 'f1'");
}

TEST(Model, Errors) {
  TinyNet net, other;
  optim::SGD opt(other.parameters());
  EXPECT_ERROR(Model(net, ce, opt), "is not a parameter of the network TinyNet");
  optim::SGD ok(net.parameters());
  EXPECT_ERROR(Model(net, ce, ok, {"f1"}), "unknown metric 'f1'");
  Model m(net, ce, ok);
  Checkpoint c;
  EXPECT_ERROR(m.restore(c), "no 'step' entry");
  Checkpoint bad = m.checkpoint();
  bad.tensors[0].second = ops::zeros({2, 2});
  Tensor before = net.w1.clone();
  EXPECT_ERROR(m.restore(bad), "w1");
  EXPECT_TRUE(ops::all(ops::equal(before, net.w1)).item<bool>());
}

}  // namespace
}  // namespace spore::train
