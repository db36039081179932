// SPDX-License-Identifier: Apache-2.0
// image_folder and decode: folders written at test time by tests/data/make_image_folders.py
// (PIL, which links the same libjpeg-turbo) with what each image must decode to; labels and
// order against torchvision's ImageFolder rules; corrupt and truncated files fail naming the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "data/data_test_util.h"
#include "error_matchers.h"

namespace spore::data {
namespace {

using testing::TempDir;

struct Expected {
  std::string path;  // relative to the root
  int64_t label = 0;
  int rgb_tol = 0, gray_tol = 0;
};

/// The folders, made once for the suite. A missing Python side fails every test (never skips).
class ImageFolderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("image_folder");
    root_ = dir_->file("images");
    const std::string log = dir_->file("make.log");
    const std::string cmd = "/usr/bin/python3 " + std::string(SPORE_TESTS_DIR) + "/data/make_image_folders.py '" + root_ +
                            "' > '" + log + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    if (rc != 0) {
      setup_error_ = "making the image folders failed (" + cmd + ", status " + std::to_string(rc) +
                     "): " + testing::read_bytes(log);
      return;
    }
    std::ifstream m(root_ + "/expected/manifest.txt");
    for (std::string line; std::getline(m, line);) {
      std::istringstream is(line);
      Expected e;
      is >> e.path >> e.label >> e.rgb_tol >> e.gray_tol;
      manifest_.push_back(e);
    }
    if (manifest_.size() != 14) setup_error_ = "manifest has " + std::to_string(manifest_.size()) + " lines, expected 14";
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_; }

  static std::string root(const std::string& tree) { return root_ + "/" + tree; }
  static Tensor expected(size_t i, const std::string& kind) {
    return read_npy(root_ + "/expected/" + std::to_string(i) + "_" + kind + ".npy");
  }

  static TempDir* dir_;
  static std::string root_;
  static std::string setup_error_;
  static std::vector<Expected> manifest_;
};
TempDir* ImageFolderTest::dir_ = nullptr;
std::string ImageFolderTest::root_;
std::string ImageFolderTest::setup_error_;
std::vector<Expected> ImageFolderTest::manifest_;

/// Largest |a - b| of two uint8 tensors of one shape (255 + 1 when the shapes differ).
int max_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return 256;
  const auto x = a.to_vector<int>(), y = b.to_vector<int>();
  int d = 0;
  for (size_t i = 0; i < x.size(); ++i) d = std::max(d, std::abs(x[i] - y[i]));
  return d;
}

std::vector<Row> rows_of(const std::shared_ptr<Dataset>& ds) {
  std::vector<Row> out;
  for (const Row& r : ds->iterate()) out.push_back(r);
  return out;
}

TEST_F(ImageFolderTest, ClassesLabelsAndOrderFollowTorchvision) {
  EXPECT_EQ(image_folder_classes(root("formats")), (std::vector<std::string>{"ant", "bee", "cow"}));
  auto ds = image_folder(root("formats"));
  ASSERT_EQ(ds->size(), 10);  // notes.txt is not an image; sub/a2.png is (nested folders count)
  EXPECT_TRUE(ds->random_access());  // one size: stacked into one tensor
  const auto rows = rows_of(ds);
  ASSERT_EQ(rows.size(), 10u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][1].dtype(), DType::Int64);
    EXPECT_EQ(rows[i][1].dim(), 0);
    EXPECT_EQ(rows[i][1].item<int64_t>(), manifest_[i].label) << manifest_[i].path;
    EXPECT_EQ(rows[i][0].dtype(), DType::UInt8);
    EXPECT_EQ(rows[i][0].shape(), (Shape{6, 5, 3})) << manifest_[i].path;
  }
}

TEST_F(ImageFolderTest, PixelsMatchPilForEveryFormatAndChannelMode) {
  // rgb: PNG exact (palette, 16-bit, gray+alpha, 1-bit, RGBA), JPEG exact (same libjpeg-turbo);
  // gray: exact from gray sources and JPEG (libjpeg's Y), within 1 of PIL's convert("L") from color PNG.
  const std::pair<int, std::string> modes[] = {{3, "rgb"}, {1, "gray"}, {0, "keep"}};
  for (const auto& [channels, kind] : modes) {
    ImageFolderOptions o;
    o.channels = channels;
    const auto rows = rows_of(image_folder(root("formats"), o));
    ASSERT_EQ(rows.size(), 10u);
    for (size_t i = 0; i < rows.size(); ++i) {
      const int tol = kind == "rgb" ? manifest_[i].rgb_tol : kind == "gray" ? manifest_[i].gray_tol : 0;
      EXPECT_LE(max_diff(rows[i][0], expected(i, kind)), tol)
          << manifest_[i].path << " channels " << channels << ": got " << shape_str(rows[i][0].shape()) << ", expected "
          << shape_str(expected(i, kind).shape());
    }
  }
  // As stored: gray 1, RGBA 4, palette with tRNS 4, gray+alpha 2, 16-bit gray 1.
  ImageFolderOptions keep;
  keep.channels = 0;
  const auto rows = rows_of(image_folder(root("formats"), keep));
  const int64_t want_c[] = {3, 1, 4, 3, 1, 4, 3, 2, 1, 1};
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i][0].size(2), want_c[i]) << manifest_[i].path;
}

