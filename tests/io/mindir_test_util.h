// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the MindIR tests: a fresh temporary path per test, bitwise output comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "spore/spore.h"

namespace spore::testing {

/// A path in a per-process temporary directory (removed with the process's other files by
/// the caller's TearDown, or left in /tmp).
inline std::string temp_model_path(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("spore_mindir_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

/// A whole file's bytes, and writing them back (the corrupt-file tests).
inline std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Same shape, dtype and bytes (NaNs equal when their bits are).
inline void expect_bitwise_equal(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const Tensor a = got.contiguous(), b = want.contiguous();
  const size_t n = static_cast<size_t>(a.numel()) * a.itemsize();
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), n), 0) << what << "\n got " << a.str() << "\n want " << b.str();
}

}  // namespace spore::testing
