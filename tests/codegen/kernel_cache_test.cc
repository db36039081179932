// SPDX-License-Identifier: Apache-2.0
// The kernel cache and the compiler fallback across processes: the test binary runs itself as a
// child (a DISABLED_ test picked with a gtest filter) with SPORE_KERNEL_CACHE and SPORE_CXX set,
// and reads the counters the child prints.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
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

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// The key named by an entry's file name.
uint64_t entry_key(const std::string& entry) {
  const std::string name = entry.substr(entry.rfind('/') + 1);
  return std::stoull(name.substr(0, name.size() - 3), nullptr, 16);
}

CacheDir open_dir(const std::string& dir) {
  std::string why;
  CacheDir d = open_cache_dir(dir, false, &why);
  EXPECT_TRUE(d) << dir << ": " << why;
  return d;
}

// Stores `bytes` as the object of the entry for `key` with `material`.
bool store_bytes(const CacheDir& d, uint64_t key, const std::string& material, const std::string& bytes) {
  char tmpl[] = "/tmp/spore-test-object-XXXXXX";
  Fd f(::mkstemp(tmpl));
  ::unlink(tmpl);
  if (!f || ::write(f.get(), bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) return false;
  std::string error;
  const bool ok = static_cast<bool>(cache_store(d, key, material, f.get(), &error));
  EXPECT_TRUE(ok) << error;
  return ok;
}

// Child: compiles emitter program `index` (through the cache), checks it against the
// interpreter and prints the process's counters.
void compile_and_check(size_t index) {
  std::mt19937 rng(3);
  const auto prog = testing::emitter_programs()[index];
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
            << " collisions=" << s.collisions << " stores=" << s.stores << "\n";
}

TEST(KernelCacheChild, DISABLED_CompileGeluBiasSigmoid) { compile_and_check(4); }

// Another unit, of another arity (two inputs, not four).
TEST(KernelCacheChild, DISABLED_CompileExactUnary) { compile_and_check(2); }

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

// Child: a graph with four fused groups at O2, separated by matmuls (no group spans them), the
// first and third the same program: one compiler run builds the three distinct kernels, one
// translation unit.
TEST(KernelCacheChild, DISABLED_JitThreeFusedGroups) {
  std::mt19937 rng(10);
  auto f = [](const Tensor& x, const Tensor& w) {
    const Tensor a = ops::matmul(ops::sigmoid(x * 2.0 + 1.0), w);
    // a * a and b * b: no matmul epilogue (passes/matmul_epilogue.h) takes these groups; the two
    // are one kernel, so the plan has three distinct ones.
    const Tensor b = ops::matmul(ops::sigmoid(a * a - 1.0), w);
    const Tensor c = ops::matmul(ops::sigmoid(b * b - 1.0), w);
    return c * c - 0.5;
  };
  const Tensor x = testing::random_tensor({64, 64}, DType::Float32, rng), w = testing::random_tensor({64, 64}, DType::Float32, rng);
  ::setenv("SPORE_OPT_LEVEL", "1", 1);
  const Tensor want = jit(f, "three_O1")(x, w);
  ::setenv("SPORE_OPT_LEVEL", "2", 1);
  auto f2 = jit(f, "three_O2");
  f2(x, w);
  wait_for_compiles();
  const Tensor got = f2(x, w);
  ::unsetenv("SPORE_OPT_LEVEL");
  EXPECT_LE(testing::max_error_eps(got, want), 256);
  std::cout << "invocations=" << compiler_invocations() << " stores=" << kernel_cache_stats().stores << "\n";
}

class KernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::use_test_kernel_cache();
    if (!host_compiler()) GTEST_SKIP() << "no C++ compiler (c++/g++) on PATH: the kernel cache cannot be exercised";
    dir_ = testing::fresh_temp_dir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { testing::remove_temp_dir(dir_); }
  std::string env(const std::string& dir) const { return testing::child_compiler_env() + " SPORE_KERNEL_CACHE='" + dir + "'"; }
  std::string env() const { return env(dir_); }
  testing::UseHostCompiler compiler_;  // the binary defaults to SPORE_CXX=none
  std::string dir_;
};

// The cache's own checks, on hand-made entries (no compiler needed).
class KernelCacheEntries : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::fresh_temp_dir();
    other_ = testing::fresh_temp_dir();
    ASSERT_FALSE(dir_.empty());
    ASSERT_FALSE(other_.empty());
  }
  void TearDown() override {
    testing::remove_temp_dir(dir_);
    testing::remove_temp_dir(other_);
  }
  std::string dir_, other_;
};