TEST_F(ImageFolderTest, ImagesOfSeveralSizesStreamAndBatchAfterResize) {
  auto ds = image_folder(root("sizes"));
  EXPECT_EQ(ds->size(), 4);
  EXPECT_FALSE(ds->random_access());
  const auto rows = rows_of(ds);
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(max_diff(rows[i][0], expected(10 + i, "rgb")), 0) << manifest_[10 + i].path;
    EXPECT_EQ(rows[i][1].item<int64_t>(), manifest_[10 + i].label);
  }
  // Equal neighbours share a block: p1 and p2 (10x6) arrive together.
  const auto batches = rows_of(ds->batch(2, false, BatchPad{}));
  EXPECT_EQ(batches[0][0].shape(), (Shape{2, 10, 8, 3}));  // 8x8 and 10x6 padded to 10x8
  EXPECT_ERROR(rows_of(ds->batch(2)), "resize them to one shape");

  // image_folder -> map(to_tensor, resize, normalize) -> batch.
  const std::vector<double> mean{0.5, 0.4, 0.3}, sd{0.2, 0.25, 0.3};
  auto pipe = ds->map({to_tensor(), resize(8, 8), normalize(mean, sd)}, 0, 2)->batch(4);
  const auto out = rows_of(pipe);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0][0].shape(), (Shape{4, 3, 8, 8}));
  EXPECT_EQ(out[0][1].to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 1}));
  // p0 is 8x8 already: resize is the identity, so each value is (v / 255 - mean) / std.
  const auto v = out[0][0].to_vector<float>();
  const auto px = expected(10, "rgb").to_vector<int>();
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 64; ++p)
      EXPECT_NEAR(v[c * 64 + p], (px[p * 3 + c] / 255.0 - mean[c]) / sd[c], 1e-5) << c << " " << p;
  // The other images differ from p0: the batch is not one image repeated.
  EXPECT_NE(std::vector<float>(v.begin(), v.begin() + 192), std::vector<float>(v.begin() + 192, v.begin() + 384));
}

TEST_F(ImageFolderTest, UniformFolderShufflesSplitsAndMapsInParallel) {
  auto ds = image_folder(root("formats"));
  auto parts = ds->split({0.7, 0.3}, 3);
  EXPECT_EQ(parts[0]->size() + parts[1]->size(), 10);
  auto pipe = ds->shuffle(10, 5)->map({to_tensor(), normalize({0.5}, {0.5})}, 0, 3)->batch(4);
  std::vector<int64_t> labels;
  for (const Row& r : pipe->iterate(1)) {
    EXPECT_EQ(r[0].size(1), 3);
    for (int64_t l : r[1].to_vector<int64_t>()) labels.push_back(l);
  }
  std::vector<int64_t> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int64_t>{0, 0, 0, 1, 1, 2, 2, 2, 2, 2}));
  EXPECT_NE(labels, sorted);  // seed 5, epoch 1 is not the identity order
}

