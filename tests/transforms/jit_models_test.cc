// SPDX-License-Identifier: Apache-2.0
// Whole models under jit against PyNative (issue 4): an MLP, LeNet-5, a ResNet basic block with
// BatchNorm in training mode (its running statistics are state the compiled call writes back)
// and a transformer encoder layer (dropout 0). For each, at SPORE_OPT_LEVEL 0, 1 and 2, twice in
// a row (the traced call, then the cached one): the forward output, the loss and every parameter
// gradient (value_and_grad over nn::functional_call) and every buffer afterwards must agree
// within the tolerance table of jit_compare.h (bitwise at O0 and O1). At O1 and O2 every call must
// have run a lowered plan; O0 interprets by design (jit.cc: SPORE_OPT_LEVEL=0 asks for the
// reference path).
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <memory>

#include "spore/models/classic.h"
#include "spore/nn/conv.h"
#include "spore/nn/normalization.h"
#include "spore/nn/transformer.h"
#include "transforms/jit_compare.h"

namespace spore {
namespace {

using namespace ops;
using testing::diff_eps;

// ResNet's basic block: conv-bn-relu-conv-bn, plus the identity, then relu.
class BasicBlock : public nn::UnaryCell {
 public:
  explicit BasicBlock(int64_t c)
      : UnaryCell("BasicBlock"), conv1(c, c, 3, 1, 1, 1, 1, false), bn1(c), conv2(c, c, 3, 1, 1, 1, 1, false), bn2(c) {
    register_cell("conv1", &conv1);
    register_cell("bn1", &bn1);
    register_cell("conv2", &conv2);
    register_cell("bn2", &bn2);
  }
  Tensor construct(const Tensor& x) override { return relu(bn2(conv2(relu(bn1(conv1(x))))) + x); }

  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
};

struct ModelCase {
  std::string name;
  std::function<std::unique_ptr<nn::UnaryCell>()> make;
  Tensor x, y;
  std::function<Tensor(const Tensor& out, const Tensor& y)> loss;
};

Tensor labels(std::initializer_list<int64_t> v) { return tensor(v); }

std::vector<ModelCase> model_cases() {
  manual_seed(42);
  auto ce = [](const Tensor& out, const Tensor& y) { return cross_entropy(out, y); };
  auto dot = [](const Tensor& out, const Tensor& y) { return sum(out * y); };
  std::vector<ModelCase> c;
  c.push_back({"mlp", [] { return models::mlp({20, 32, 16, 5}); }, normal({8, 20}), labels({0, 1, 2, 3, 4, 0, 1, 2}), ce});
  c.push_back({"lenet5", [] { return models::lenet5(10); }, normal({2, 1, 28, 28}), labels({3, 7}), ce});
  c.push_back({"resnet_block", [] { return std::make_unique<BasicBlock>(4); }, normal({2, 4, 6, 6}) * 2.0 + 0.5,
               normal({2, 4, 6, 6}), dot});
  c.push_back({"transformer_layer",
               [] {
                 return std::make_unique<nn::TransformerEncoderLayer>(
                     8, 2, nn::TransformerOptions{.dim_feedforward = 16, .dropout = 0.0, .batch_first = true});
               },
               normal({2, 5, 8}), normal({2, 5, 8}), dot});
  return c;
}

// Two models with the same state: one run eagerly, one under jit.
struct Pair {
  std::unique_ptr<nn::UnaryCell> eager, graph;
};
Pair make_pair_of(const ModelCase& mc) {
  manual_seed(7);
  Pair p{mc.make(), mc.make()};
  std::vector<std::pair<std::string, Tensor>> sd;
  for (const auto& [k, t] : p.eager->state_dict()) sd.emplace_back(k, t.clone());
  p.graph->load_state_dict(sd);
  return p;
}

double expect_agree(const std::string& what, const Tensor& got, const Tensor& want, double tol) {
  const double e = diff_eps(got, want);
  EXPECT_LE(e, tol) << what << ": jit " << got << "\neager " << want;
  return e;
}

size_t count_fused(const std::string& graph_text) {
  size_t n = 0;
  for (size_t at = graph_text.find(" fused{"); at != std::string::npos; at = graph_text.find(" fused{", at + 1)) ++n;
  return n;
}

// Buffers (BatchNorm statistics) after the calls.
void expect_same_state(const std::string& where, nn::Cell& graph, nn::Cell& eager) {
  const auto g = graph.named_buffers(), e = eager.named_buffers();
  ASSERT_EQ(g.size(), e.size());
  for (size_t i = 0; i < g.size(); ++i) expect_agree(where + " buffer " + g[i].first, g[i].second, e[i].second, 0);
}

void check_model(const ModelCase& mc, int level) {
  SCOPED_TRACE(mc.name + " at O" + std::to_string(level));
  testing::OptLevelScope opt(level);
  const double tol = testing::jit_tolerance_eps(level);
  // Plans run at O1 and O2; O0 interprets (the reference path), which the counter must show too.
  const bool plans = level > 0;
  Pair m = make_pair_of(mc);
  nn::UnaryCell &eager = *m.eager, &graph = *m.graph;
  const Tensor &x = mc.x, &y = mc.y;

  auto jfwd = jit([&](const Tensor& xi) { return graph(xi); }, mc.name);
  auto loss_of = [&](nn::UnaryCell& net) {
    return [&](const TensorTree& p) { return nn::functional_call(net, p, [&] { return mc.loss(net(x), y); }); };
  };
  auto jgrad = jit([&](const TensorTree& p) {
    auto [v, g] = value_and_grad(loss_of(graph))(p);
    return TensorTree{TensorTree(v), g};
  }, mc.name + "_grad");

  double worst = 0;
  for (int call = 0; call < 2; ++call) {
    const std::string at = "call " + std::to_string(call);
    const Tensor want = eager(x);
    const auto [want_loss, want_grads] = value_and_grad(loss_of(eager))(eager.parameter_tree());

    TensorTree got_vg;
    Tensor got;
    testing::RunCounter counter;
    {
      testing::GraphModeScope graph_mode;
      got = jfwd(x);
      got_vg = jgrad(graph.parameter_tree());
    }
    EXPECT_EQ(counter.plans(), plans ? 2 : 0) << at << ": interpreted because " << transforms::last_interpreted_reason();
    EXPECT_EQ(counter.interpreted(), plans ? 0 : 2) << at;

    worst = std::max(worst, expect_agree(at + " output", got, want, tol));
    worst = std::max(worst, expect_agree(at + " loss", got_vg[0].tensor(), want_loss, tol));
    const auto names = eager.named_parameters();
    const auto g = got_vg[1].leaves(), w = want_grads.leaves();
    ASSERT_EQ(g.size(), names.size());
    ASSERT_EQ(w.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i)
      worst = std::max(worst, expect_agree(at + " gradient of " + names[i].first, g[i], w[i], tol));
    expect_same_state(at, graph, eager);
  }
  EXPECT_EQ(jfwd.core().traces(), 1);
  EXPECT_EQ(jgrad.core().traces(), 1);
  const size_t fused = count_fused(jgrad.core().last_graph_text());
  if (level == 2) {
    EXPECT_GT(fused, 0u) << "O2 fused nothing in the gradient program";
  }
  std::cout << "[ jit      ] " << mc.name << " O" << level << ": largest difference " << worst << " eps, " << fused
            << " fused nodes in the gradient graph\n";
}

class JitModels : public ::testing::TestWithParam<int> {};

TEST_P(JitModels, ForwardGradientsAndStateMatchPyNative) {
  for (const ModelCase& mc : model_cases()) check_model(mc, GetParam());
}

INSTANTIATE_TEST_SUITE_P(OptLevels, JitModels, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int>& i) { return "O" + std::to_string(i.param); });

// The block's statistics really move (so the state comparison above can fail), and the compiled
// step writes them into the cell's own tensors.
TEST(JitModelsState, BatchNormStatisticsAreWrittenIntoTheCellsTensors) {
  testing::OptLevelScope opt(1);
  BasicBlock b(4);
  manual_seed(3);
  const Tensor x = normal({2, 4, 6, 6}) * 2.0 + 0.5;
  const void* mean_at = b.bn1.running_mean.data_ptr();
  auto f = jit([&](const Tensor& xi) { return b(xi); });
  testing::RunCounter counter;
  {
    testing::GraphModeScope graph_mode;
    f(x);
  }
  EXPECT_EQ(counter.plans(), 1);
  EXPECT_EQ(b.bn1.running_mean.data_ptr(), mean_at);
  EXPECT_NE(b.bn1.running_mean.to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(b.bn2.num_batches_tracked.item<int64_t>(), 1);
}

}  // namespace
}  // namespace spore
