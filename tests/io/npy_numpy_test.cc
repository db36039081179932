// SPDX-License-Identifier: Apache-2.0
// .npy/.npz against numpy, bit for bit, both ways: numpy writes (every dtype, C and Fortran
// order, big-endian, 0-d and empty arrays, format versions 1-3, savez and savez_compressed) and
// Spore reads; Spore writes and numpy reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "npy_test_util.h"
#include "spore/io/npy.h"
#include "spore/ops/creation.h"

namespace spore::io {
namespace {

using testing::NpyTempDir;
using testing::read_file;
using testing::run_numpy;

struct Entry {
  std::string kind, path, key, dtype, raw;
  Shape shape;
};

std::vector<Entry> read_manifest(const std::string& file) {
  std::vector<Entry> out;
  std::istringstream in(read_file(file));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Entry e;
    ls >> e.kind >> e.path >> e.key >> e.dtype >> e.raw;
    for (int64_t d; ls >> d;) e.shape.push_back(d);
    out.push_back(e);
  }
  return out;
}

void expect_bitwise(const Tensor& t, const Entry& e) {
  SCOPED_TRACE(e.path + " " + e.key);
  EXPECT_EQ(dtype_name(t.dtype()), e.dtype);
  EXPECT_EQ(shape_str(t.shape()), shape_str(e.shape));
  ASSERT_TRUE(t.is_contiguous() || t.numel() == 0);
  const std::string want = read_file(e.raw);
  ASSERT_EQ(static_cast<size_t>(t.numel()) * t.itemsize(), want.size());
  EXPECT_EQ(std::memcmp(t.data_ptr(), want.data(), want.size()), 0) << "bytes differ from numpy's";
}

TEST(NpyNumpy, ReadsWhatNumpyWrites) {
  NpyTempDir dir("from_numpy");
  ASSERT_EQ(run_numpy("write", dir.path().string()), 0);
  const auto entries = read_manifest(dir.file("manifest.txt"));
  ASSERT_GE(entries.size(), 60u);
  std::map<std::string, std::vector<std::pair<std::string, Tensor>>> archives;
  int fortran = 0, big = 0;
  for (const auto& e : entries) {
    if (e.kind == "npy") {
      expect_bitwise(load_npy(e.path), e);
      fortran += e.path.find("/f_") != std::string::npos || e.path.find("/bef_") != std::string::npos;
      big += e.path.find("/be") != std::string::npos;
      continue;
    }
    if (!archives.count(e.path)) archives[e.path] = load_npz(e.path);
    const auto& members = archives[e.path];
    auto it = std::find_if(members.begin(), members.end(), [&](const auto& m) { return m.first == e.key; });
    ASSERT_NE(it, members.end()) << e.key << " missing from " << e.path;
    expect_bitwise(it->second, e);
  }
  EXPECT_EQ(fortran, 9 + 1 + 6);  // f_<dtype>, f_v2, bef_<multi-byte dtype>
  EXPECT_EQ(big, 6 + 6);
  ASSERT_EQ(archives.size(), 2u);
  for (const auto& [path, members] : archives) EXPECT_EQ(members.size(), 13u) << path;
}

/// Deterministic test data of every dtype (random bits for floats: NaNs, infinities, subnormals).
Tensor pattern(DType dt, const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape, dt);
  auto* p = static_cast<uint8_t*>(t.data_ptr());
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < static_cast<size_t>(t.numel()) * t.itemsize(); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p[i] = static_cast<uint8_t>(x);
  }
  if (dt == DType::Bool)
    for (int64_t i = 0; i < t.numel(); ++i) p[i] &= 1;
  return t;
}

void write_raw(const std::string& path, const Tensor& t) {
  const Tensor c = t.contiguous();
  testing::write_file(path, std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * c.itemsize()));
}

TEST(NpyNumpy, NumpyReadsWhatSporeWrites) {
  NpyTempDir dir("to_numpy");
  std::ostringstream manifest;
  auto line = [&](const std::string& kind, const std::string& path, const std::string& key, const Tensor& t,
                  const std::string& raw) {
    write_raw(raw, t);
    manifest << kind << ' ' << path << ' ' << key << ' ' << dtype_name(t.dtype()) << ' ' << raw;
    for (auto d : t.shape()) manifest << ' ' << d;
    manifest << '\n';
  };
  const DType dtypes[] = {DType::Bool,  DType::UInt8,   DType::Int8,    DType::Int16,  DType::Int32,
                          DType::Int64, DType::Float16, DType::Float32, DType::Float64};
  std::vector<std::pair<std::string, Tensor>> members;
  uint64_t seed = 1;
  for (DType dt : dtypes) {
    const std::string n(dtype_name(dt));
    for (const Shape& s : {Shape{3, 4, 5}, Shape{}, Shape{0, 3}, Shape{7}}) {
      const Tensor t = pattern(dt, s, seed++);
      const std::string file = dir.file(n + "_" + std::to_string(seed) + ".npy");
      save_npy(file, t);
      line("npy", file, "-", t, file + ".raw");
    }
    // A non-contiguous view is written in C order.
    const Tensor v = pattern(dt, {4, 6}, seed++).transpose(0, 1);
    ASSERT_FALSE(v.is_contiguous());
    const std::string file = dir.file(n + "_view.npy");
    save_npy(file, v);
    line("npy", file, "-", v, file + ".raw");
    members.emplace_back("m_" + n, pattern(dt, {2, 3}, seed++));
  }
  members.emplace_back("scalar", pattern(DType::Float64, {}, seed++));
  members.emplace_back("empty", pattern(DType::Int32, {0}, seed++));
  for (bool compressed : {false, true}) {
    const std::string file = dir.file(compressed ? "packed.npz" : "plain.npz");
    save_npz(file, members, compressed);
    for (const auto& [k, t] : members) line("npz", file, k, t, file + "." + k + ".raw");
  }
  testing::write_file(dir.file("manifest.txt"), manifest.str());
  EXPECT_EQ(run_numpy("check", dir.path().string()), 0) << "numpy disagrees; see its output above";
}

TEST(NpyNumpy, CompressedArchiveIsSmallerAndSporeRoundTrips) {
  NpyTempDir dir("roundtrip");
  std::vector<std::pair<std::string, Tensor>> members = {{"zeros", ops::zeros({256, 256})},
                                                         {"bits", pattern(DType::Float16, {5, 3}, 9)}};
  save_npz(dir.file("a.npz"), members, false);
  save_npz(dir.file("b.npz"), members, true);
  EXPECT_LT(std::filesystem::file_size(dir.file("b.npz")) * 20, std::filesystem::file_size(dir.file("a.npz")));
  for (const char* f : {"a.npz", "b.npz"}) {
    const auto back = load_npz(dir.file(f));
    ASSERT_EQ(back.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(back[i].first, members[i].first);
      EXPECT_EQ(shape_str(back[i].second.shape()), shape_str(members[i].second.shape()));
      EXPECT_EQ(std::memcmp(back[i].second.data_ptr(), members[i].second.data_ptr(),
                            static_cast<size_t>(members[i].second.numel()) * members[i].second.itemsize()),
                0);
    }
  }
}

}  // namespace
}  // namespace spore::io
