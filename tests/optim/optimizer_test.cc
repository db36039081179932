// SPDX-License-Identifier: Apache-2.0
// Optimizers: hand-computed first steps, checkpoint round trips, skipped gradients and clear
// errors. Agreement with torch.optim over 10 steps is the oracle's (tests/oracle/cases_optim.cc).
#include <gtest/gtest.h>

#include <algorithm>

#include <functional>
#include <memory>

#include "error_matchers.h"
#include "optim_fixtures.h"
#include "spore/spore.h"

namespace spore::optim {
namespace {

using namespace ops;

TEST(Optim, SGDMomentumByHand) {
  Tensor p = tensor({1.0f, -2.0f});
  SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
  const Tensor g = tensor({1.0f, 0.5f});
  opt.step({g});  // the buffer starts as the gradient
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{1.0f - 0.1f * 1.0f, -2.0f - 0.1f * 0.5f}));
  opt.step({g});  // buf = 0.9 * 1 + 1 = 1.9
  EXPECT_NEAR(p.to_vector<float>()[0], 0.9f - 0.19f, 1e-6);
  EXPECT_NEAR(p.to_vector<float>()[1], -2.05f - 0.095f, 1e-6);
}

TEST(Optim, AdamFirstStepIsLrTimesSign) {
  Tensor p = tensor({1.0f, 1.0f, 1.0f});
  Adam opt({p}, {.lr = 0.01});
  opt.step({tensor({3.0f, -0.25f, 0.0f})});
  const auto v = p.to_vector<float>();
  EXPECT_NEAR(v[0], 0.99f, 1e-6);
  EXPECT_NEAR(v[1], 1.01f, 1e-6);
  EXPECT_EQ(v[2], 1.0f);
}

TEST(Optim, StateDictRoundTripIsBitwise) {
  for (const auto& [name, make] : optimizer_kinds()) {
    SCOPED_TRACE(name);
    const auto grads = grad_sequence(10, 31);
    // Ten uninterrupted steps, with a learning-rate change at step 3.
    auto pa = param_set(3);
    auto a = make(two_groups(pa));
    for (int s = 0; s < 10; ++s) {
      if (s == 3) a->set_lr(0.003, 1);
      a->step(grads[s]);
    }
    // Five steps, a checkpoint, a fresh optimizer on copies of the parameters, five more.
    auto pb = param_set(3);
    auto b = make(two_groups(pb));
    for (int s = 0; s < 5; ++s) {
      if (s == 3) b->set_lr(0.003, 1);
      b->step(grads[s]);
    }
    const auto sd = b->state_dict();
    std::vector<Tensor> pc;
    for (const Tensor& t : pb) pc.push_back(t.clone());
    auto c = make(two_groups(pc));
    c->load_state_dict(sd);
    EXPECT_EQ(c->lr(1), 0.003);
    for (int s = 5; s < 10; ++s) c->step(grads[s]);
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].to_vector<float>(), pc[i].to_vector<float>()) << i;
    const auto sa = a->state_dict(), sc = c->state_dict();
    ASSERT_EQ(sa.size(), sc.size());
    for (size_t i = 0; i < sa.size(); ++i) {
      EXPECT_EQ(sa[i].first, sc[i].first);
      EXPECT_EQ(sa[i].second.to_vector<double>(), sc[i].second.to_vector<double>()) << sa[i].first;
    }
    // The state_dict is a snapshot, not the live state: the first slot ("g.i.slot", after the
    // group's lr and scheduled options).
    size_t slot = 0;
    while (std::count(sd[slot].first.begin(), sd[slot].first.end(), '.') < 2) ++slot;
    const auto saved = sd[slot].second.to_vector<double>();
    b->step(grads[5]);
    EXPECT_EQ(sd[slot].second.to_vector<double>(), saved);
    EXPECT_NE(b->state_dict()[slot].second.to_vector<double>(), saved);
  }
}

TEST(Optim, StateNamesFollowGroupIndexSlot) {
  auto ps = param_set(1);
  Adam opt(two_groups(ps), {.amsgrad = true});
  std::vector<std::string> names;
  for (const auto& [k, t] : opt.state_dict()) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"0.lr", "0.beta1", "0.0.step", "0.0.exp_avg", "0.0.exp_avg_sq",
                                             "0.0.max_exp_avg_sq", "0.1.step", "0.1.exp_avg", "0.1.exp_avg_sq",
                                             "0.1.max_exp_avg_sq", "1.lr", "1.beta1", "1.0.step", "1.0.exp_avg",
                                             "1.0.exp_avg_sq", "1.0.max_exp_avg_sq"}));
  // Plain SGD keeps no per-parameter state: its rate and (scheduled) momentum only.
  std::vector<std::string> sgd_names;
  for (const auto& [k, t] : SGD(param_set(1)).state_dict()) sgd_names.push_back(k);
  EXPECT_EQ(sgd_names, (std::vector<std::string>{"0.lr", "0.momentum"}));
}

