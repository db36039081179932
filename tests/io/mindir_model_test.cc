// SPDX-License-Identifier: Apache-2.0
// A model with parameters and BatchNorm buffers through a MindIR file: outputs, gradients with
// respect to the parameters and one SGD step agree with the original Cell; state updates in
// training mode reach the loaded cell's buffers; tensors are 64-byte aligned in the file; a
// failed write leaves an existing file untouched.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

#include "error_matchers.h"
#include "io/loaded_model.h"
#include "io/mindir_file.h"
#include "mindir_test_util.h"
#include "spore/io/mindir.h"

namespace spore {
namespace {

using namespace ops;

std::unique_ptr<nn::SequentialCell> small_net() {
  manual_seed(3);
  auto net = std::make_unique<nn::SequentialCell>(std::make_unique<nn::Conv2d>(1, 4, 3, 1, 1), std::make_unique<nn::BatchNorm2d>(4),
                                                  std::make_unique<nn::ReLU>(), std::make_unique<nn::Flatten>(),
                                                  std::make_unique<nn::Dense>(4 * 6 * 6, 3));
  // Non-trivial statistics so eval-mode outputs depend on the buffers.
  auto& bn = dynamic_cast<nn::BatchNorm&>((*net)[1]);
  copy_(bn.running_mean, tensor({0.1f, -0.2f, 0.3f, 0.05f}));
  copy_(bn.running_var, tensor({1.5f, 0.7f, 2.0f, 0.9f}));
  return net;
}

std::vector<Tensor> leaves_of(const TensorTree& t) { return t.leaves(); }

TEST(MindirModel, ParametersBuffersGradAndFineTune) {
  auto net = small_net();
  net->eval();
  const Tensor x = uniform({2, 1, 6, 6});
  const std::string path = testing::temp_model_path("net.mindir");
  io::ExportOptions opt;
  opt.input_names = {"image"};
  opt.output_names = {"logits"};
  opt.preprocessing = "scale to [0, 1]";
  io::export_mindir(*net, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*net)(in[0])}; }, {x}, path, opt);
  io::GraphCell cell = io::load_mindir(path);
  EXPECT_EQ(cell.input_names(), std::vector<std::string>{"image"});
  EXPECT_EQ(cell.output_names(), std::vector<std::string>{"logits"});
  EXPECT_EQ(cell.metadata().at("preprocessing"), "scale to [0, 1]");
  EXPECT_EQ(cell.metadata().at("producer"), "spore");

  // Same parameter and buffer names and values.
  auto p_net = net->named_parameters(), p_cell = cell.named_parameters();
  ASSERT_EQ(p_cell.size(), p_net.size());
  for (size_t i = 0; i < p_net.size(); ++i) {
    EXPECT_EQ(p_cell[i].first, p_net[i].first);
    testing::expect_bitwise_equal(p_cell[i].second, p_net[i].second, p_net[i].first);
  }
  auto b_cell = cell.named_buffers();
  ASSERT_EQ(b_cell.size(), 2u);  // eval mode reads no num_batches_tracked
  EXPECT_EQ(b_cell[0].first, "1.running_mean");
  EXPECT_EQ(b_cell[1].first, "1.running_var");
  testing::expect_bitwise_equal(b_cell[1].second, dynamic_cast<nn::BatchNorm&>((*net)[1]).running_var, "running_var");

  // Outputs, PyNative and Graph mode.
  const Tensor want = (*net)(x);
  testing::expect_bitwise_equal(cell({x})[0], want, "pynative");
  set_context(Mode::Graph);
  const Tensor got_graph = cell({x})[0];
  set_context(Mode::PyNative);
  EXPECT_LT(amax(abs(got_graph - want)).item<double>(), 1e-5);

  // Gradients w.r.t. the parameters through functional_call.
  auto loss_net = [&](const TensorTree& p) { return nn::functional_call(*net, p, [&] { return sum((*net)(x) * (*net)(x)); }); };
  auto loss_cell = [&](const TensorTree& p) { return nn::functional_call(cell, p, [&] { return sum(cell({x})[0] * cell({x})[0]); }); };
  const auto g_net = leaves_of(grad(loss_net)(net->parameter_tree()));
  const auto g_cell = leaves_of(grad(loss_cell)(cell.parameter_tree()));
  ASSERT_EQ(g_cell.size(), g_net.size());
  for (size_t i = 0; i < g_net.size(); ++i) testing::expect_bitwise_equal(g_cell[i], g_net[i], "grad " + p_net[i].first);

  // One SGD step on each changes the parameters identically.
  optim::SGD sgd_net(net->parameters(), {.lr = 0.1});
  optim::SGD sgd_cell(cell.parameters(), {.lr = 0.1});
  sgd_net.step(g_net);
  sgd_cell.step(g_cell);
  p_net = net->named_parameters();
  p_cell = cell.named_parameters();
  for (size_t i = 0; i < p_net.size(); ++i) testing::expect_bitwise_equal(p_cell[i].second, p_net[i].second, "after step " + p_net[i].first);
  testing::expect_bitwise_equal(cell({x})[0], (*net)(x), "after step");

  // The fine-tuned cell saves and loads again with its new weights.
  const std::string path2 = testing::temp_model_path("net_tuned.mindir");
  io::save_mindir(cell, path2);
  io::GraphCell again = io::load_mindir(path2);
  testing::expect_bitwise_equal(again({x})[0], (*net)(x), "reloaded after step");
}

