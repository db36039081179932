// SPDX-License-Identifier: Apache-2.0
// Loading a MindIR file does not copy its weights: every loaded tensor is a view of the file's
// mapping (its address lies in a mapping of that file, per /proc/self/maps), the mapping lives as
// long as a tensor uses it, and writing a loaded weight (fine-tuning) changes neither the file
// nor a second load of it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "mindir_test_util.h"
#include "spore/io/mindir.h"

namespace spore {
namespace {

// The path of the file mapped at `p`, or "" when `p` is not in a file mapping.
std::string mapped_file_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || addr < lo || addr >= hi) continue;
    const size_t slash = line.find('/');
    return slash == std::string::npos ? std::string() : line.substr(slash);
  }
  return {};
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(MindirZeroCopy, WeightsAreViewsOfTheMappedFile) {
  manual_seed(5);
  nn::Dense dense(64, 32);
  const Tensor x = ops::uniform({4, 64});
  const std::string path = testing::temp_model_path("zero_copy.mindir");
  io::export_mindir(dense, [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{dense(in[0])}; }, {x}, path);
  const std::string before = file_bytes(path);

  Tensor weight;
  {
    io::GraphCell cell = io::load_mindir(path);
    auto params = cell.named_parameters();
    ASSERT_EQ(params.size(), 2u);
    for (const auto& [name, t] : params) {
      EXPECT_EQ(mapped_file_of(t.data_ptr()), std::filesystem::canonical(path).string())
          << name << " is not a view of the mapped file";
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u) << name;
    }
    weight = params[0].second;
    testing::expect_bitwise_equal(cell({x})[0], dense(x), "output");
  }
  // The cell is gone; the tensor still holds the mapping and reads the same values.
  testing::expect_bitwise_equal(weight, dense.weight, "weight after the cell is destroyed");
  // Writing a loaded weight (what an optimizer does) stays private to this process.
  ops::copy_(weight, ops::zeros_like(weight));
  EXPECT_EQ(file_bytes(path), before) << "writing a loaded weight changed the file";
  io::GraphCell again = io::load_mindir(path);
  testing::expect_bitwise_equal(again.named_parameters()[0].second, dense.weight, "second load");
}

}  // namespace
}  // namespace spore
