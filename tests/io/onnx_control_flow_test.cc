// SPDX-License-Identifier: Apache-2.0
// ONNX If / Loop / Scan import on small models written by tests/io/onnx/make_control_flow_models.py;
// the expected numbers are worked out by hand in each test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "io/onnx/importer.h"
#include "spore/ops.h"
#include "transforms/interpreter.h"

namespace spore {
namespace {

namespace fs = std::filesystem;

class OnnxControlFlow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (fs::temp_directory_path() / ("spore_onnx_cf_" + std::to_string(::getpid()))).string();
    const std::string cmd =
        "/usr/bin/python3 " + std::string(SPORE_TESTS_DIR) + "/io/onnx/make_control_flow_models.py '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::vector<Tensor> run(const io::LoadedModel& m, std::vector<Tensor> args) {
    EXPECT_EQ(args.size(), m.num_data);
    args.insert(args.end(), m.state.begin(), m.state.end());
    return transforms::interpret(*m.graph, args);
  }
  static io::LoadedModel load(const std::string& name) { return io::import_onnx(dir_ + "/" + name + ".onnx"); }
  static std::vector<float> values(const Tensor& t) { return t.to(DType::Float32).to_vector<float>(); }
  static inline std::string dir_;
};

TEST_F(OnnxControlFlow, LoopWithTripCountStacksScanOutputs) {
  // s = 0; for i in 0..3: s += x + i. With x = (1, 2): (1, 2), (3, 5), (6, 9), (10, 14).
  auto m = load("loop_sum");
  ASSERT_EQ(m.num_data, 1u);
  auto out = run(m, {ops::tensor({1.f, 2.f})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values(out[0]), (std::vector<float>{10, 14}));
  EXPECT_EQ(out[1].shape(), (Shape{4, 2}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{1, 2, 3, 5, 6, 9, 10, 14}));
  // x is read by the body at run time, not folded: another x gives other sums.
  out = run(m, {ops::tensor({0.f, -1.f})});
  EXPECT_EQ(values(out[0]), (std::vector<float>{6, 2}));  // 0+1+2+3, -4+6
}

TEST_F(OnnxControlFlow, LoopWithRunTimeCondition) {
  // v doubles while v < limit: 1 -> 2 -> 4 -> ... -> 32 for limit 20; 1 -> 2 -> 4 for limit 3.
  auto m = load("loop_while");
  auto v = [&](float v0, float limit) {
    return values(run(m, {ops::scalar_tensor(v0, DType::Float32), ops::scalar_tensor(limit, DType::Float32)})[0])[0];
  };
  EXPECT_EQ(v(1, 20), 32.f);
  EXPECT_EQ(v(1, 3), 4.f);
  EXPECT_EQ(v(5, 3), 5.f);  // the condition is false on entry: no iteration
  EXPECT_EQ(v(3, 100), 192.f);
}

TEST_F(OnnxControlFlow, IfOnRunTimeCondition) {
  // sum(x) > 0 ? x + x : x - 1
  auto m = load("if_sign");
  EXPECT_EQ(values(run(m, {ops::tensor({1.f, 2.f})})[0]), (std::vector<float>{2, 4}));
  EXPECT_EQ(values(run(m, {ops::tensor({-3.f, 1.f})})[0]), (std::vector<float>{-4, 0}));
}

TEST_F(OnnxControlFlow, ScanInReverse) {
  // Rows (1,2), (3,4), (5,6) walked from the end onto acc0 = (10, 0).
  auto m = load("scan_reverse");
  auto out = run(m, {ops::tensor({10.f, 0.f}), ops::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values(out[0]), (std::vector<float>{19, 12}));
  EXPECT_EQ(values(out[1]), (std::vector<float>{15, 6, 18, 10, 19, 12}));
}

}  // namespace
}  // namespace spore
