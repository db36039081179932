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

// A scheduled option read by every update (a momentum cast to float32 once, CSE'd) is traced
// with the first update, after the whole backward. A scalar of parameters alone, it goes
// first, so the updates still follow their gradients instead of waiting at the end with the
// gradients' inputs.
TEST(PassHoistUpdates, ASmallValueOfParametersAloneSharedByEveryUpdateGoesFirst) {
  std::string params, grads, updates, outs;
  for (int j = 1; j <= 9; ++j) {
    const std::string p = std::to_string(j), g = std::to_string(20 + j), s = std::to_string(30 + j),
                      u = std::to_string(40 + j);
    params += ", %" + p + ": parameter float32[4]";
    grads += "  %" + g + " = mul{}(%11, %" + p + ") : float32[4]\n";
    updates += "  %" + s + " = mul{}(%" + g + ", %14) : float32[4]\n  %" + u + " = sub{}(%" + p + ", %" + s +
               ") : float32[4]\n";
    outs += ", %" + u + " updates %" + p;
  }
  const auto g = parse("graph @main(%0: data float32[4]" + params + ", %10: data float64[]) {\n" +
                       "  %11 = neg{a=0, b=0}(%0) : float32[4]\n" + grads +
                       "  %12 = exp{a=0, b=0}(%11) : float32[4]\n  %13 = exp{a=0, b=0}(%12) : float32[4]\n" +
                       "  %14 = cast{dtype=float32}(%10) : float32[]\n" + updates + "  return %13" + outs + "\n}");
  const ir::GraphPtr out = hoist_updates(g);
  const auto& nodes = out->nodes();
  ASSERT_EQ(nodes.size(), g->nodes().size());
  EXPECT_EQ(nodes.front()->op(), "cast");
  // Every update runs before the late backward work (the two exps, now last).
  EXPECT_EQ(nodes[nodes.size() - 2]->op(), "exp");
  EXPECT_EQ(nodes.back()->op(), "exp");
  // Not a tensor, though: a value of parameters alone with more than one element keeps its
  // place (it would only be live longer).
  const auto big = parse(R"(
graph @main(%0: data float32[4], %1: parameter float32[4], %2: data float64[4096]) {
  %3 = neg{a=0, b=0}(%0) : float32[4]
  %4 = cast{dtype=float32}(%2) : float32[4096]
  %5 = sub{}(%1, %3) : float32[4]
  return %4, %5 updates %1
})");
  const ir::GraphPtr big_out = hoist_updates(big);
  ASSERT_EQ(big_out->nodes().size(), 3u);
  EXPECT_EQ(big_out->nodes()[1]->op(), "sub");
  EXPECT_EQ(big_out->nodes()[2]->op(), "cast");
}

}  // namespace
}  // namespace spore::passes
