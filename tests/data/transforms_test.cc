// SPDX-License-Identifier: Apache-2.0
// Each transform against hand-computed numbers (PyTorch / torchvision semantics).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "data/data_test_util.h"
#include "error_matchers.h"

namespace spore::data {
namespace {

/// Applies `t` to a block of samples with sample indices first_id.. in `epoch`.
Tensor run(const Transform& t, const Tensor& batch, uint64_t epoch = 0, int64_t first_id = 0) {
  std::vector<int64_t> ids(static_cast<size_t>(batch.size(0)));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = first_id + static_cast<int64_t>(i);
  return t->apply(batch, SampleInfo{epoch, ids});
}

Tensor floats(std::vector<float> v, Shape s) { return ops::from_vector(v, s); }

Tensor arange_f(int64_t n, Shape s) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return floats(v, s);
}

void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  const auto got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(DataTransforms, ToTensorAndTypeCast) {
  const Tensor img = ops::from_vector(std::vector<uint8_t>{0, 255, 51, 102}, Shape{1, 2, 2});
  const Tensor t = run(to_tensor(), img);
  EXPECT_EQ(t.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0.f, 1.f, 51.f / 255.f, 102.f / 255.f}));
  // HWC (2, 1, 3) -> CHW (3, 2, 1).
  const Tensor hwc = ops::from_vector(std::vector<uint8_t>{10, 20, 30, 40, 50, 60}, Shape{1, 2, 1, 3});
  const Tensor chw = run(to_tensor(), hwc);
  EXPECT_EQ(chw.shape(), (Shape{1, 3, 2, 1}));
  expect_near(chw, {10 / 255., 40 / 255., 20 / 255., 50 / 255., 30 / 255., 60 / 255.});
  EXPECT_ERROR(run(to_tensor(), ops::zeros(Shape{1, 2, 2})), "[to_tensor] expects uint8");

  const Tensor c = run(type_cast(DType::Float32, 1 / 255.0), img);
  EXPECT_EQ(c.dtype(), DType::Float32);
  expect_near(c, {0, 1, 0.2, 0.4});
  const Tensor d = run(type_cast(DType::Float64), ops::from_vector(std::vector<int64_t>{3, -4}));
  EXPECT_EQ(d.dtype(), DType::Float64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{3, -4}));
  EXPECT_ERROR(type_cast(DType::Int32, 0.5), "needs a floating dtype");
}

TEST(DataTransforms, NormalizePerChannel) {
  // Two samples of (2, 1, 2): channel 0 uses (0.5, 0.5), channel 1 (0.25, 2).
  const Tensor x = floats({1, 0, 0.25, 2.25, 0.5, 1.5, 4.25, 0.25}, Shape{2, 2, 1, 2});
  expect_near(run(normalize({0.5, 0.25}, {0.5, 2}), x), {1, -1, 0, 1, 0, 2, 2, 0});
  // (H, W) samples: one channel.
  expect_near(run(normalize({1}, {4}), floats({1, 5, 9, -3}, Shape{1, 2, 2})), {0, 1, 2, -1});
  EXPECT_ERROR(run(normalize({0.1, 0.2, 0.3}, {1, 1, 1}), x), "3 mean/std values for images with 2 channels");
  EXPECT_ERROR(normalize({0.1}, {0}), "nonzero");
  EXPECT_ERROR(run(normalize({0.1}, {1}), ops::zeros(Shape{1, 2, 2}, {DType::Int64})), "expects float images");
}

TEST(DataTransforms, HwcToChw) {
  const Tensor hwc = ops::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}, Shape{1, 2, 2, 2});
  const Tensor chw = run(hwc_to_chw(), hwc);
  EXPECT_EQ(chw.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(chw.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 5, 7, 2, 4, 6, 8}));
}