TEST_F(ImageFolderTest, EncodedRowsDecodeLaterToTheSamePixels) {
  ImageFolderOptions enc;
  enc.decode = false;
  auto ds = image_folder(root("sizes"), enc);
  const auto rows = rows_of(ds);
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const std::string file = testing::read_bytes(root_ + "/" + manifest_[10 + i].path);
    ASSERT_EQ(rows[i][0].shape(), (Shape{static_cast<Dim>(file.size())}));
    const auto b = rows[i][0].to_vector<uint8_t>();
    EXPECT_TRUE(std::equal(b.begin(), b.end(), reinterpret_cast<const uint8_t*>(file.data())));
  }
  for (int workers : {1, 3}) {
    const auto dec = rows_of(ds->map({decode(3)}, 0, workers));
    ASSERT_EQ(dec.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(max_diff(dec[i][0], expected(10 + i, "rgb")), 0) << manifest_[10 + i].path;
      EXPECT_EQ(dec[i][1].item<int64_t>(), manifest_[10 + i].label);
    }
  }
  const auto g = rows_of(ds->map({decode(1)}));
  EXPECT_EQ(max_diff(g[3][0], expected(13, "gray")), 0);  // the JPEG, libjpeg's Y channel
  // A block of several encoded rows (padded with zeros: both decoders stop at their end marker).
  auto stacked = [&](std::vector<size_t> which) {
    size_t len = 0;
    std::vector<std::string> files;
    for (size_t i : which) {
      files.push_back(testing::read_bytes(root_ + "/" + manifest_[10 + i].path));
      len = std::max(len, files.back().size());
    }
    std::vector<uint8_t> flat;
    for (auto& f : files) {
      f.resize(len, '\0');
      flat.insert(flat.end(), f.begin(), f.end());
    }
    return from_tensors({ops::from_vector(flat, Shape{static_cast<Dim>(which.size()), static_cast<Dim>(len)})});
  };
  const auto two = rows_of(stacked({1, 2})->map({decode()}));
  EXPECT_EQ(max_diff(two[0][0], expected(11, "rgb")), 0);
  EXPECT_EQ(max_diff(two[1][0], expected(12, "rgb")), 0);
  EXPECT_ERROR(rows_of(stacked({0, 1})->map({decode()})), "decode to images of different shapes");
  EXPECT_ERROR(rows_of(from_tensors({ops::zeros(Shape{2, 8})})->map({decode()})), "expects encoded images as uint8");
  EXPECT_ERROR(decode(2), "channels must be 1 (gray), 3 (RGB) or 0");
}

TEST_F(ImageFolderTest, EmptyClassFolderIsAnErrorUnlessAllowed) {
  EXPECT_EQ(image_folder_classes(root("empty")), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_ERROR(image_folder(root("empty")), "class folder(s) 'b' hold no .png/.jpg/.jpeg file");
  ImageFolderOptions o;
  o.allow_empty = true;
  auto ds = image_folder(root("empty"), o);
  EXPECT_EQ(ds->size(), 2);
  EXPECT_EQ(testing::collect(ds)[1][1], (std::vector<double>{2}));  // c keeps label 2
}

// A sample reads a fixed subset of the files (the seed's), in the sorted order, labels kept;
// hidden folders are not classes.
TEST_F(ImageFolderTest, SampleAndHiddenFolders) {
  auto all = testing::collect(image_folder(root("formats")));
  ImageFolderOptions o;
  o.sample = 4;
  o.sample_seed = 7;
  auto a = image_folder(root("formats"), o), b = image_folder(root("formats"), o);
  ASSERT_EQ(a->size(), 4);
  const auto ra = testing::collect(a), rb = testing::collect(b);
  EXPECT_EQ(ra, rb);
  // Each sampled row is one of the full folder's, and they come in the folder's order.
  size_t next = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    while (next < all.size() && all[next] != ra[i]) ++next;
    EXPECT_LT(next, all.size()) << "sampled row " << i << " is not a later row of the full folder";
    ++next;
  }
  o.sample_seed = 8;
  EXPECT_NE(testing::collect(image_folder(root("formats"), o)), ra);
  o.sample = 100;  // more than there are: all of them
  EXPECT_EQ(image_folder(root("formats"), o)->size(), 10);

  TempDir dir("image_hidden");
  std::filesystem::create_directories(dir.file("r/.ipynb_checkpoints"));
  std::filesystem::create_directories(dir.file("r/cat"));
  testing::write_bytes(dir.file("r/cat/a.png"), testing::read_bytes(root_ + "/" + manifest_[0].path));
  EXPECT_EQ(image_folder_classes(dir.file("r")), (std::vector<std::string>{"cat"}));
  EXPECT_EQ(image_folder(dir.file("r"))->size(), 1);
}

TEST_F(ImageFolderTest, BadRootsAndOptions) {
  EXPECT_ERROR(image_folder(root("nope")), "not a directory");
  EXPECT_ERROR(image_folder(root("formats/ant/sub")), "has no subfolders");
  ImageFolderOptions o;
  o.allow_empty = true;
  EXPECT_ERROR(image_folder(root("expected"), o), "no .png/.jpg/.jpeg files in any class folder");
  o.channels = 4;
  EXPECT_ERROR(image_folder(root("formats"), o), "channels must be 1 (gray), 3 (RGB) or 0");
}

