// SPDX-License-Identifier: Apache-2.0
#include "passes/pipeline.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pass_text.h"
#include "passes/dce.h"
#include "spore/error.h"

namespace spore::passes {
namespace {

using testing::canonical;
using testing::parse;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const char* kProgram = R"(
graph @main(%0: data float32[2, 3]) {
  %1 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %2 = constant{dtype=float32, weak=true, f=0.5, i=0}() : ~float32[]
  %3 = mul{}(%1, %2) : ~float32[]
  %4 = mul{}(%0, %3) : float32[2, 3]
  %5 = reshape{shape=[6]}(%4) : float32[6]
  %6 = reshape{shape=[3, 2]}(%5) : float32[3, 2]
  %7 = exp{a=0, b=0}(%0) : float32[2, 3]
  %8 = exp{a=0, b=0}(%0) : float32[2, 3]
  %9 = add{}(%7, %8) : float32[2, 3]
  %10 = uniform{shape=[2], dtype=float32, p0=0, p1=1, a=0, b=0, seed=1, offset=0}() : float32[2]
  return %6, %9
})";

TEST(PassPipeline, Level1RunsEveryPass) {
  EXPECT_EQ(ir::print_graph(*optimize(parse(kProgram), 1)), canonical(R"(
graph @main(%0: data float32[2, 3]) {
  %1 = reshape{shape=[3, 2]}(%0) : float32[3, 2]
  %2 = exp{a=0, b=0}(%0) : float32[2, 3]
  %3 = add{}(%2, %2) : float32[2, 3]
  return %1, %3
})"));
}

TEST(PassPipeline, LevelZeroReturnsTheSameGraph) {
  auto g = parse(kProgram);
  EXPECT_EQ(optimize(g, 0), g);
}

TEST(PassPipeline, ListsPassesInOrder) {
  std::vector<std::string> names;
  for (const PassInfo& p : pipeline()) {
    names.push_back(p.name);
    EXPECT_GE(p.min_level, 1);
    EXPECT_LE(p.min_level, 2);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"fold_constants", "simplify", "cse", "dce", "transpose_matmul", "conv_epilogue",
                                               "matmul_bias", "matmul_epilogue", "remat", "fuse", "hoist_updates"}));
}

// SPORE_SKIP_PASSES leaves the named passes out (every level-1 pass here: nothing changes); a
// name that is no pass is a clear error listing the passes.
TEST(PassPipeline, SkippedPassesAreLeftOut) {
  const ir::GraphPtr g = parse(kProgram);
  {
    ScopedEnv env("SPORE_SKIP_PASSES", "fold_constants,simplify,cse,dce");
    EXPECT_EQ(optimize(g, 1), g);
  }
  {
    ScopedEnv env("SPORE_SKIP_PASSES", "cse");  // the other passes still run
    EXPECT_NE(optimize(g, 1), g);
  }
  ScopedEnv env("SPORE_SKIP_PASSES", "dce,fusion");
  try {
    optimize(g, 1);
    FAIL() << "an unknown pass name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SPORE_SKIP_PASSES names 'fusion', which is no pass; the passes are fold_constants"),
              std::string::npos)
        << e.what();
  }
}

TEST(PassPipeline, BadLevelsAreClearErrors) {
  try {
    optimize(parse(kProgram), 3);
    FAIL() << "level 3 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("level 3 is not 0, 1 or 2"), std::string::npos) << e.what();
  }
  ScopedEnv env("SPORE_OPT_LEVEL", "fast");
  try {
    default_level();
    FAIL() << "SPORE_OPT_LEVEL=fast accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SPORE_OPT_LEVEL is 'fast'; set it to 0"), std::string::npos) << e.what();
  }
}

TEST(PassPipeline, DefaultLevelComesFromTheEnvironment) {
  {
    ScopedEnv env("SPORE_OPT_LEVEL", "0");
    EXPECT_EQ(default_level(), 0);
  }
  {
    ScopedEnv env("SPORE_OPT_LEVEL", "2");
    EXPECT_EQ(default_level(), 2);
  }
  ScopedEnv env("SPORE_OPT_LEVEL", "");
  EXPECT_EQ(default_level(), 1);
}

