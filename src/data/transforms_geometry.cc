// SPDX-License-Identifier: Apache-2.0
// Geometric image transforms: resize, center_crop, random_crop, random_horizontal_flip.
#include <algorithm>
#include <cmath>

#include "data/image_layout.h"

namespace spore::data {
namespace {

constexpr uint64_t kCropSalt = 0xc7017ull, kFlipSalt = 0xf119ull;

/// Crops every plane of sample s to the (h, w) window at (tops[s], lefts[s]) of the image;
/// pixels outside the image get `fill`.
Tensor crop(const Tensor& x, const ImageBlock& g, int64_t h, int64_t w, const std::vector<int64_t>& tops,
            const std::vector<int64_t>& lefts, double fill) {
  const Tensor src = x.contiguous();
  Tensor out = Tensor::empty(g.with_hw(h, w), src.dtype());
  by_width(src.dtype(), [&]<class U>() {
    U fv;
    fill_bytes(src.dtype(), fill, &fv);
    const U* in = static_cast<const U*>(src.data_ptr());
    U* o = static_cast<U*>(out.data_ptr());
    for (int64_t s = 0; s < g.n; ++s) {
      const int64_t top = tops[s], left = lefts[s];
      const int64_t x0 = std::clamp<int64_t>(-left, 0, w), x1 = std::clamp<int64_t>(g.w - left, x0, w);
      for (int64_t ch = 0; ch < g.c; ++ch) {
        const U* plane = in + (s * g.c + ch) * g.h * g.w;
        U* op = o + (s * g.c + ch) * h * w;
        for (int64_t y = 0; y < h; ++y) {
          U* row = op + y * w;
          const int64_t sy = top + y;
          if (sy < 0 || sy >= g.h) {
            std::fill(row, row + w, fv);
            continue;
          }
          std::fill(row, row + x0, fv);
          std::copy(plane + sy * g.w + left + x0, plane + sy * g.w + left + x1, row + x0);
          std::fill(row + x1, row + w, fv);
        }
      }
    }
  });
  return out;
}

class Resize : public TransformOp {
 public:
  Resize(int64_t h, int64_t w) : h_(h), w_(w) {}
  std::string name() const override { return "resize(" + std::to_string(h_) + "x" + std::to_string(w_) + ")"; }
  Tensor apply(const Tensor& x, const SampleInfo&) const override {
    const ImageBlock g = image_block(x, "resize");
    SPORE_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::UInt8, "[resize] supports float32 and uint8 images, got ",
                dtype_name(x.dtype()), "; cast first");
    SPORE_CHECK(g.h > 0 && g.w > 0, "[resize] empty images ", g.h, "x", g.w);
    const Tensor src = x.contiguous();
    Tensor out = Tensor::empty(g.with_hw(h_, w_), src.dtype());
    // Source taps per output row and column, PyTorch's half-pixel rule in float.
    std::vector<int64_t> y0(h_), y1(h_), x0(w_), x1(w_);
    std::vector<float> ly(h_), lx(w_);
    taps(g.h, h_, y0, y1, ly);
    taps(g.w, w_, x0, x1, lx);
    if (src.dtype() == DType::Float32)
      run<float>(src.data<float>(), out.data<float>(), g, y0, y1, ly, x0, x1, lx);
    else
      run<uint8_t>(src.data<uint8_t>(), out.data<uint8_t>(), g, y0, y1, ly, x0, x1, lx);
    return out;
  }

 private:
  static void taps(int64_t in, int64_t out, std::vector<int64_t>& i0, std::vector<int64_t>& i1, std::vector<float>& l) {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    for (int64_t d = 0; d < out; ++d) {
      const float src = std::max(0.0f, scale * (static_cast<float>(d) + 0.5f) - 0.5f);
      i0[d] = std::min(static_cast<int64_t>(src), in - 1);
      i1[d] = std::min(i0[d] + 1, in - 1);
      l[d] = std::clamp(src - static_cast<float>(i0[d]), 0.0f, 1.0f);
    }
  }
  template <class T>
  void run(const T* in, T* o, const ImageBlock& g, const std::vector<int64_t>& y0, const std::vector<int64_t>& y1,
           const std::vector<float>& ly, const std::vector<int64_t>& x0, const std::vector<int64_t>& x1,
           const std::vector<float>& lx) const {
    for (int64_t p = 0; p < g.n * g.c; ++p) {
      const T* plane = in + p * g.h * g.w;
      T* op = o + p * h_ * w_;
      for (int64_t y = 0; y < h_; ++y) {
        const T* r0 = plane + y0[y] * g.w;
        const T* r1 = plane + y1[y] * g.w;
        const float b = ly[y], a = 1.0f - b;
        for (int64_t xx = 0; xx < w_; ++xx) {
          const float d = lx[xx], c = 1.0f - d;
          const float v = a * (c * static_cast<float>(r0[x0[xx]]) + d * static_cast<float>(r0[x1[xx]])) +
                          b * (c * static_cast<float>(r1[x0[xx]]) + d * static_cast<float>(r1[x1[xx]]));
          if constexpr (std::is_same_v<T, uint8_t>)
            op[y * w_ + xx] = static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f));
          else
            op[y * w_ + xx] = v;
        }
      }
    }
  }
  int64_t h_, w_;
};