TEST_F(KernelCacheEntries, AStoredEntryIsFoundOnlyWithItsOwnKeyMaterial) {
  CacheDir d = open_dir(dir_);
  ASSERT_TRUE(d);
  const uint64_t key = 0x1234;
  ASSERT_TRUE(store_bytes(d, key, "unit A", "object bytes"));
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/" + key_hex(key) + ".so").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(cache_lookup(d, key, "unit A"));

  // Same file name (a 64-bit hash collision), other key material: a miss, never the entry.
  const int64_t collisions = kernel_cache_stats().collisions;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache_lookup(d, key, "unit B"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(kernel_cache_stats().collisions, collisions + 1);
  EXPECT_NE(err.find("holds another unit"), std::string::npos) << err;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache_lookup(d, key, "unit A "));  // a prefix is not a match either
  ::testing::internal::GetCapturedStderr();

  // The next store replaces it.
  ASSERT_TRUE(store_bytes(d, key, "unit B", "other object"));
  EXPECT_TRUE(cache_lookup(d, key, "unit B"));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache_lookup(d, key, "unit A"));
  ::testing::internal::GetCapturedStderr();
}

TEST_F(KernelCacheEntries, ASymlinkedEntryIsRefusedAndRemoved) {
  CacheDir target = open_dir(other_);
  CacheDir d = open_dir(dir_);
  ASSERT_TRUE(target && d);
  const uint64_t key = 0xabcdef;
  const std::string name = std::string("/").append(key_hex(key)).append(".so");
  ASSERT_TRUE(store_bytes(target, key, "unit", "object bytes"));
  ASSERT_TRUE(cache_lookup(target, key, "unit"));  // a valid entry where the link points
  ASSERT_EQ(::symlink((other_ + name).c_str(), (dir_ + name).c_str()), 0);
  const int64_t corrupt = kernel_cache_stats().corrupt;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache_lookup(d, key, "unit"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("is corrupt (it is a symbolic link)"), std::string::npos) << err;
  EXPECT_EQ(kernel_cache_stats().corrupt, corrupt + 1);
  struct stat st {};
  EXPECT_NE(::lstat((dir_ + name).c_str(), &st), 0) << "the link was not removed";
  EXPECT_EQ(::lstat((other_ + name).c_str(), &st), 0) << "the link's target was removed";
}

TEST_F(KernelCacheEntries, AnEntryWritableByOthersOrTruncatedIsRefused) {
  CacheDir d = open_dir(dir_);
  ASSERT_TRUE(d);
  const uint64_t key = 42;
  const std::string path = dir_ + "/" + key_hex(key) + ".so";
  ASSERT_TRUE(store_bytes(d, key, "unit", "object bytes"));
  ASSERT_EQ(::chmod(path.c_str(), 0622), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache_lookup(d, key, "unit"));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("it is writable by group or others"), std::string::npos) << err;

  ASSERT_TRUE(store_bytes(d, key, "unit", "object bytes"));
  ASSERT_EQ(::truncate(path.c_str(), 20), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(cache_lookup(d, key, "unit"));
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("is corrupt (shorter than its trailer)"), std::string::npos) << err;
}

TEST_F(KernelCacheEntries, AGroupWritableAncestorIsRefusedUnlessSticky) {
  const std::string cache = dir_ + "/spore/kernels";
  std::string why;
  ASSERT_TRUE(open_cache_dir(cache, true, &why)) << why;
  EXPECT_EQ(cache_dir_problem(cache), "");
  ASSERT_EQ(::chmod(dir_.c_str(), 0770), 0);
  EXPECT_EQ(cache_dir_problem(cache),
            "its ancestor " + real_path(dir_) + " is writable by group or others and not sticky (chmod go-w it)");
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);  // like /tmp: others cannot rename what is ours
  EXPECT_EQ(cache_dir_problem(cache), "");
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  ASSERT_EQ(::chmod((dir_ + "/spore").c_str(), 0720), 0);
  EXPECT_NE(cache_dir_problem(cache).find("its ancestor " + real_path(dir_ + "/spore") + " is writable"), std::string::npos)
      << cache_dir_problem(cache);
}