TEST(MindirModel, TrainingModeUpdatesBuffers) {
  auto net = small_net();
  net->train();
  const Tensor x = uniform({4, 1, 6, 6});
  const std::string path = testing::temp_model_path("train.mindir");
  auto& bn = dynamic_cast<nn::BatchNorm&>((*net)[1]);
  const Tensor mean0 = bn.running_mean.clone();
  io::export_mindir(*net, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*net)(in[0])}; }, {x}, path);
  // Exporting traced the update; it did not run it.
  testing::expect_bitwise_equal(bn.running_mean, mean0, "running_mean after export");
  for (Mode mode : {Mode::PyNative, Mode::Graph}) {
    auto fresh = small_net();
    fresh->train();
    io::GraphCell cell = io::load_mindir(path);
    set_context(mode);
    const Tensor got = cell({x})[0];
    set_context(Mode::PyNative);
    const Tensor want = (*fresh)(x);
    EXPECT_LT(amax(abs(got - want)).item<double>(), 1e-5);
    std::map<std::string, Tensor> bufs;
    for (const auto& [n, t] : cell.named_buffers()) bufs[n] = t;
    ASSERT_EQ(bufs.size(), 3u);  // running_mean, running_var, num_batches_tracked
    EXPECT_EQ(bufs["1.num_batches_tracked"].item<int64_t>(), 1);
    const auto& fbn = dynamic_cast<nn::BatchNorm&>((*fresh)[1]);
    EXPECT_LT(amax(abs(bufs["1.running_mean"] - fbn.running_mean)).item<double>(), 1e-6) << (mode == Mode::Graph ? "graph" : "pynative");
    EXPECT_LT(amax(abs(bufs["1.running_var"] - fbn.running_var)).item<double>(), 1e-6);
    EXPECT_GT(amax(abs(bufs["1.running_mean"] - mean0)).item<double>(), 1e-4);  // it did change
  }
}

TEST(MindirModel, TensorSectionIsAligned) {
  auto net = small_net();
  net->eval();
  const std::string path = testing::temp_model_path("aligned.mindir");
  const Tensor x = uniform({1, 1, 6, 6});
  io::export_mindir(*net, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*net)(in[0])}; }, {x}, path);
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  uint64_t section = 0;
  std::memcpy(&section, bytes.data() + 32, 8);
  EXPECT_EQ(section % 64, 0u);
  // Every tensor's recorded offset in the section is a multiple of 64, and its bytes are there.
  const std::string text = io::mindir_message_text(bytes);
  int tensors = 0;
  for (size_t at = text.find("tensors {"); at != std::string::npos; at = text.find("tensors {", at + 1)) {
    const size_t end = text.find("\n}", at);
    const std::string entry = text.substr(at, end - at);
    const size_t o = entry.find("offset: ");
    const uint64_t offset = o == std::string::npos ? 0 : std::stoull(entry.substr(o + 8));
    EXPECT_EQ(offset % 64, 0u) << entry;
    ++tensors;
  }
  EXPECT_GE(tensors, 8);  // conv, BatchNorm and dense parameters, the statistics
  for (const auto& [name, t] : net->named_parameters()) {
    const std::string raw(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(t.numel()) * t.itemsize());
    EXPECT_NE(bytes.find(raw, section), std::string::npos) << name;
  }
  // Loaded state tensors are 64-byte aligned too.
  io::GraphCell cell = io::load_mindir(path);
  for (const auto& [name, t] : cell.named_parameters())
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << name;
}

TEST(MindirModel, FailedWriteLeavesExistingFileUntouched) {
  const std::string path = testing::temp_model_path("atomic.mindir");
  const Tensor x = tensor({1.0f, 2.0f});
  io::export_mindir([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; }, {x}, path);
  std::ifstream f0(path, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(f0)), std::istreambuf_iterator<char>());
  // A model whose state does not match its graph cannot be serialized.
  const Tensor w = tensor({1.0f, 2.0f});
  io::export_mindir([&w](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * w}; }, {x},
                    testing::temp_model_path("other.mindir"));
  io::LoadedModel bad = io::read_mindir(testing::temp_model_path("other.mindir"));
  bad.state[0] = tensor({1.0f, 2.0f, 3.0f});
  EXPECT_ERROR(io::write_mindir(bad, path), "but the graph expects float32[2]");
  std::ifstream f1(path, std::ios::binary);
  const std::string after((std::istreambuf_iterator<char>(f1)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, before);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    files += e.path().filename().string().find(".tmp.") != std::string::npos;
  EXPECT_EQ(files, 0);
  EXPECT_ERROR(io::write_mindir(bad, "/nonexistent-dir/x.mindir"), "cannot create");
}

TEST(MindirModel, InputChecks) {
  const std::string path = testing::temp_model_path("inputs.mindir");
  io::ExportOptions opt;
  opt.input_names = {"a", "b"};
  io::export_mindir([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; },
                    {zeros({2, 3}), zeros({2, 3})}, path, opt);
  io::GraphCell cell = io::load_mindir(path);
  EXPECT_ERROR(cell({zeros({2, 3})}), "the model takes 2 inputs (a: float32[2, 3], b: float32[2, 3]), but 1 were given");
  EXPECT_ERROR(cell({zeros({2, 3}), zeros({3, 2})}), "input 1 ('b') is float32[3, 2]; the model expects float32[2, 3]");
  EXPECT_ERROR(cell({zeros({2, 3}), zeros({2, 3}, {DType::Float64})}), "input 1 ('b') is float64[2, 3]");
}

}  // namespace
}  // namespace spore