TEST(Optim, UndefinedGradientSkipsParameterAndItsState) {
  auto ps = param_set(5);
  const Tensor before = ps[1].clone();
  Adam opt(ps, {.lr = 0.1});
  const auto g = grad_sequence(2, 8);
  opt.step({g[0][0], Tensor(), g[0][2]});
  opt.step(TensorTree(std::vector<TensorTree>{TensorTree(g[1][0]), TensorTree(), TensorTree(g[1][2])}));
  EXPECT_EQ(ps[1].to_vector<float>(), before.to_vector<float>());
  for (const auto& [k, t] : opt.state_dict()) {
    if (k == "0.1.step") {
      EXPECT_EQ(t.item<float>(), 0.0f);
    } else if (k == "0.0.step") {
      EXPECT_EQ(t.item<float>(), 2.0f);
    }
  }
}

TEST(Optim, TreeGradientsInParamsOrder) {
  auto pa = param_set(6), pb = param_set(6);
  RMSProp a(pa, {.momentum = 0.5}), b(pb, {.momentum = 0.5});
  const auto g = grad_sequence(1, 3)[0];
  a.step(g);
  b.step(TensorTree::dict({{"w", TensorTree(g[0])}, {"inner", TensorTree::dict({{"b", TensorTree(g[1])}, {"c", TensorTree(g[2])}})}}));
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].to_vector<float>(), pb[i].to_vector<float>()) << i;
  EXPECT_NE(pa[0].to_vector<float>(), param_set(6)[0].to_vector<float>());
}

TEST(Optim, ParamGroupsOverrideDefaults) {
  auto ps = param_set(2);
  SGD opt(std::vector<ParamGroup>{{{ps[0], ps[1]}, {}}, {{ps[2]}, {{"lr", 0.5}, {"momentum", 0.9}}}}, {.lr = 0.1});
  EXPECT_EQ(opt.num_groups(), 2u);
  EXPECT_EQ(opt.lr(0), 0.1);
  EXPECT_EQ(opt.lr(1), 0.5);
  EXPECT_EQ(opt.option("momentum", 0), 0.0);
  EXPECT_EQ(opt.option("momentum", 1), 0.9);
  EXPECT_EQ(opt.lr_tensor(1).item<float>(), 0.5f);
  EXPECT_EQ(opt.params().size(), 3u);
  EXPECT_TRUE(opt.params()[2].is_same(ps[2]));
  opt.set_lr(0.25);
  EXPECT_EQ(opt.lr(0), 0.25);
  EXPECT_EQ(opt.lr(1), 0.25);
}

TEST(Optim, ClearErrors) {
  auto ps = param_set(4);
  SGD sgd(ps, {.lr = 0.1});
  EXPECT_ERROR(sgd.step({ps[0]}), "[SGD.step] got 1 gradients for 3 parameters");
  EXPECT_ERROR(sgd.step({ps[1], ps[1], ps[2]}), "gradient 0 has shape (5,) but its parameter (group 0, index 0) has shape (4, 3)");
  EXPECT_ERROR(sgd.step({ps[0].to(DType::Float64), ps[1], ps[2]}), "gradient 0 is float64 but its parameter is float32");
  EXPECT_ERROR(SGD(std::vector<ParamGroup>{{ps, {{"betas", 0.9}}}}), "group 0 sets unknown option 'betas'");
  EXPECT_ERROR(SGD(ps, {.nesterov = true}), "nesterov in group 0 needs momentum > 0");
  EXPECT_ERROR(SGD(std::vector<Tensor>{ps[0], ps[0]}), "shares its storage with an earlier parameter");
  EXPECT_ERROR(Adam(ps, {.betas = {0.9, 1.0}}), "beta2 = 1 in group 0 is out of range");
  EXPECT_ERROR(SGD(ps, {.lr = -1}), "lr = -1 in group 0 is out of range");
  EXPECT_ERROR(SGD(std::vector<Tensor>{ones({2}, {DType::Int64})}), "only floating-point parameters");
  EXPECT_ERROR(sgd.set_lr(0.1, 4), "group 4 does not exist");

  // A mismatched state_dict is refused before anything is written.
  Adam adam(ps);
  adam.step(grad_sequence(1, 2)[0]);
  const auto good = adam.state_dict();
  auto bad = good;
  bad.back().second = zeros({7});
  Adam fresh(param_set(4));
  const auto before = fresh.state_dict();
  EXPECT_ERROR(fresh.load_state_dict(bad), "entry '0.2.exp_avg_sq' is float32 (7,) but this optimizer's is float32 (2, 2, 2)");
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(fresh.state_dict()[i].second.to_vector<double>(), before[i].second.to_vector<double>());
  auto missing = good;
  missing.pop_back();
  EXPECT_ERROR(fresh.load_state_dict(missing), "missing entry '0.2.exp_avg_sq'");
  auto extra = good;
  extra.emplace_back("0.3.step", zeros({}));
  EXPECT_ERROR(fresh.load_state_dict(extra), "unexpected entry '0.3.step'");
  EXPECT_ERROR(SGD(ps, {.momentum = 0.9}).load_state_dict(good), "[SGD.load_state_dict] unexpected entry");
}

}  // namespace
}  // namespace spore::optim
