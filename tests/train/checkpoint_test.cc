// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spore/spore.h>
#include <spore/train/checkpoint.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>
#include <zlib.h>

#include "error_matchers.h"

namespace spore::train {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("spore_ckpt_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static Checkpoint sample() {
    manual_seed(3);
    Checkpoint c;
    c.tensors.emplace_back("model.w", ops::normal({3, 5}));
    c.tensors.emplace_back("model.b", ops::arange(0, 7).to(DType::Int64));
    c.tensors.emplace_back("optim.0.0.momentum", ops::normal({5, 3}).transpose(0, 1));  // non-contiguous
    c.tensors.emplace_back("scalar", ops::full({}, 2.5, {DType::Float64}));
    c.tensors.emplace_back("empty", Tensor::empty({0, 4}));
    c.ints["step"] = 1234;
    c.ints["rng_offset"] = -5;
    c.texts["model"] = "lenet";
    return c;
  }
  std::vector<char> read(const std::string& p) const {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write(const std::string& p, const std::vector<char>& b) const {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  fs::path dir_;
};

TEST_F(CheckpointTest, RoundTripIsExact) {
  Checkpoint c = sample();
  save_checkpoint(path("a.ckpt"), c);
  Checkpoint d = load_checkpoint(path("a.ckpt"));
  ASSERT_EQ(d.tensors.size(), c.tensors.size());
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    EXPECT_EQ(d.tensors[i].first, c.tensors[i].first);
    const Tensor& a = c.tensors[i].second;
    const Tensor& b = d.tensors[i].second;
    EXPECT_EQ(b.dtype(), a.dtype());
    EXPECT_EQ(b.shape(), a.shape());
    Tensor ac = a.contiguous();
    EXPECT_EQ(std::memcmp(ac.data_ptr(), b.data_ptr(), static_cast<size_t>(a.numel()) * dtype_size(a.dtype())), 0)
        << c.tensors[i].first;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data_ptr()) % 64, 0u);
  }
  EXPECT_EQ(d.get_int("step"), 1234);
  EXPECT_EQ(d.get_int("rng_offset"), -5);
  EXPECT_EQ(d.texts.at("model"), "lenet");
  EXPECT_EQ(d.with_prefix("model.").size(), 2u);
  EXPECT_EQ(d.with_prefix("model.")[0].first, "w");
  EXPECT_ERROR(d.tensor("nope"), "no tensor named 'nope'");
  EXPECT_ERROR(d.get_int("epoch"), "no integer entry 'epoch'");
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(CheckpointTest, OverwriteReplacesAtomically) {
  Checkpoint c = sample();
  save_checkpoint(path("a.ckpt"), c);
  c.ints["step"] = 99;
  save_checkpoint(path("a.ckpt"), c);
  EXPECT_EQ(load_checkpoint(path("a.ckpt")).get_int("step"), 99);
}

// Doubles (a callback's best value) travel as float64 scalars, infinities included.
TEST_F(CheckpointTest, DoublesAndPrefixes) {
  Checkpoint c;
  c.set_double("callback.x.best", INFINITY);
  c.set_double("callback.x.best", -0.1);  // replaces, does not duplicate
  c.set_double("callback.x.worst", -INFINITY);
  c.texts["callback.y.monitor"] = "loss";
  save_checkpoint(path("d.ckpt"), c);
  const Checkpoint r = load_checkpoint(path("d.ckpt"));
  EXPECT_EQ(r.tensors.size(), 2u);
  EXPECT_EQ(r.get_double("callback.x.best"), -0.1);
  EXPECT_EQ(r.get_double("callback.x.worst"), -INFINITY);
  EXPECT_TRUE(r.has_prefix("callback.x."));
  EXPECT_TRUE(r.has_prefix("callback.y."));
  EXPECT_FALSE(r.has_prefix("callback.z."));
  Checkpoint bad;
  bad.tensors.emplace_back("v", ops::zeros({2}));
  EXPECT_ERROR(bad.get_double("v"), "[Checkpoint] entry 'v' is float32 (2,), not a float64 scalar");
  EXPECT_ERROR(bad.get_double("w"), "no tensor named 'w'");
}

