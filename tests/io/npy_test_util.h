// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers for the .npy/.npz tests: a temporary directory, file bytes, and the numpy oracle.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace spore::io::testing {

/// A temporary directory removed when the object goes.
class NpyTempDir {
 public:
  explicit NpyTempDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() / ("spore_npy_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~NpyTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// Runs tests/io/npy_numpy.py MODE DIR with Debian's python3 (which has numpy); returns its exit code.
inline int run_numpy(const std::string& mode, const std::string& dir) {
  const std::string cmd = "/usr/bin/python3 " SPORE_TESTS_DIR "/io/npy_numpy.py " + mode + " " + dir;
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

}  // namespace spore::io::testing
