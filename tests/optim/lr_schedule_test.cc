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
  SGD opt(one_param());
  OneCycleLR sched(opt, {1.0}, 10, {.pct_start = 0.3});
  EXPECT_NEAR(opt.lr(), 1.0 / 25, 1e-15);
  EXPECT_NEAR(sched.lr_at(2), 1.0, 1e-15);
  EXPECT_NEAR(sched.lr_at(9), 1.0 / 25 / 1e4, 1e-15);
  EXPECT_ERROR(sched.lr_at(11), "[OneCycleLR] step 11 is past total_steps 10");
  EXPECT_ERROR(OneCycleLR(opt, {1.0, 2.0}, 10), "2 max_lrs for 1 parameter groups");
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