/// image_folder on a folder holding `bytes` as its one image; returns the error text ("" if none).
std::string try_load(const TempDir& dir, const std::string& name, const std::string& bytes, bool decode_now = true) {
  std::filesystem::remove_all(dir.file("k"));
  std::filesystem::create_directories(dir.file("k/c"));
  testing::write_bytes(dir.file("k/c/" + name), bytes);
  try {
    ImageFolderOptions o;
    o.decode = decode_now;
    auto ds = image_folder(dir.file("k"), o);
    if (!decode_now) rows_of(ds->map({decode()}));
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

/// decode() on `bytes` as a one-row dataset; returns the error text ("" if none).
std::string try_decode(const std::string& bytes) {
  try {
    std::vector<uint8_t> v(bytes.begin(), bytes.end());
    rows_of(from_tensors({ops::from_vector(v, Shape{1, static_cast<Dim>(v.size())})})->map({decode()}));
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST_F(ImageFolderTest, CorruptAndTruncatedFilesFailNamingTheFile) {
  TempDir dir("image_corrupt");
  const std::string png = testing::read_bytes(root_ + "/" + manifest_[0].path);
  const std::string jpg = testing::read_bytes(root_ + "/" + manifest_[3].path);
  ASSERT_EQ(try_load(dir, "ok.png", png), "");
  ASSERT_EQ(try_load(dir, "ok.jpg", jpg), "");

  std::string e = try_load(dir, "text.png", "hello, not an image");
  EXPECT_NE(e.find("k/c/text.png: not a PNG or JPEG image (19 bytes, starting 68 65 6c"), std::string::npos) << e;
  e = try_load(dir, "empty.jpg", "");
  EXPECT_NE(e.find("empty.jpg: not a PNG or JPEG image (0 bytes)"), std::string::npos) << e;
  e = try_load(dir, "text.png", "hello, not an image", false);  // checked when built, not mid-epoch
  EXPECT_NE(e.find("text.png: not a PNG or JPEG image"), std::string::npos) << e;

  // Every truncation fails (both codecs read on to their end marker): through the folder for a
  // few cuts, then in memory (decode() in a pipeline) for the first 64 cuts and random ones.
  std::mt19937 rng(11);
  for (const auto& [name, file] : {std::pair<std::string, std::string>{"cut.png", png}, {"cut.jpg", jpg}}) {
    for (size_t n : {size_t{0}, size_t{7}, size_t{30}, file.size() / 2, file.size() - 1}) {
      e = try_load(dir, name, file.substr(0, n));
      EXPECT_NE(e.find("k/c/" + name + ": "), std::string::npos) << name << " cut to " << n << " bytes: '" << e << "'";
    }
    std::vector<size_t> cuts;
    for (size_t n = 1; n < 64; ++n) cuts.push_back(n);
    for (int i = 0; i < 200; ++i) cuts.push_back(std::uniform_int_distribution<size_t>(1, file.size() - 1)(rng));
    for (size_t n : cuts) {
      e = try_decode(file.substr(0, n));
      EXPECT_NE(e.find("[decode] sample 0: "), std::string::npos) << name << " cut to " << n << " bytes: '" << e << "'";
      if (n >= 8) {
        EXPECT_NE(e.find("corrupt or truncated"), std::string::npos) << e;
      }
    }
  }
  // Damaged bytes (bad CRCs, bad entropy data, bad headers): an error or an image, never a crash.
  for (int i = 0; i < 400; ++i) {
    std::string bad = i % 2 ? jpg : png;
    for (int k = 0; k < 3; ++k)
      bad[std::uniform_int_distribution<size_t>(3, bad.size() - 1)(rng)] = static_cast<char>(rng());
    e = try_decode(bad);
    if (!e.empty()) {
      EXPECT_NE(e.find("[decode] sample 0: "), std::string::npos) << e;
    }
  }
  // Kept encoded, a truncated file still fails when the folder is read, naming it.
  e = try_load(dir, "cut.png", png.substr(0, png.size() / 2), false);
  EXPECT_NE(e.find("k/c/cut.png: corrupt or truncated PNG"), std::string::npos) << e;
  // A PNG whose data CRC is wrong is named as such (libpng's message is kept).
  std::string crc = png;
  crc[crc.size() - 20] ^= 0x55;  // inside the IDAT data
  e = try_load(dir, "crc.png", crc);
  EXPECT_NE(e.find("crc.png: corrupt or truncated PNG (libpng: "), std::string::npos) << e;
}

}  // namespace
}  // namespace spore::data
