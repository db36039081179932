// SPDX-License-Identifier: Apache-2.0
// Hoisting state updates (passes/hoist_updates.h): text IR in -> text IR out.
#include "passes/hoist_updates.h"

#include <gtest/gtest.h>

#include "pass_text.h"
#include "passes/lower_plan.h"
#include "runtime/plan.h"
#include "spore/spore.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;
using testing::run_pass;

// A momentum step: m' = m * m + g goes right after g is made (its product of parameters alone
// with it, not first of all); w' = w - m' after the last other reader of w (the "data gradient"
// %5), so it can still overwrite w in place; the rest keeps its order.
TEST(PassHoistUpdates, UpdatesFollowTheirGradientAndTheLastReaderOfWhatTheyOverwrite) {
  EXPECT_EQ(run_pass(hoist_updates, R"(
graph @main(%0: data float32[4], %1: parameter float32[4], %2: buffer float32[4]) {
  %3 = mul{}(%0, %1) : float32[4]
  %4 = neg{a=0, b=0}(%3) : float32[4]
  %5 = mul{}(%4, %1) : float32[4]
  %6 = exp{a=0, b=0}(%5) : float32[4]
  %7 = exp{a=0, b=0}(%6) : float32[4]
  %8 = mul{}(%2, %2) : float32[4]
  %9 = add{}(%8, %4) : float32[4]
  %10 = sub{}(%1, %9) : float32[4]
  return %7, %10 updates %1, %9 updates %2
})"),
            canonical(R"(
graph @main(%0: data float32[4], %1: parameter float32[4], %2: buffer float32[4]) {
  %3 = mul{}(%0, %1) : float32[4]
  %4 = neg{a=0, b=0}(%3) : float32[4]
  %5 = mul{}(%2, %2) : float32[4]
  %6 = add{}(%5, %4) : float32[4]
  %7 = mul{}(%4, %1) : float32[4]
  %8 = sub{}(%1, %6) : float32[4]
  %9 = exp{a=0, b=0}(%7) : float32[4]
  %10 = exp{a=0, b=0}(%9) : float32[4]
  return %10, %8 updates %1, %6 updates %2
})"));
}

// A node of v's update that reads w waits for the late value v's update needs; w's update then
// waits for it too (else it would overwrite w first), and both still update in place.
TEST(PassHoistUpdates, AWriterFollowsADelayedReaderOfItsParameter) {
  const std::string text = R"(
graph @main(%0: data float32[4], %1: parameter float32[4], %2: parameter float32[4]) {
  %3 = neg{a=0, b=0}(%0) : float32[4]
  %4 = mul{}(%1, %1) : float32[4]
  %5 = exp{a=0, b=0}(%0) : float32[4]
  %6 = exp{a=0, b=0}(%5) : float32[4]
  %7 = mul{}(%4, %6) : float32[4]
  %8 = add{}(%2, %7) : float32[4]
  %9 = sub{}(%1, %3) : float32[4]
  return %6, %9 updates %1, %8 updates %2
})";
  // (w's gradient %3 feeds only w's update, so it goes with it.)
  EXPECT_EQ(run_pass(hoist_updates, text), canonical(R"(
graph @main(%0: data float32[4], %1: parameter float32[4], %2: parameter float32[4]) {
  %3 = exp{a=0, b=0}(%0) : float32[4]
  %4 = exp{a=0, b=0}(%3) : float32[4]
  %5 = neg{a=0, b=0}(%0) : float32[4]
  %6 = mul{}(%1, %1) : float32[4]
  %7 = mul{}(%6, %4) : float32[4]
  %8 = add{}(%2, %7) : float32[4]
  %9 = sub{}(%1, %5) : float32[4]
  return %4, %9 updates %1, %8 updates %2
})"));
  const std::vector<Tensor> in = {ops::ones({4}), ops::ones({4}) * 2.0, ops::ones({4}) * 3.0};
  const auto plan = lower_plan(*hoist_updates(parse(text)), in);
  int donated = 0;
  for (const auto& sl : plan->slots) donated += sl.kind == runtime::SlotKind::Donated;
  EXPECT_EQ(donated, 2) << runtime::plan_str(*plan);
}

TEST(PassHoistUpdates, LeavesWhatAlsoReachesOtherOutputsOrManyParameters) {
  // The update's input is returned too: it is no update node and stays; the update moves up
  // to it.
  EXPECT_EQ(run_pass(hoist_updates, R"(
graph @main(%0: data float32[4], %1: parameter float32[4]) {
  %2 = neg{a=0, b=0}(%0) : float32[4]
  %3 = exp{a=0, b=0}(%0) : float32[4]
  %4 = sub{}(%1, %2) : float32[4]
  return %3, %2, %4 updates %1
})"),
            canonical(R"(
graph @main(%0: data float32[4], %1: parameter float32[4]) {
  %2 = neg{a=0, b=0}(%0) : float32[4]
  %3 = sub{}(%1, %2) : float32[4]
  %4 = exp{a=0, b=0}(%0) : float32[4]
  return %4, %2, %3 updates %1
})"));
  // A gradient flowing into the updates of nine parameters is backward work, not an update:
  // it stays after the exp, and the updates stay after it.
  std::string params, updates, outs;
  for (int j = 1; j <= 9; ++j) {
    params += ", %" + std::to_string(j) + ": parameter float32[4]";
    updates += "  %" + std::to_string(12 + j) + " = sub{}(%" + std::to_string(j) + ", %12) : float32[4]\n";
    outs += ", %" + std::to_string(12 + j) + " updates %" + std::to_string(j);
  }
  auto wide = parse("graph @main(%0: data float32[4]" + params + ") {\n  %10 = neg{a=0, b=0}(%0) : float32[4]\n" +
                    "  %11 = exp{a=0, b=0}(%10) : float32[4]\n  %12 = mul{}(%0, %0) : float32[4]\n" + updates +
                    "  return %11" + outs + "\n}");
  EXPECT_EQ(hoist_updates(wide), wide);
}

}  // namespace
}  // namespace spore::passes
