// SPDX-License-Identifier: Apache-2.0
// Learning-rate schedules: lr_at agrees with stepping, resuming by set_last_step, and errors.
// The values themselves are checked against torch.optim.lr_scheduler by the oracle
// (tests/oracle/cases_optim.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "error_matchers.h"
#include "spore/optim/optim.h"
#include "spore/spore.h"

namespace spore::optim {
namespace {

std::vector<Tensor> one_param() { return {ops::zeros({2})}; }

TEST(LRSchedule, ClosedFormsByHand) {
  SGD opt(one_param(), {.lr = 1.0});
  StepLR step(opt, 3, 0.5);
  EXPECT_EQ(step.lr_at(0), 1.0);
  EXPECT_EQ(step.lr_at(2), 1.0);
  EXPECT_EQ(step.lr_at(3), 0.5);
  EXPECT_EQ(step.lr_at(7), 0.25);
  SGD opt2(one_param(), {.lr = 2.0});
  CosineAnnealingLR cos(opt2, 10, 0.0, 4, 0.0);
  EXPECT_EQ(cos.lr_at(0), 0.0);
  EXPECT_EQ(cos.lr_at(2), 1.0);
  EXPECT_EQ(cos.lr_at(4), 2.0);
  EXPECT_NEAR(cos.lr_at(9), 1.0, 1e-15);
  EXPECT_NEAR(cos.lr_at(14), 0.0, 1e-15);
  EXPECT_EQ(opt2.lr(), 0.0);  // construction applies step 0
  SGD opt3(one_param(), {.lr = 1.0});
  PolynomialLR poly(opt3, 4, 2.0);
  EXPECT_EQ(poly.lr_at(2), 0.25);
  EXPECT_EQ(poly.lr_at(9), 0.0);
}

TEST(LRSchedule, SteppingEqualsLrAtAndResumes) {
  SGD opt(std::vector<ParamGroup>{{one_param(), {{"lr", 0.1}}}, {one_param(), {{"lr", 0.3}}}});
  MultiStepLR sched(opt, {3, 6}, 0.1);
  for (int s = 1; s <= 8; ++s) {
    sched.step();
    EXPECT_EQ(sched.last_step(), s);
    EXPECT_EQ(opt.lr(0), sched.lr_at(s, 0));
    EXPECT_EQ(opt.lr(1), sched.lr_at(s, 1));
    EXPECT_FLOAT_EQ(opt.lr_tensor(1).item<float>(), static_cast<float>(sched.lr_at(s, 1)));
  }
  EXPECT_NEAR(opt.lr(1), 0.003, 1e-15);
  // A fresh optimizer and schedule resumed at step 4 continue with the same rates.
  SGD opt2(std::vector<ParamGroup>{{one_param(), {{"lr", 0.1}}}, {one_param(), {{"lr", 0.3}}}});
  MultiStepLR resumed(opt2, {3, 6}, 0.1);
  resumed.set_last_step(4);
  EXPECT_EQ(opt2.lr(1), sched.lr_at(4, 1));
}

TEST(LRSchedule, OneCyclePeaksAtPctStartAndStopsAtTotal) {
  SGD opt(one_param(), {.momentum = 0.9});
  OneCycleLR sched(opt, {1.0}, 10, {.pct_start = 0.3});
  EXPECT_NEAR(opt.lr(), 1.0 / 25, 1e-15);
  EXPECT_NEAR(sched.lr_at(2), 1.0, 1e-15);
  EXPECT_NEAR(sched.lr_at(9), 1.0 / 25 / 1e4, 1e-15);
  EXPECT_ERROR(sched.lr_at(11), "[OneCycleLR] step 11 is past total_steps 10");
  EXPECT_ERROR(OneCycleLR(opt, {1.0, 2.0}, 10), "2 max_lrs for 1 parameter groups");
}

// Momentum moves against the rate: max_momentum at the start and the end, base_momentum at the
// rate's peak; three_phase holds max_momentum through its last phase.
TEST(LRSchedule, OneCycleCyclesMomentumOrBeta1) {
  SGD sgd(one_param(), {.momentum = 0.9});
  OneCycleLR s(sgd, {1.0}, 10, {.pct_start = 0.3});
  EXPECT_EQ(s.momentum_option(), "momentum");
  EXPECT_DOUBLE_EQ(sgd.option("momentum"), 0.95);  // construction applies step 0
  EXPECT_NEAR(s.momentum_at(2), 0.85, 1e-15);
  EXPECT_NEAR(s.momentum_at(9), 0.95, 1e-15);
  s.set_last_step(2);
  EXPECT_NEAR(sgd.option("momentum"), 0.85, 1e-15);
  Adam adam(one_param());
  OneCycleLR a(adam, {1.0}, 10, {.pct_start = 0.3, .three_phase = true, .base_momentum = 0.8, .max_momentum = 0.9});
  EXPECT_EQ(a.momentum_option(), "beta1");
  EXPECT_NEAR(a.momentum_at(2), 0.8, 1e-15);
  EXPECT_NEAR(a.momentum_at(4), 0.9, 1e-15);
  EXPECT_NEAR(a.momentum_at(7), 0.9, 1e-15);
  a.step();
  EXPECT_LT(adam.option("beta1"), 0.9);
  // The checkpoint holds the cycled value, and a fresh optimizer takes it.
  Adam adam2(one_param());
  adam2.load_state_dict(adam.state_dict());
  EXPECT_EQ(adam2.option("beta1"), adam.option("beta1"));
  // Without momentum there is nothing to cycle.
  SGD plain(one_param());
  EXPECT_ERROR(OneCycleLR(plain, {1.0}, 10), "group 0 was built with momentum 0 (no momentum buffer)");
  OneCycleLR no_cycle(plain, {1.0}, 10, {.cycle_momentum = false});
  EXPECT_EQ(no_cycle.momentum_option(), "");
  Adagrad ada(one_param());
  EXPECT_ERROR(OneCycleLR(ada, {1.0}, 10), "Adagrad has neither: set cycle_momentum = false");
  // Momentum bounds are checked before any rate changes.
  Adam adam3(one_param(), {.lr = 0.5});
  EXPECT_ERROR(OneCycleLR(adam3, {1.0}, 10, {.max_momentum = 1.2}), "[OneCycleLR] base_momentum 0.85 and max_momentum 1.2");
  EXPECT_EQ(adam3.lr(), 0.5);
  // A checkpoint without the scheduled entries (written before they were saved) still loads.
  auto sd = adam.state_dict();
  std::erase_if(sd, [](const auto& e) { return e.first == "0.beta1"; });
  Adam adam4(one_param());
  adam4.load_state_dict(sd);
  EXPECT_EQ(adam4.option("beta1"), 0.9);
  EXPECT_ERROR(sgd.set_option("dampening", 0.1), "'dampening' cannot be changed after construction");
  EXPECT_ERROR(adam.set_option("beta1", 1.5), "beta1 = 1.5 is out of range");
  EXPECT_ERROR(plain.set_option("momentum", 0.5), "was built with momentum = 0 and keeps no state for it");
}

TEST(LRSchedule, PlateauReducesAfterPatienceAndCoolsDown) {
  SGD opt(one_param(), {.lr = 1.0});
  ReduceLROnPlateau sched(opt, {.factor = 0.5, .patience = 1, .cooldown = 1, .min_lr = 0.3});
  sched.step(1.0);  // best
  sched.step(1.0);  // bad 1
  EXPECT_EQ(opt.lr(), 1.0);
  sched.step(1.0);  // bad 2 > patience: reduce
  EXPECT_EQ(opt.lr(), 0.5);
  sched.step(2.0);  // cooldown
  sched.step(2.0);  // bad 1
  EXPECT_EQ(opt.lr(), 0.5);
  sched.step(NAN);  // a NaN is no improvement: bad 2, reduce, but not below min_lr
  EXPECT_EQ(opt.lr(), 0.3);
  sched.step(0.5);
  EXPECT_EQ(sched.state().best, 0.5);
}

TEST(LRSchedule, ClearErrors) {
  SGD opt(one_param());
  EXPECT_ERROR(StepLR(opt, 0), "[StepLR] step_size 0 must be positive");
  EXPECT_ERROR(CosineAnnealingLR(opt, 0), "[CosineAnnealingLR] t_max 0 must be positive");
  EXPECT_ERROR(PolynomialLR(opt, -1), "[PolynomialLR] total_iters -1 must be positive");
  EXPECT_ERROR(ReduceLROnPlateau(opt, {.factor = 1.0}), "[ReduceLROnPlateau] factor 1 must be in [0, 1)");
}

}  // namespace
}  // namespace spore::optim
