// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the data pipeline tests.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "spore/data/dataset.h"
#include "spore/data/sources.h"
#include "spore/data/transforms.h"
#include "spore/ops/creation.h"

namespace spore::data::testing {

inline const std::string kFashionDir = "/usr/share/datasets/fashion-mnist";

/// A temporary directory removed when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() / ("spore_data_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// Every row of one epoch, each column flattened to doubles (easy to compare).
inline std::vector<std::vector<std::vector<double>>> collect(const std::shared_ptr<Dataset>& ds, uint64_t epoch = 0) {
  std::vector<std::vector<std::vector<double>>> rows;
  auto it = ds->iterate(epoch);
  while (auto row = it.next()) {
    std::vector<std::vector<double>> r;
    for (const Tensor& t : *row) r.push_back(t.to_vector<double>());
    rows.push_back(std::move(r));
  }
  return rows;
}

/// Column 0 of each row as one number (for 0-d integer columns).
inline std::vector<int64_t> firsts(const std::shared_ptr<Dataset>& ds, uint64_t epoch = 0) {
  std::vector<int64_t> out;
  auto it = ds->iterate(epoch);
  while (auto row = it.next()) {
    for (int64_t v : (*row)[0].to_vector<int64_t>()) out.push_back(v);
  }
  return out;
}

/// 0..n-1 as an int64 column, plus 10 * that as a second column.
inline std::shared_ptr<Dataset> counting(int64_t n) {
  std::vector<int64_t> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = i;
    b[i] = 10 * i;
  }
  return from_tensors({ops::from_vector(a), ops::from_vector(b)});
}

}  // namespace spore::data::testing
