// SPDX-License-Identifier: Apache-2.0
// The zoo's "PyTorch names" claim, made real: torchvision's own resnet18 and mobilenet_v2 (random
// weights, randomized BatchNorm statistics, eval mode) are exported by /usr/bin/python3 to .npy
// files, loaded strictly into Spore's models by name, and both frameworks' outputs compared.
#include <gtest/gtest.h>
#include <spore/data/sources.h>
#include <spore/models/mobilenet.h>
#include <spore/models/resnet.h>
#include <spore/spore.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace spore::models {
namespace {

namespace fs = std::filesystem;

class TorchvisionWeights : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("spore_zoo_torchvision_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string log = (dir_ / "export.log").string();
    const std::string cmd = "/usr/bin/python3 " + std::string(SPORE_TESTS_DIR) + "/models/export_torchvision.py '" +
                            dir_.string() + "' resnet18 mobilenet_v2 > '" + log + "' 2>&1";
    const int status = std::system(cmd.c_str());
    export_ok_ = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!export_ok_) {
      std::ifstream in(log);
      std::stringstream ss;
      ss << in.rdbuf();
      export_error_ = "exporting torchvision models failed (exit status " +
                      std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ") running\n  " + cmd + "\n" +
                      ss.str();
    }
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// Loads OUT/<name>/ strictly into `net` and compares its eval-mode output with torchvision's.
  static void check(nn::UnaryCell& net, const std::string& name) {
    ASSERT_TRUE(export_ok_) << export_error_;
    const fs::path d = dir_ / name;
    std::ifstream keys(d / "keys.txt");
    std::vector<std::pair<std::string, Tensor>> sd;
    for (std::string k; std::getline(keys, k);)
      if (!k.empty()) sd.emplace_back(k, data::read_npy((d / (k + ".npy")).string()));
    ASSERT_EQ(sd.size(), net.state_dict().size()) << name;
    Tensor x = data::read_npy((d / "input.npy").string());
    Tensor expected = data::read_npy((d / "output.npy").string());
    const std::vector<float> before = [&] {
      net.eval();
      return net(x).to_vector<float>();
    }();
    net.load_state_dict(sd);  // strict: every name must match torchvision's
    net.eval();
    Tensor got = net(x);
    ASSERT_EQ(got.shape(), expected.shape());
    const auto a = got.to_vector<float>(), b = expected.to_vector<float>();
    float scale = 0, worst = 0, worst_before = 0;
    for (float v : b) scale = std::max(scale, std::abs(v));
    for (size_t i = 0; i < a.size(); ++i) {
      // rtol 1e-4, with an absolute floor of 1e-5 of the output's scale for entries near zero.
      EXPECT_LE(std::abs(a[i] - b[i]), 1e-4f * std::abs(b[i]) + 1e-5f * scale) << name << " output " << i;
      worst = std::max(worst, std::abs(a[i] - b[i]));
      worst_before = std::max(worst_before, std::abs(before[i] - b[i]));
    }
    // The comparison can fail: Spore's own random weights are far from torchvision's output.
    EXPECT_GT(worst_before, 1e-2f * scale) << name;
    std::cout << name << ": max |spore - torch| = " << worst << " (output scale " << scale << ")\n";
  }

  static inline fs::path dir_;
  static inline bool export_ok_ = false;
  static inline std::string export_error_;
};

TEST_F(TorchvisionWeights, ResNet18LoadsAndMatches) {
  auto net = resnet18();
  check(*net, "resnet18");
}

TEST_F(TorchvisionWeights, MobileNetV2LoadsAndMatches) {
  auto net = mobilenet_v2();
  check(*net, "mobilenet_v2");
}

}  // namespace
}  // namespace spore::models