TEST_F(KernelCacheEntries, ASymlinkedDirectoryIsCheckedWhereItLeads) {
  ASSERT_EQ(::chmod(other_.c_str(), 0770), 0);
  const std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(other_.c_str(), link.c_str()), 0);
  EXPECT_NE(cache_dir_problem(link).find("it is writable by group or others"), std::string::npos) << cache_dir_problem(link);
  ASSERT_EQ(::chmod(other_.c_str(), 0700), 0);
  EXPECT_EQ(cache_dir_problem(link), "");
}

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

TEST_F(KernelCache, APlanCompilesAllItsFusedGroupsAsOneUnit) {
  ChildResult a = run_child("DISABLED_JitThreeFusedGroups", env());
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 1) << a.output;
  EXPECT_EQ(counter(a.output, "stores"), 1) << a.output;
}

// A graph's unit that does not build falls back to its kernels one by one: with a compiler that
// refuses units of several kernels, the plan still ends up compiled (four compiler runs: the
// refused unit, then the three distinct kernels).
TEST_F(KernelCache, AUnitThatFailsFallsBackToOneKernelAtATime) {
  const std::string cxx = std::string(SPORE_TESTS_DIR) + "/codegen/cxx_refusing_units.sh";
  const std::string real = testing::startup_spore_cxx();
  const std::string env = (real.empty() || real == "none" ? std::string() : "SPORE_TEST_REAL_CXX='" + real + "' ") +
                          "SPORE_CXX='" + cxx + "' SPORE_KERNEL_CACHE='" + dir_ + "'";
  ChildResult a = run_child("DISABLED_JitThreeFusedGroups", env);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 4) << a.output;
  EXPECT_EQ(counter(a.output, "stores"), 3) << a.output;
  EXPECT_NE(a.output.find("refusing a multi-kernel unit"), std::string::npos) << a.output;
}

TEST_F(KernelCache, AnEntryHoldingAnotherUnitIsAMissAndIsReplaced) {
  // A real object of another unit (two inputs, not four) under gelu's file name with a valid
  // trailer and checksum: what a 64-bit hash collision would leave.
  const std::string other_dir = testing::fresh_temp_dir();
  ChildResult o = run_child("DISABLED_CompileExactUnary", env(other_dir));
  ASSERT_EQ(o.status, 0) << o.output;
  const std::string other_entry = only_entry(other_dir);
  ASSERT_FALSE(other_entry.empty());
  ChildResult a = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  ASSERT_EQ(a.status, 0) << a.output;
  const std::string entry = only_entry(dir_);
  ASSERT_FALSE(entry.empty());
  {
    CacheDir d = open_dir(dir_);
    Fd other(::open(other_entry.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(d && other);
    std::string error;
    ASSERT_TRUE(cache_store(d, entry_key(entry), "spore kernel unit\narity spore_kernel(2 in: ...)", other.get(), &error))
        << error;
  }
  testing::remove_temp_dir(other_dir);

  ChildResult b = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  ASSERT_EQ(b.status, 0) << "the forged entry was run:\n" << b.output;
  EXPECT_EQ(counter(b.output, "collisions"), 1) << b.output;
  EXPECT_EQ(counter(b.output, "invocations"), 1) << b.output;
  EXPECT_EQ(counter(b.output, "stores"), 1) << b.output;
  EXPECT_NE(b.output.find("holds another unit (its key material differs"), std::string::npos) << b.output;

  ChildResult c = run_child("DISABLED_CompileGeluBiasSigmoid", env());
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(counter(c.output, "invocations"), 0) << "the replaced entry was not reused:\n" << c.output;
  EXPECT_EQ(counter(c.output, "hits"), 1) << c.output;
}

TEST_F(KernelCache, ACacheUnderAGroupWritableParentIsRefused) {
  const std::string cache = dir_ + "/kernels";
  ASSERT_EQ(::mkdir(cache.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0770), 0);
  ChildResult a = run_child("DISABLED_CompileGeluBiasSigmoid", env(cache));
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("[codegen] not using the kernel cache " + cache + ": its ancestor " + real_path(dir_) +
                          " is writable by group or others"),
            std::string::npos) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 1) << a.output;
  EXPECT_EQ(counter(a.output, "stores"), 0) << a.output;
  EXPECT_TRUE(only_entry(cache).empty());
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
  testing::remove_temp_dir(dir);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_EQ(count_of(a.output, "[codegen] no C++ compiler for generated kernels (SPORE_CXX=none); fused kernels run on "
                               "the loop interpreter"),
            1) << a.output;
  EXPECT_EQ(counter(a.output, "invocations"), 0) << a.output;
}

}  // namespace
}  // namespace spore::codegen