TEST_F(CheckpointTest, SaveErrors) {
  Checkpoint c;
  c.tensors.emplace_back("x", ops::zeros({2}));
  c.tensors.emplace_back("x", ops::zeros({2}));
  EXPECT_ERROR(save_checkpoint(path("dup.ckpt"), c), "two tensors are named 'x'");
  EXPECT_FALSE(fs::exists(path("dup.ckpt")));
  Checkpoint u;
  u.tensors.emplace_back("u", Tensor());
  EXPECT_ERROR(save_checkpoint(path("u.ckpt"), u), "tensor 'u' is undefined");
  EXPECT_ERROR(save_checkpoint(path("no/such/dir/x.ckpt"), sample()), "cannot create");
}

TEST_F(CheckpointTest, RefusesBadFiles) {
  save_checkpoint(path("a.ckpt"), sample());
  const std::vector<char> good = read(path("a.ckpt"));
  EXPECT_ERROR(load_checkpoint(path("missing.ckpt")), "cannot open");
  write(path("short"), {'S', 'P'});
  EXPECT_ERROR(load_checkpoint(path("short")), "too short");
  auto bad = good;
  bad[0] = 'X';
  write(path("magic"), bad);
  EXPECT_ERROR(load_checkpoint(path("magic")), "not a Spore checkpoint");
  bad = good;
  bad[8] = 7;  // version 7
  write(path("version"), bad);
  EXPECT_ERROR(load_checkpoint(path("version")), "format version 7");
  bad.assign(good.begin(), good.end() - 100);
  write(path("trunc"), bad);
  EXPECT_ERROR(load_checkpoint(path("trunc")), "truncated");
  bad = good;
  bad[bad.size() / 2] ^= 0x10;
  write(path("flip"), bad);
  EXPECT_ERROR(load_checkpoint(path("flip")), "checksum does not match");
}

// Every truncation and many random byte flips are refused with spore::Error, never a crash or a
// partial result (a fuzz-style sweep; ASan runs it too).
TEST_F(CheckpointTest, CorruptionSweepNeverCrashes) {
  save_checkpoint(path("a.ckpt"), sample());
  const std::vector<char> good = read(path("a.ckpt"));
  for (size_t len = 0; len < good.size(); len += 7) {
    write(path("t"), std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)));
    EXPECT_THROW(load_checkpoint(path("t")), Error) << len;
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    auto bad = good;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    write(path("f"), bad);
    EXPECT_THROW(load_checkpoint(path("f")), Error) << at;
  }
}

// The same with the checksum recomputed after each change, so the header's own checks are
// reached: every length, count, dtype, rank, dimension and offset is validated on its own.
TEST_F(CheckpointTest, HeaderCorruptionBehindAValidChecksum) {
  save_checkpoint(path("a.ckpt"), sample());
  const std::vector<char> good = read(path("a.ckpt"));
  uint64_t header_len = 0;
  std::memcpy(&header_len, good.data() + 16, 8);
  auto reseal = [](std::vector<char>& b) {
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(b.data()), static_cast<uInt>(b.size() - 12));
    const uint32_t c = static_cast<uint32_t>(crc);
    std::memcpy(b.data() + b.size() - 12, &c, 4);
  };
  std::mt19937 rng(11);
  int refused = 0, loaded = 0;
  for (size_t at = 24; at < 24 + header_len; ++at) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, static_cast<uint8_t>(1 + rng() % 255)}) {
      auto bad = good;
      bad[at] = static_cast<char>(bad[at] ^ flip);
      reseal(bad);
      write(path("h"), bad);
      try {
        Checkpoint c = load_checkpoint(path("h"));
        ++loaded;  // a flip inside a name or a value can still be a well-formed file
      } catch (const Error&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(loaded, 0);
  // A huge dimension behind a valid checksum is refused before anything is allocated.
  auto bad = good;
  const std::string key = "model.w";
  auto pos = std::search(bad.begin(), bad.end(), key.begin(), key.end());
  ASSERT_NE(pos, bad.end());
  // name, then dtype string (8-byte length + "float32"), then rank, then the first dimension.
  const size_t dim_at = static_cast<size_t>(pos - bad.begin()) + key.size() + 8 + 7 + 8;
  const uint64_t huge = uint64_t{1} << 60;
  std::memcpy(bad.data() + dim_at, &huge, 8);
  reseal(bad);
  write(path("huge"), bad);
  EXPECT_ERROR(load_checkpoint(path("huge")), "larger than the file's data");
}

}  // namespace
}  // namespace spore::train