class CenterCrop : public TransformOp {
 public:
  CenterCrop(int64_t h, int64_t w) : h_(h), w_(w) {}
  std::string name() const override { return "center_crop(" + std::to_string(h_) + "x" + std::to_string(w_) + ")"; }
  Tensor apply(const Tensor& x, const SampleInfo&) const override {
    const ImageBlock g = image_block(x, "center_crop");
    // torchvision: a larger crop pads (extra pixel after); a smaller one starts at round((H - h) / 2), ties to even.
    const int64_t top = g.h >= h_ ? static_cast<int64_t>(std::nearbyint((g.h - h_) / 2.0)) : -((h_ - g.h) / 2);
    const int64_t left = g.w >= w_ ? static_cast<int64_t>(std::nearbyint((g.w - w_) / 2.0)) : -((w_ - g.w) / 2);
    return crop(x, g, h_, w_, std::vector<int64_t>(g.n, top), std::vector<int64_t>(g.n, left), 0);
  }

 private:
  int64_t h_, w_;
};

class RandomCrop : public TransformOp {
 public:
  RandomCrop(int64_t h, int64_t w, int64_t pad, double fill, uint64_t seed)
      : h_(h), w_(w), pad_(pad), fill_(fill), seed_(seed) {}
  std::string name() const override {
    return "random_crop(" + std::to_string(h_) + "x" + std::to_string(w_) + (pad_ ? ", pad " + std::to_string(pad_) : "") + ")";
  }
  Tensor apply(const Tensor& x, const SampleInfo& info) const override {
    const ImageBlock g = image_block(x, "random_crop");
    SPORE_CHECK(g.h + 2 * pad_ >= h_ && g.w + 2 * pad_ >= w_, "[random_crop] a ", h_, "x", w_, " crop does not fit ",
                g.h, "x", g.w, " images padded by ", pad_, "; use a smaller crop or more padding");
    std::vector<int64_t> tops(g.n), lefts(g.n);
    for (int64_t s = 0; s < g.n; ++s) {
      KeyedRandom rng(transform_key(seed_, kCropSalt, info.epoch, info.ids[s]));
      tops[s] = rng.below(g.h + 2 * pad_ - h_ + 1) - pad_;
      lefts[s] = rng.below(g.w + 2 * pad_ - w_ + 1) - pad_;
    }
    return crop(x, g, h_, w_, tops, lefts, fill_);
  }

 private:
  int64_t h_, w_, pad_;
  double fill_;
  uint64_t seed_;
};

class RandomHorizontalFlip : public TransformOp {
 public:
  RandomHorizontalFlip(double p, uint64_t seed) : p_(p), seed_(seed) {}
  std::string name() const override { return "random_horizontal_flip"; }
  Tensor apply(const Tensor& x, const SampleInfo& info) const override {
    const ImageBlock g = image_block(x, "random_horizontal_flip");
    const Tensor src = x.contiguous();
    Tensor out = Tensor::empty(src.shape(), src.dtype());
    by_width(src.dtype(), [&]<class U>() {
      const U* in = static_cast<const U*>(src.data_ptr());
      U* o = static_cast<U*>(out.data_ptr());
      const int64_t per_sample = g.c * g.h * g.w;
      for (int64_t s = 0; s < g.n; ++s) {
        KeyedRandom rng(transform_key(seed_, kFlipSalt, info.epoch, info.ids[s]));
        const U* a = in + s * per_sample;
        U* b = o + s * per_sample;
        if (rng.uniform() < p_) {
          for (int64_t r = 0; r < g.c * g.h; ++r) std::reverse_copy(a + r * g.w, a + (r + 1) * g.w, b + r * g.w);
        } else {
          std::copy(a, a + per_sample, b);
        }
      }
    });
    return out;
  }

 private:
  double p_;
  uint64_t seed_;
};

}  // namespace

Transform resize(int64_t height, int64_t width) {
  SPORE_CHECK(height >= 1 && width >= 1, "[resize] size must be positive, got ", height, "x", width);
  return std::make_shared<Resize>(height, width);
}

Transform center_crop(int64_t height, int64_t width) {
  SPORE_CHECK(height >= 1 && width >= 1, "[center_crop] size must be positive, got ", height, "x", width);
  return std::make_shared<CenterCrop>(height, width);
}

Transform random_crop(int64_t height, int64_t width, int64_t padding, double fill, uint64_t seed) {
  SPORE_CHECK(height >= 1 && width >= 1, "[random_crop] size must be positive, got ", height, "x", width);
  SPORE_CHECK(padding >= 0, "[random_crop] padding must be >= 0, got ", padding);
  return std::make_shared<RandomCrop>(height, width, padding, fill, seed);
}

Transform random_horizontal_flip(double p, uint64_t seed) {
  SPORE_CHECK(p >= 0 && p <= 1, "[random_horizontal_flip] p must be in [0, 1], got ", p);
  return std::make_shared<RandomHorizontalFlip>(p, seed);
}

}  // namespace spore::data