TEST(DataTransforms, ResizeBilinearHalfPixel) {
  // Up 2x2 -> 4x4: the 1-D taps of [0, 1] are [0, 0.25, 0.75, 1], so out[y][x] = 2 r[y] + r[x].
  const Tensor up = run(resize(4, 4), floats({0, 1, 2, 3}, Shape{1, 2, 2}));
  const double r[4] = {0, 0.25, 0.75, 1};
  std::vector<double> want;
  for (double ry : r)
    for (double rx : r) want.push_back(2 * ry + rx);
  expect_near(up, want);
  // Down 4x4 -> 2x2 (no antialias): each output averages a 2x2 block.
  expect_near(run(resize(2, 2), arange_f(16, Shape{1, 1, 4, 4})), {2.5, 4.5, 10.5, 12.5});
  // uint8 rounds to nearest: [0, 255] -> [0, 64, 191, 255] (63.75 and 191.25).
  const Tensor u = run(resize(1, 4), ops::from_vector(std::vector<uint8_t>{0, 255}, Shape{1, 1, 2}));
  EXPECT_EQ(u.to_vector<int64_t>(), (std::vector<int64_t>{0, 64, 191, 255}));
  EXPECT_ERROR(run(resize(2, 2), ops::zeros(Shape{4})), "samples must be images");
}

TEST(DataTransforms, CenterCropLikeTorchvision) {
  // 5x5 -> 3x3: start at round(1) = 1.
  expect_near(run(center_crop(3, 3), arange_f(25, Shape{1, 5, 5})), {6, 7, 8, 11, 12, 13, 16, 17, 18});
  // 4x4 -> 3x3: round(0.5) = 0 (ties to even, as Python's round).
  expect_near(run(center_crop(3, 3), arange_f(16, Shape{1, 4, 4})), {0, 1, 2, 4, 5, 6, 8, 9, 10});
  // Larger than the image: zero padding, the odd pixel after.
  expect_near(run(center_crop(3, 4), floats({1, 2, 3, 4}, Shape{1, 2, 2})), {0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0});
}

TEST(DataTransforms, RandomCropIsAWindowOfThePaddedImage) {
  const int64_t n = 200;
  std::vector<float> v;
  for (int64_t s = 0; s < n; ++s)
    for (int i = 0; i < 9; ++i) v.push_back(static_cast<float>(i + 1));
  const Tensor x = floats(v, Shape{n, 3, 3});
  const Tensor y = run(random_crop(2, 2, 1, -1, 11), x);
  EXPECT_EQ(y.shape(), (Shape{n, 2, 2}));
  const auto out = y.to_vector<float>();
  std::set<std::pair<int, int>> offsets;
  for (int64_t s = 0; s < n; ++s) {
    bool found = false;
    for (int top = -1; top <= 2 && !found; ++top)
      for (int left = -1; left <= 2 && !found; ++left) {
        bool match = true;
        for (int yy = 0; yy < 2; ++yy)
          for (int xx = 0; xx < 2; ++xx) {
            const int sy = top + yy, sx = left + xx;
            const float want = (sy < 0 || sy > 2 || sx < 0 || sx > 2) ? -1.f : static_cast<float>(sy * 3 + sx + 1);
            match = match && out[s * 4 + yy * 2 + xx] == want;
          }
        if (match) {
          found = true;
          offsets.insert({top, left});
        }
      }
    EXPECT_TRUE(found) << "sample " << s;
  }
  EXPECT_EQ(offsets.size(), 16u);  // every window of the 5x5 padded image shows up
  // Keys: same (seed, epoch, id) -> same crop; another epoch -> other crops.
  EXPECT_EQ(run(random_crop(2, 2, 1, -1, 11), x).to_vector<float>(), out);
  EXPECT_NE(run(random_crop(2, 2, 1, -1, 11), x, 1).to_vector<float>(), out);
  // The crop of a sample depends on its id, not on its position in the block.
  const Tensor one = run(random_crop(2, 2, 1, -1, 11), x.slice(0, 7, 8), 0, 7);
  EXPECT_EQ(one.to_vector<float>(), std::vector<float>(out.begin() + 28, out.begin() + 32));
  EXPECT_ERROR(run(random_crop(5, 5), x), "does not fit");
}

