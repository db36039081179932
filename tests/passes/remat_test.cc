// SPDX-License-Identifier: Apache-2.0
// Rematerialization (passes/remat.h): text IR in -> text IR out, and what does not qualify.
#include "passes/remat.h"

#include <gtest/gtest.h>

#include "pass_text.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;
using testing::run_pass;

constexpr const char* kAct = "float32[16, 64, 16, 16]";  // 1 MiB: the smallest value recomputed

// `n` nodes of other work between a value's forward and backward readers: a chain on %3.
std::string filler(int first, int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "  %" + std::to_string(first + i) + " = neg{a=0, b=0}(%" + (i == 0 ? std::string("3") : std::to_string(first + i - 1)) +
         ") : float32[8]\n";
  return s;
}

// x (%4) is made by an op recomputes do not take (exp), as a conv would be.
std::string header() {
  return std::string("graph @main(%0: data ") + kAct + ", %1: parameter float32[64], %2: parameter float32[64], %3: data float32[8]) {\n" +
         "  %4 = exp{a=0, b=0}(%0) : " + kAct + "\n" +
         "  %5, %6, %7 = batch_norm{training=true, eps=1e-05, has_weight=true, has_bias=true, has_running=false}(%4, %1, %2) : " +
         kAct + ", float32[64], float32[64]\n  %8 = relu{a=0, b=0}(%5) : " + kAct + "\n  %9 = mul{}(%8, %8) : " + kAct + "\n";
}

// relu(batch_norm(x)) read again 32 nodes later, where x and the statistics are read anyway:
// the late reader gets (x - mean) * (w / sqrt(var + eps)) + b, relu'd, made right before it.
TEST(PassRemat, ReluOfBatchNormIsRecomputedForItsLateReader) {
  const std::string in = header() + filler(10, 32) + "  %42 = mul{}(%8, %9) : " + kAct + "\n  %43 = add{}(%42, %4) : " + kAct +
                         "\n  %44 = add{}(%6, %7) : float32[64]\n  return %43, %44, %41\n}";
  const std::string want = header() + filler(10, 32) +
                           "  %42 = constant{dtype=float32, weak=false, f=1e-05, i=0}() : float32[]\n"
                           "  %43 = add{}(%7, %42) : float32[64]\n"
                           "  %44 = sqrt{a=0, b=0}(%43) : float32[64]\n"
                           "  %45 = reciprocal{a=0, b=0}(%44) : float32[64]\n"
                           "  %46 = mul{}(%45, %1) : float32[64]\n"
                           "  %47 = reshape{shape=[64, 1, 1]}(%6) : float32[64, 1, 1]\n"
                           "  %48 = sub{}(%4, %47) : " + std::string(kAct) + "\n"
                           "  %49 = reshape{shape=[64, 1, 1]}(%46) : float32[64, 1, 1]\n"
                           "  %50 = mul{}(%48, %49) : " + kAct + "\n"
                           "  %51 = reshape{shape=[64, 1, 1]}(%2) : float32[64, 1, 1]\n"
                           "  %52 = add{}(%50, %51) : " + kAct + "\n"
                           "  %53 = relu{a=0, b=0}(%52) : " + kAct + "\n"
                           "  %54 = mul{}(%53, %9) : " + kAct + "\n  %55 = add{}(%54, %4) : " + kAct +
                           "\n  %56 = add{}(%6, %7) : float32[64]\n  return %55, %56, %41\n}";
  EXPECT_EQ(run_pass(rematerialize, in), canonical(want));
}

TEST(PassRemat, LeavesValuesThatDoNotQualify) {
  const std::string late = "  %42 = mul{}(%8, %9) : " + std::string(kAct) + "\n";
  // The batch norm's input is not read after the late reader: recomputing would keep it alive.
  auto x_dead = parse(header() + filler(10, 32) + late + "  %43 = add{}(%6, %7) : float32[64]\n  return %42, %43, %41\n}");
  EXPECT_EQ(rematerialize(x_dead), x_dead);
  // Nor are the statistics.
  auto stats_dead = parse(header() + filler(10, 32) + late + "  %43 = add{}(%42, %4) : " + kAct + "\n  return %43, %41\n}");
  EXPECT_EQ(rematerialize(stats_dead), stats_dead);
  // Readers closer together than 32 nodes.
  auto near = parse(header() + filler(10, 8) + "  %18 = mul{}(%8, %9) : " + kAct + "\n  %19 = add{}(%18, %4) : " + kAct +
                    "\n  %20 = add{}(%6, %7) : float32[64]\n  return %19, %20, %17\n}");
  EXPECT_EQ(rematerialize(near), near);
  // A graph output lives to the end anyway.
  auto returned = parse(header() + filler(10, 32) + late + "  %43 = add{}(%42, %4) : " + kAct +
                        "\n  %44 = add{}(%6, %7) : float32[64]\n  return %43, %44, %41, %8\n}");
  EXPECT_EQ(rematerialize(returned), returned);
  // Below 1 MiB.
  auto small = parse(R"(
graph @main(%0: data float32[4, 8, 4, 4], %1: data float32[8]) {
  %2 = relu{a=0, b=0}(%0) : float32[4, 8, 4, 4]
  %3 = mul{}(%2, %2) : float32[4, 8, 4, 4]
)" + filler(4, 32).replace(filler(4, 32).find("%3)"), 3, "%1)") +
                     "  %36 = mul{}(%2, %3) : float32[4, 8, 4, 4]\n  %37 = add{}(%36, %0) : float32[4, 8, 4, 4]\n  return %37, %35\n}");
  EXPECT_EQ(rematerialize(small), small);
}

}  // namespace
}  // namespace spore::passes
