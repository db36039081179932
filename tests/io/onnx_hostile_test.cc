// SPDX-License-Identifier: Apache-2.0
// Hostile ONNX files (tests/io/onnx/make_hostile_models.py), each found by review or by the
// fuzzer: a few hundred bytes that ask for gigabytes, index an empty list or describe a graph the
// IR refuses. Import fails with a clear spore::Error naming the node, allocates nothing big and
// never escapes with another exception type.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "error_matchers.h"
#include "io/onnx/importer.h"
#include "spore/memory.h"

namespace spore {
namespace {

namespace fs = std::filesystem;

class OnnxHostile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (fs::temp_directory_path() / ("spore_onnx_hostile_" + std::to_string(::getpid()))).string();
    const std::string cmd = "/usr/bin/python3 " + std::string(SPORE_TESTS_DIR) + "/io/onnx/make_hostile_models.py '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& f) { return dir_ + "/" + f + ".onnx"; }

  // The import fails with `text` in a spore::Error, and the allocator's peak grew by < 64 MB.
  static void expect_refused(const std::string& name, const std::string& text) {
    SCOPED_TRACE(name);
    reset_peak_memory_stats();
    const size_t before = memory_stats().bytes_in_use;
    std::string msg = "(no error)";
    try {
      io::import_onnx(path(name));
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find(text), std::string::npos) << "got: " << msg;
    EXPECT_LT(memory_stats().peak_bytes_in_use - before, size_t{64} << 20);
  }
  static inline std::string dir_;
};

TEST_F(OnnxHostile, InitializerDeclaringBillionsOfElementsWithoutData) {
  expect_refused("huge_initializer", "has 0 values in int64_data, but its shape (4294967296,) needs 4294967296");
}

TEST_F(OnnxHostile, ConstantExpressionsHaveAnAllocationBudget) {
  expect_refused("constant_of_shape_bomb", "evaluating the ONNX file's constant expressions at import may allocate");
}

TEST_F(OnnxHostile, EmptyScalarInput) { expect_refused("topk_empty_k", "input 1 must hold one value, got 0"); }

TEST_F(OnnxHostile, BranchesWithoutOutputs) { expect_refused("if_without_outputs", "the branches return no tensor"); }

TEST_F(OnnxHostile, UnsupportedOperatorsInSubgraphsAreListedWithTheRest) {
  expect_refused("unsupported_nested", "uses 2 operator(s) Spore cannot import at opset 13: NoSuchOpInBody (node 'inner'); "
                                       "NoSuchOpOutside (node 'outer')");
}

}  // namespace
}  // namespace spore
