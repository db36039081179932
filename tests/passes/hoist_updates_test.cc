// SPDX-License-Identifier: Apache-2.0
// Hoisting state updates (passes/hoist_updates.h): text IR in -> text IR out.
#include "passes/hoist_updates.h"

#include <gtest/gtest.h>

#include "pass_text.h"
#include "passes/fuse.h"
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

// A training step's shape: nine parameters, their gradients, late backward work (two exps) and
// nine SGD updates that all read one scalar %14 of the graph input %10 (a scheduled momentum
// cast to float32 once, CSE'd: read by more updates than one update node may serve, so it is
// no update node itself). With `writer`, %15 overwrites %10 (the schedule's state) in place.
// `hoisted` gives the order hoist_updates should make (the printer renumbers, so both texts
// keep the input's value names): the scalar first, every update before the late work.
std::string nine_updates(bool writer, bool hoisted) {
  std::string params, grads, updates, outs;
  for (int j = 1; j <= 9; ++j) {
    const std::string p = std::to_string(j), g = std::to_string(20 + j), s = std::to_string(30 + j),
                      u = std::to_string(40 + j);
    params += ", %" + p + ": parameter float32[4]";
    const std::string grad = "  %" + g + " = mul{}(%11, %" + p + ") : float32[4]\n";
    const std::string update = "  %" + s + " = mul{}(%" + g + ", %14) : float32[4]\n  %" + u + " = sub{}(%" + p +
                               ", %" + s + ") : float32[4]\n";
    grads += grad;
    updates += update;
    outs += ", %" + u + " updates %" + p;
  }
  const std::string cast = "  %14 = cast{dtype=float32}(%10) : float32[]\n";
  const std::string write = writer ? "  %15 = mul{}(%10, %10) : float64[]\n" : "";
  const std::string late = "  %12 = exp{a=0, b=0}(%11) : float32[4]\n  %13 = exp{a=0, b=0}(%12) : float32[4]\n";
  const std::string head = "graph @main(%0: data float32[4]" + params + ", %10: buffer float64[]) {\n";
  const std::string ret = "  return %13" + outs + (writer ? ", %15 updates %10" : "") + "\n}";
  // The gradients are update nodes too (only updates read them): they keep their order.
  if (hoisted) return head + cast + write + "  %11 = neg{a=0, b=0}(%0) : float32[4]\n" + grads + updates + late + ret;
  return head + "  %11 = neg{a=0, b=0}(%0) : float32[4]\n" + grads + late + write + cast + updates + ret;
}

int donated_slots(const std::string& text) {
  std::vector<Tensor> args{ops::ones({4})};
  for (int j = 1; j <= 9; ++j) args.push_back(ops::ones({4}) * static_cast<double>(j));
  args.push_back(ops::scalar_tensor(0.9, DType::Float64));
  const auto plan = lower_plan(*hoist_updates(parse(text)), args);
  int donated = 0;
  for (const auto& sl : plan->slots) donated += sl.kind == runtime::SlotKind::Donated;
  return donated;
}

// Traced after the whole backward, the shared scalar held every update, and every weight
// gradient that goes with one, to the step's end. A scalar of graph inputs alone, it goes first,
// so each update follows its gradient; the parameters are still written in place.
TEST(PassHoistUpdates, ASmallValueOfParametersAloneSharedByEveryUpdateGoesFirst) {
  EXPECT_EQ(run_pass(hoist_updates, nine_updates(false, false)), canonical(nine_updates(false, true)));
  EXPECT_EQ(donated_slots(nine_updates(false, false)), 9);
}

// A writer of the state that value reads goes right after it (the value reads the old state
// first), not to the step's end, and still overwrites the state in place.
TEST(PassHoistUpdates, AWriterOfAStateAFrontValueReadsFollowsThatValue) {
  EXPECT_EQ(run_pass(hoist_updates, nine_updates(true, false)), canonical(nine_updates(true, true)));
  EXPECT_EQ(donated_slots(nine_updates(true, false)), 10);
}

// A value of inputs alone with more than one element keeps its place, and the update reading
// it stays after it (moved first, it would only be live longer); so does a scalar no update reads.
TEST(PassHoistUpdates, OnlyOneElementValuesThatAnUpdateReadsGoFirst) {
  const std::string in = R"(
graph @main(%0: data float32[4], %1: parameter float32[4], %2: data float64[4], %3: data float64[]) {
  %4 = neg{a=0, b=0}(%0) : float32[4]
  %5 = exp{a=0, b=0}(%4) : float32[4]
  %6 = cast{dtype=float32}(%2) : float32[4]
  %7 = cast{dtype=float32}(%3) : float32[]
  %8 = mul{}(%4, %6) : float32[4]
  %9 = sub{}(%1, %8) : float32[4]
  return %5, %6, %7, %9 updates %1
})";
  EXPECT_EQ(run_pass(hoist_updates, in), canonical(R"(
graph @main(%0: data float32[4], %1: parameter float32[4], %2: data float64[4], %3: data float64[]) {
  %4 = neg{a=0, b=0}(%0) : float32[4]
  %5 = exp{a=0, b=0}(%4) : float32[4]
  %6 = cast{dtype=float32}(%2) : float32[4]
  %8 = mul{}(%4, %6) : float32[4]
  %9 = sub{}(%1, %8) : float32[4]
  %7 = cast{dtype=float32}(%3) : float32[]
  return %5, %6, %7, %9 updates %1
})"));
}

// At level 2 fusion runs first: a chain of scalar ops of the inputs becomes one fused group
// (AdamW's 1 - lr * wd of a scheduled rate), which goes first as its body would.
TEST(PassHoistUpdates, AFusedGroupOfScalarsGoesFirstToo) {
  std::string text = nine_updates(false, false);
  const std::string cast = "  %14 = cast{dtype=float32}(%10) : float32[]\n";
  text.replace(text.find(cast), cast.size(),
               "  %16 = neg{a=0, b=0}(%10) : float64[]\n  %17 = exp{a=0, b=0}(%16) : float64[]\n"
               "  %14 = cast{dtype=float32}(%17) : float32[]\n");
  const ir::GraphPtr fused = fuse_elementwise(parse(text));
  const auto& before = fused->nodes();
  const auto scalar_group = std::find_if(before.begin(), before.end(), [](const ir::NodePtr& nd) {
    return nd->op() == "fused" && nd->subgraphs()[0]->nodes().size() == 2;
  });
  ASSERT_NE(scalar_group, before.end()) << ir::print_graph(*fused);
  const ir::GraphPtr out = hoist_updates(fused);
  const auto& nodes = out->nodes();
  ASSERT_EQ(nodes.size(), before.size());
  EXPECT_EQ(nodes[0]->op(), "fused") << ir::print_graph(*out);
  EXPECT_EQ(nodes[0]->subgraphs()[0]->nodes().size(), 2u);
  EXPECT_EQ(nodes[1]->op(), "cast");  // and the cast of it, first before any other work
}

}  // namespace
}  // namespace spore::passes
