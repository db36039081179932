// SPDX-License-Identifier: Apache-2.0
// IDX reading: the real Fashion-MNIST files (values checked once with numpy), raw copies,
// and broken files (truncated, bad magic, random damage) that must fail clearly, never crash.
#include <gtest/gtest.h>
#include <cstdio>
#include <random>

#include "data/data_test_util.h"
#include "error_matchers.h"

namespace spore::data {
namespace {

using testing::kFashionDir;
using testing::TempDir;

// The raw bytes of a .gz file, by the gzip tool (independent of the reader under test).
std::string gunzip(const std::string& path) {
  FILE* p = ::popen(("gzip -dc '" + path + "'").c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out, buf(1 << 16, '\0');
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

// Values from /usr/bin/python3 with gzip + numpy on the Debian files.
void expect_fashion_train(const Tensor& images, const Tensor& labels) {
  ASSERT_EQ(images.shape(), (Shape{60000, 28, 28}));
  EXPECT_EQ(images.dtype(), DType::UInt8);
  ASSERT_EQ(labels.shape(), (Shape{60000}));
  const uint8_t* px = images.data<uint8_t>();
  const std::vector<uint8_t> row10 = {0, 0, 0, 193, 228, 218, 213, 198, 180, 212};  // image 0, row 10, cols 10..19
  for (int i = 0; i < 10; ++i) EXPECT_EQ(px[10 * 28 + 10 + i], row10[i]) << i;
  const std::vector<uint8_t> img1 = {1, 0, 11, 197, 199, 205, 202, 205, 206, 204};  // image 1, row 14, cols 5..14
  for (int i = 0; i < 10; ++i) EXPECT_EQ(px[784 + 14 * 28 + 5 + i], img1[i]) << i;
  int64_t sum0 = 0, total = 0;
  for (int i = 0; i < 784; ++i) sum0 += px[i];
  for (int64_t i = 0; i < images.numel(); ++i) total += px[i];
  EXPECT_EQ(sum0, 76247);
  EXPECT_EQ(total, 3431114169);
}

TEST(DataIdx, ReadsFashionMnistTrainGzipped) {
  const Tensor images = read_idx(kFashionDir + "/train-images-idx3-ubyte.gz");
  const Tensor labels = read_idx(kFashionDir + "/train-labels-idx1-ubyte.gz");
  expect_fashion_train(images, labels);
  const std::vector<int64_t> first = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
  const auto lv = labels.to_vector<int64_t>();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(lv[i], first[i]);
  EXPECT_EQ(lv.back(), 5);
  std::vector<int64_t> counts(10, 0);
  for (int64_t l : lv) {
    ASSERT_GE(l, 0);
    ASSERT_LE(l, 9);
    ++counts[l];
  }
  for (int64_t c : counts) EXPECT_EQ(c, 6000);
}

TEST(DataIdx, MnistSourceRowsAndTestSplit) {
  auto train = mnist(kFashionDir, "train");
  EXPECT_EQ(train->size(), 60000);
  auto test = mnist(kFashionDir, "test");
  ASSERT_EQ(test->size(), 10000);
  auto it = test->iterate();
  auto row = it.next();
  ASSERT_TRUE(row.has_value());
  ASSERT_EQ(row->size(), 2u);
  EXPECT_EQ((*row)[0].shape(), (Shape{28, 28}));
  EXPECT_EQ((*row)[0].dtype(), DType::UInt8);
  EXPECT_EQ((*row)[1].dim(), 0);
  EXPECT_EQ((*row)[1].dtype(), DType::Int64);
  EXPECT_EQ((*row)[1].item<int64_t>(), 9);
  const std::vector<uint8_t> row10 = {0, 0, 0, 4, 0, 53, 129, 120, 147, 175};  // test image 0, row 10, cols 10..19
  const auto px = (*row)[0].to_vector<int64_t>();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(px[10 * 28 + 10 + i], row10[i]);
  const std::vector<int64_t> labels = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
  std::vector<int64_t> got;
  auto it2 = test->take(10)->iterate();
  while (auto r = it2.next()) got.push_back((*r)[1].item<int64_t>());
  EXPECT_EQ(got, labels);
  EXPECT_EQ(mnist(kFashionDir, "all")->size(), 70000);
}

TEST(DataIdx, ReadsRawCopiesAndExplicitFiles) {
  TempDir dir("idx_raw");
  testing::write_bytes(dir.file("train-images-idx3-ubyte"), gunzip(kFashionDir + "/train-images-idx3-ubyte.gz"));
  testing::write_bytes(dir.file("train-labels-idx1-ubyte"), gunzip(kFashionDir + "/train-labels-idx1-ubyte.gz"));
  const Tensor images = read_idx(dir.file("train-images-idx3-ubyte"));
  const Tensor labels = read_idx(dir.file("train-labels-idx1-ubyte"));
  expect_fashion_train(images, labels);
  auto ds = mnist(dir.file(""), "train");
  EXPECT_EQ(ds->size(), 60000);
  EXPECT_EQ(mnist_files(dir.file("train-images-idx3-ubyte"), kFashionDir + "/train-labels-idx1-ubyte.gz")->size(), 60000);
}

TEST(DataIdx, MultiByteTypesAreBigEndian) {
  TempDir dir("idx_types");
  // int32 (0x0C), 1-D of 2: 1 and -2; float (0x0D) 1-D of 1: 1.5
  std::string i32 = std::string("\0\0\x0C\x01\0\0\0\x02", 8) + std::string("\0\0\0\x01\xff\xff\xff\xfe", 8);
  testing::write_bytes(dir.file("a"), i32);
  EXPECT_EQ(read_idx(dir.file("a")).to_vector<int64_t>(), (std::vector<int64_t>{1, -2}));
  std::string f32 = std::string("\0\0\x0D\x01\0\0\0\x01", 8) + std::string("\x3f\xc0\0\0", 4);
  testing::write_bytes(dir.file("b"), f32);
  EXPECT_EQ(read_idx(dir.file("b")).to_vector<float>(), (std::vector<float>{1.5f}));
}

TEST(DataIdx, BrokenFilesFailClearly) {
  TempDir dir("idx_bad");
  const std::string labels = gunzip(kFashionDir + "/t10k-labels-idx1-ubyte.gz");
  testing::write_bytes(dir.file("trunc"), labels.substr(0, labels.size() - 7));
  EXPECT_ERROR(read_idx(dir.file("trunc")), "header says 10000 unsigned byte = 10000 bytes");
  EXPECT_ERROR(read_idx(dir.file("trunc")), "(truncated)");
  testing::write_bytes(dir.file("long"), labels + "xx");
  EXPECT_ERROR(read_idx(dir.file("long")), "(trailing bytes)");
  std::string bad = labels;
  bad[2] = 0x07;
  testing::write_bytes(dir.file("magic"), bad);
  EXPECT_ERROR(read_idx(dir.file("magic")), "bad magic number 0x701");
  EXPECT_ERROR(read_idx(dir.file("magic")), dir.file("magic"));
  testing::write_bytes(dir.file("tiny"), std::string("\0\0", 2));
  EXPECT_ERROR(read_idx(dir.file("tiny")), "too short for an IDX header");
  EXPECT_ERROR(read_idx(dir.file("missing")), "no such file");
  EXPECT_ERROR(mnist(dir.file(""), "train"), "dataset-fashion-mnist");
  EXPECT_ERROR(mnist(kFashionDir, "validation"), "usage must be");

  // A truncated gzip file: the decompressed data ends early.
  const std::string gz = testing::read_bytes(kFashionDir + "/t10k-labels-idx1-ubyte.gz");
  testing::write_bytes(dir.file("trunc.gz"), gz.substr(0, gz.size() / 2));
  EXPECT_ERROR(read_idx(dir.file("trunc.gz")), "decompressed data ends after");

  // Images and labels that do not belong together.
  EXPECT_ERROR(mnist_files(kFashionDir + "/t10k-images-idx3-ubyte.gz", kFashionDir + "/train-labels-idx1-ubyte.gz"),
               "holds 10000 images but");
  EXPECT_ERROR(mnist_files(kFashionDir + "/t10k-labels-idx1-ubyte.gz", kFashionDir + "/t10k-images-idx3-ubyte.gz"),
               "are images and labels swapped?");
}

TEST(DataIdx, RandomDamageNeverCrashes) {
  TempDir dir("idx_fuzz");
  const std::string raw = gunzip(kFashionDir + "/t10k-labels-idx1-ubyte.gz").substr(0, 8 + 300);
  std::string raw_ok = raw;
  raw_ok[7] = 0;  // header count 10000 -> 0x2700 -> patch to 300 (0x012C)
  raw_ok[6] = 0x01;
  raw_ok[7] = 0x2C;
  const std::string gz = testing::read_bytes(kFashionDir + "/t10k-labels-idx1-ubyte.gz");
  std::mt19937 rng(7);
  int errors = 0, ok = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = trial % 2 ? gz : raw_ok;
    if (trial % 3 == 0) {
      bytes.resize(std::uniform_int_distribution<size_t>(0, bytes.size())(rng));
    } else {
      for (int k = 0; k < 3; ++k) bytes[std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng)] ^= static_cast<char>(1 + rng() % 255);
    }
    const std::string p = dir.file(std::to_string(trial) + ".idx");
    testing::write_bytes(p, bytes);
    try {
      const Tensor t = read_idx(p);
      ++ok;
      EXPECT_GE(t.dim(), 1);
    } catch (const Error& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(errors, 100);
  EXPECT_EQ(errors + ok, 300);
}

}  // namespace
}  // namespace spore::data
