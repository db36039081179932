// SPDX-License-Identifier: Apache-2.0
// The kernel cache and the compiler fallback across processes: the test binary runs itself as a
// child (a DISABLED_ test picked with a gtest filter) with SPORE_KERNEL_CACHE and SPORE_CXX set,
// and reads the counters the child prints.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <iostream>

#include "codegen/compiled_kernel.h"
#include "codegen/compiler.h"
#include "codegen/kernel_cache.h"
#include "codegen/loop_interpreter.h"
#include "codegen/schedule.h"
#include "codegen_programs.h"
#include "kernel_test_env.h"
#include "transforms/interpreter.h"

namespace spore::codegen {
namespace {

using namespace ops;

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

struct ChildResult {
  int status = -1;
  std::string output;
};

// Runs one DISABLED_ child test of this binary with `env` ("NAME=value ...", shell-quoted).
ChildResult run_child(const std::string& test, const std::string& env) {
  const std::string cmd = env + " '" + self_exe() + "' --gtest_also_run_disabled_tests --gtest_filter=KernelCacheChild." +
                          test + " 2>&1";
  ChildResult r;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) r.output.append(buf, n);
  r.status = ::pclose(f);
  return r;
}

// The value the child printed as "name=<int>", or -1.
long counter(const std::string& out, const std::string& name) {
  const size_t p = out.find(name + "=");
  return p == std::string::npos ? -1 : std::stol(out.substr(p + name.size() + 1));
}

std::string only_entry(const std::string& dir) {
  std::string found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 3 && n.substr(n.size() - 3) == ".so") found = dir + "/" + n;
    }
    ::closedir(d);
  }
  return found;
}

testing::Program gelu_program() { return testing::emitter_programs()[4]; }

// Child: compiles gelu_bias_sigmoid (through the cache), checks it against the interpreter and
// prints the process's counters.
TEST(KernelCacheChild, DISABLED_CompileGeluBiasSigmoid) {
  std::mt19937 rng(3);
  const auto prog = gelu_program();
  std::vector<Tensor> in;
  for (int i = 0; i < prog.inputs; ++i) in.push_back(testing::random_tensor({3, 1000}, DType::Float32, rng));
  const LoopProgram p = lower(*testing::trace(prog.fn, in));
  std::string why;
  const KernelFn fn = compile_now(p, &why);
  ASSERT_NE(fn, nullptr) << why;
  auto want = testing::outputs_of(p, {3, 1000}), got = testing::outputs_of(p, {3, 1000});
  run_loop_program(p, make_schedule(p, 3000), testing::buffers(in), testing::buffers(want));
  run_compiled(fn, p, testing::buffers(in), testing::buffers(got));
  EXPECT_LE(testing::max_error_eps(got[0], want[0]), 256);
  const KernelCacheStats s = kernel_cache_stats();
  std::cout << "invocations=" << compiler_invocations() << " hits=" << s.hits << " corrupt=" << s.corrupt
            << " stores=" << s.stores << "\n";
}

// Child: a fused node under jit at O2, called before and after its compile; with SPORE_CXX=none
// both calls run the interpreter. Results must match O1 (unfused) either way.
TEST(KernelCacheChild, DISABLED_JitFusedNode) {
  std::mt19937 rng(9);
  auto chain = [](const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& z) {
    return ops::gelu(x * w + b) * ops::sigmoid(z);
  };
  std::vector<Tensor> in;
  for (int i = 0; i < 4; ++i) in.push_back(testing::random_tensor({4, 4096}, DType::Float32, rng));
  ::setenv("SPORE_OPT_LEVEL", "1", 1);
  auto f1 = jit(chain, "chain_O1");
  Tensor want = f1(in[0], in[1], in[2], in[3]);
  ::setenv("SPORE_OPT_LEVEL", "2", 1);
  auto f2 = jit(chain, "chain_O2");
  Tensor first = f2(in[0], in[1], in[2], in[3]);
  wait_for_compiles();
  Tensor second = f2(in[0], in[1], in[2], in[3]);
  ::unsetenv("SPORE_OPT_LEVEL");
  EXPECT_LE(testing::max_error_eps(first, want), 256);
  EXPECT_LE(testing::max_error_eps(second, want), 256);
  std::cout << "invocations=" << compiler_invocations() << " hits=" << kernel_cache_stats().hits << "\n";
}

class KernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::use_test_kernel_cache();
    if (!host_compiler()) GTEST_SKIP() << "no C++ compiler (c++/g++) on PATH: the kernel cache cannot be exercised";
    dir_ = testing::fresh_temp_dir();
    ASSERT_FALSE(dir_.empty());
  }
  std::string env() const { return "SPORE_KERNEL_CACHE='" + dir_ + "'"; }
  std::string dir_;
};

TEST_F(KernelCache, ASecondProcessReusesTheEntryAndACorruptOneIsRebuilt) {
  ChildResult a = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 1) << a.output;
  EXPECT_EQ(counter(a.output, "stores"), 1) << a.output;
  const std::string entry = only_entry(dir_);
  ASSERT_FALSE(entry.empty()) << "no entry in " << dir_;

  ChildResult b = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(counter(b.output, "invocations"), 0) << "the second process compiled again:\n" << b.output;
  EXPECT_EQ(counter(b.output, "hits"), 1) << b.output;

  {  // Flip bytes in the middle of the shared object.
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const auto size = static_cast<std::streamoff>(f.tellg());
    f.seekp(size / 2);
    f.write("\xde\xad\xbe\xef", 4);
  }
  ChildResult c = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(counter(c.output, "corrupt"), 1) << c.output;
  EXPECT_EQ(counter(c.output, "invocations"), 1) << c.output;
  EXPECT_NE(c.output.find("is corrupt (checksum mismatch); deleted, rebuilding it"), std::string::npos) << c.output;

  ChildResult d = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  EXPECT_EQ(counter(d.output, "invocations"), 0) << "the rebuilt entry was not reused:\n" << d.output;
}

TEST_F(KernelCache, AJitFusedNodeSwitchesToTheCompiledKernel) {
  ChildResult a = run_child("DISABLED_JitFusedNode", env());
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 1) << a.output;
  ChildResult b = run_child("DISABLED_JitFusedNode", env());
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(counter(b.output, "invocations"), 0) << b.output;
  EXPECT_EQ(counter(b.output, "hits"), 1) << b.output;
}

TEST_F(KernelCache, AGroupWritableDirectoryIsRefused) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0770), 0);
  EXPECT_NE(cache_dir_problem(dir_).find("writable by group or others"), std::string::npos) << cache_dir_problem(dir_);
  ChildResult a = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("[codegen] not using the kernel cache " + dir_ + ": it is writable by group or others"),
            std::string::npos) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 1) << a.output;
  EXPECT_EQ(counter(a.output, "stores"), 0) << a.output;
  EXPECT_TRUE(only_entry(dir_).empty());
}

TEST(KernelCacheNoCompiler, SporeCxxNoneRunsTheInterpreterWithANotice) {
  testing::use_test_kernel_cache();
  const std::string dir = testing::fresh_temp_dir();
  ChildResult a = run_child("DISABLED_JitFusedNode", "SPORE_CXX=none SPORE_KERNEL_CACHE='" + dir + "'");
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("[codegen] no C++ compiler for generated kernels (SPORE_CXX=none); fused kernels run on the "
                          "loop interpreter"),
            std::string::npos) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 0) << a.output;
}

}  // namespace
}  // namespace spore::codegen