TEST(PassPipeline, DumpsTheIrAfterEachPassThatChangedItAndATimingTable) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("spore_dump_ir_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                    std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  ir::GraphPtr out;
  {
    ScopedEnv env("SPORE_DUMP_IR", dir.string());
    out = optimize(parse(kProgram), 1);
  }
  EXPECT_EQ(read(dir / "00-input.mir"), canonical(kProgram));
  // Every pass changes this program, so each leaves a file; the last one is the result.
  for (const char* f : {"01-fold_constants.mir", "02-simplify.mir", "03-cse.mir", "04-dce.mir"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  EXPECT_EQ(read(dir / "04-dce.mir"), ir::print_graph(*out));
  const std::string timing = read(dir / "timing.txt");
  for (const char* name : {"fold_constants", "simplify", "cse", "dce"})
    EXPECT_NE(timing.find(name), std::string::npos) << timing;
  EXPECT_NE(timing.find("yes"), std::string::npos) << timing;
  std::filesystem::remove_all(dir);
}

TEST(PassPipeline, DumpSkipsPassesThatChangedNothing) {
  const auto dir = std::filesystem::temp_directory_path() / ("spore_dump_ir_same_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  {
    ScopedEnv env("SPORE_DUMP_IR", dir.string());
    optimize(parse("graph @main(%0: data float32[2]) {\n  %1 = exp{a=0, b=0}(%0) : float32[2]\n  return %1\n}"), 1);
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "00-input.mir"));
  EXPECT_FALSE(std::filesystem::exists(dir / "04-dce.mir"));
  const std::string timing = read(dir / "timing.txt");
  EXPECT_EQ(timing.find("yes"), std::string::npos) << timing;
  std::filesystem::remove_all(dir);
}

// A deliberately broken pass: it drops the graph's last node but keeps its outputs, so an
// output dangles.
ir::GraphPtr drop_last_node(const ir::GraphPtr& g) {
  auto nodes = g->nodes();
  nodes.pop_back();
  return std::make_shared<const ir::Graph>(g->name(), g->params(), nodes, g->outputs());
}

// A pass that changes the graph's signature (a valid graph with one more output).
ir::GraphPtr add_output(const ir::GraphPtr& g) {
  auto outs = g->outputs();
  outs.push_back(ir::Output{ir::ValueRef{ir::ValueRef::kParam, 0}});
  return std::make_shared<const ir::Graph>(g->name(), g->params(), g->nodes(), outs);
}

TEST(PassPipeline, TheVerifierNamesTheBrokenPass) {
  ScopedEnv env("SPORE_VERIFY_IR", "1");
  auto g = parse("graph @main(%0: data float32[2]) {\n  %1 = exp{a=0, b=0}(%0) : float32[2]\n  return %1\n}");
  const PassInfo broken[] = {{"dce", &eliminate_dead_code, 1}, {"drop_last_node", &drop_last_node, 1}};
  try {
    run_passes(g, broken, 1);
    FAIL() << "the broken graph passed";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("pass 'drop_last_node' left an invalid graph @main"), std::string::npos)
        << e.what();
  }
  const PassInfo resigned[] = {{"add_output", &add_output, 1}};
  try {
    run_passes(g, resigned, 1);
    FAIL() << "the changed signature passed";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("pass 'add_output' left an invalid graph @main: the number of outputs changed from 1 to 2"), std::string::npos) << e.what();
  }
}

TEST(PassPipeline, PassesAboveTheLevelDoNotRun) {
  const PassInfo only_o2[] = {{"drop_last_node", &drop_last_node, 2}};
  auto g = parse(kProgram);
  EXPECT_EQ(run_passes(g, only_o2, 1), g);
}

}  // namespace
}  // namespace spore::passes