TEST(DataTransforms, RandomHorizontalFlip) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, Shape{1, 2, 1, 3});  // two channels, one row each
  EXPECT_EQ(run(random_horizontal_flip(1.0), x).to_vector<float>(), (std::vector<float>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(run(random_horizontal_flip(0.0), x).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  std::vector<uint8_t> v(2000);
  for (int i = 0; i < 1000; ++i) {
    v[2 * i] = 1;
    v[2 * i + 1] = 2;
  }
  const Tensor y = run(random_horizontal_flip(0.5, 3), ops::from_vector(v, Shape{1000, 1, 2}));
  const auto o = y.to_vector<int64_t>();
  int flipped = 0;
  for (int i = 0; i < 1000; ++i) flipped += o[2 * i] == 2;
  EXPECT_GT(flipped, 430);
  EXPECT_LT(flipped, 570);
}

TEST(DataTransforms, OneHot) {
  const Tensor y = run(one_hot(3), ops::from_vector(std::vector<int64_t>{2, 0}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.dtype(), DType::Float32);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(run(one_hot(2, DType::Int64), ops::from_vector(std::vector<uint8_t>{1})).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1}));
  EXPECT_ERROR(run(one_hot(3), ops::from_vector(std::vector<int64_t>{0, 3}), 0, 40), "label 3 of sample 41 is outside [0, 3)");
}

TEST(DataTransforms, RandomErasingErasesOneRectangle) {
  const int64_t n = 100, h = 20, w = 20;
  const Tensor x = ops::ones(Shape{n, 2, h, w});
  const auto o = run(random_erasing(1.0, {0.02, 0.33}, {0.3, 3.3}, 0, 5), x).to_vector<float>();
  for (int64_t s = 0; s < n; ++s) {
    int64_t y0 = h, y1 = -1, x0 = w, x1 = -1, zeros = 0;
    for (int64_t yy = 0; yy < h; ++yy)
      for (int64_t xx = 0; xx < w; ++xx)
        if (o[((s * 2) * h + yy) * w + xx] == 0) {
          ++zeros;
          y0 = std::min(y0, yy), y1 = std::max(y1, yy), x0 = std::min(x0, xx), x1 = std::max(x1, xx);
          EXPECT_EQ(o[((s * 2 + 1) * h + yy) * w + xx], 0) << "both channels are erased";
        }
    ASSERT_GT(zeros, 0) << "p = 1 always erases (sample " << s << ")";
    EXPECT_EQ(zeros, (y1 - y0 + 1) * (x1 - x0 + 1)) << "one filled rectangle";
    const double frac = static_cast<double>(zeros) / (h * w);
    EXPECT_GE(frac, 0.005);  // 0.02 of the area before rounding the sides
    EXPECT_LE(frac, 0.45);
    const double aspect = static_cast<double>(y1 - y0 + 1) / static_cast<double>(x1 - x0 + 1);
    EXPECT_GE(aspect, 0.3 / 2.5);
    EXPECT_LE(aspect, 3.3 * 2.5);
  }
  EXPECT_EQ(run(random_erasing(0.0), x).to_vector<float>(), x.to_vector<float>());
  EXPECT_ERROR(random_erasing(0.5, {0.5, 0.1}), "scale must satisfy");
}

TEST(DataTransforms, TransformsNeverWriteTheirInput) {
  const Tensor x = arange_f(16, Shape{1, 1, 4, 4});
  const auto before = x.to_vector<float>();
  for (const Transform& t : {normalize({1}, {2}), resize(2, 2), center_crop(2, 2), random_crop(3, 3, 1),
                             random_horizontal_flip(1.0), random_erasing(1.0), type_cast(DType::Float32, 2.0)}) {
    (void)run(t, x);
    EXPECT_EQ(x.to_vector<float>(), before) << t->name();
  }
}

}  // namespace
}  // namespace spore::data
