// SPDX-License-Identifier: Apache-2.0
// Value and layout conversions: type_cast, to_tensor, normalize, hwc_to_chw, one_hot.
#include <cmath>

#include "data/image_layout.h"
#include "spore/ops/creation.h"

namespace spore::data {
namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

class TypeCast : public TransformOp {
 public:
  TypeCast(DType dtype, double scale) : dtype_(dtype), scale_(scale) {}
  std::string name() const override {
    return "type_cast(" + std::string(dtype_name(dtype_)) + (scale_ != 1 ? ", x" + fmt(scale_) : "") + ")";
  }
  Tensor apply(const Tensor& x, const SampleInfo&) const override {
    const Tensor src = x.contiguous();
    if (src.dtype() == DType::UInt8 && dtype_ == DType::Float32) {  // the image fast path, one pass
      Tensor out = Tensor::empty(src.shape(), DType::Float32);
      const uint8_t* in = src.data<uint8_t>();
      float* o = out.data<float>();
      const float s = static_cast<float>(scale_);
      for (int64_t i = 0, n = src.numel(); i < n; ++i) o[i] = static_cast<float>(in[i]) * s;
      return out;
    }
    Tensor t = src.to(dtype_);
    if (scale_ == 1) return t;
    const DType work = dtype_ == DType::Float64 ? DType::Float64 : DType::Float32;
    Tensor w = t.to(work);
    Tensor out = Tensor::empty(w.shape(), work);
    if (work == DType::Float64) {
      const double* in = w.data<double>();
      double* o = out.data<double>();
      for (int64_t i = 0, n = w.numel(); i < n; ++i) o[i] = in[i] * scale_;
    } else {
      const float* in = w.data<float>();
      float* o = out.data<float>();
      const float s = static_cast<float>(scale_);
      for (int64_t i = 0, n = w.numel(); i < n; ++i) o[i] = in[i] * s;
    }
    return out.to(dtype_);
  }

 private:
  DType dtype_;
  double scale_;
};

class ToTensor : public TransformOp {
 public:
  std::string name() const override { return "to_tensor"; }
  Tensor apply(const Tensor& x, const SampleInfo&) const override {
    SPORE_CHECK(x.dtype() == DType::UInt8, "[to_tensor] expects uint8 images, got ", dtype_name(x.dtype()),
                "; use type_cast for other dtypes");
    SPORE_CHECK(x.dim() == 3 || x.dim() == 4, "[to_tensor] expects (H, W) or (H, W, C) images, got samples of shape ",
                shape_str(std::span<const Dim>(x.shape().begin() + 1, x.shape().end())));
    const Tensor src = x.contiguous();
    const int64_t n = src.size(0), h = src.size(1), w = src.size(2), c = x.dim() == 4 ? src.size(3) : 1;
    Tensor out = Tensor::empty(Shape{n, c, h, w}, DType::Float32);
    const uint8_t* in = src.data<uint8_t>();
    float* o = out.data<float>();
    // Division, not a multiply by 1/255: bit-identical to torchvision's ToTensor.
    if (c == 1) {
      for (int64_t i = 0, m = src.numel(); i < m; ++i) o[i] = static_cast<float>(in[i]) / 255.0f;
    } else {
      for (int64_t s = 0; s < n; ++s)
        for (int64_t p = 0; p < h * w; ++p)
          for (int64_t ch = 0; ch < c; ++ch)
            o[(s * c + ch) * h * w + p] = static_cast<float>(in[(s * h * w + p) * c + ch]) / 255.0f;
    }
    return out;
  }
};

class Normalize : public TransformOp {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {}
  std::string name() const override { return "normalize"; }
  Tensor apply(const Tensor& x, const SampleInfo&) const override {
    const ImageBlock g = image_block(x, "normalize");
    SPORE_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, "[normalize] expects float images, got ",
                dtype_name(x.dtype()), "; convert first (to_tensor or type_cast)");
    SPORE_CHECK(mean_.size() == 1 || static_cast<int64_t>(mean_.size()) == g.c, "[normalize] ", mean_.size(),
                " mean/std values for images with ", g.c, " channels; give one value or one per channel");
    const Tensor src = x.contiguous();
    Tensor out = Tensor::empty(src.shape(), src.dtype());
    if (src.dtype() == DType::Float32)
      run<float>(src, out, g);
    else
      run<double>(src, out, g);
    return out;
  }

 private:
  template <class T>
  void run(const Tensor& src, Tensor& out, const ImageBlock& g) const {
    const T* in = src.data<T>();
    T* o = out.data<T>();
    const int64_t plane = g.h * g.w;
    for (int64_t s = 0; s < g.n; ++s)
      for (int64_t ch = 0; ch < g.c; ++ch) {
        const size_t k = mean_.size() == 1 ? 0 : static_cast<size_t>(ch);
        const T m = static_cast<T>(mean_[k]), sd = static_cast<T>(std_[k]);
        const int64_t base = (s * g.c + ch) * plane;
        // (x - mean) / std in the data's dtype, as torchvision computes it.
        for (int64_t i = 0; i < plane; ++i) o[base + i] = (in[base + i] - m) / sd;
      }
  }
  std::vector<double> mean_, std_;
};

class HwcToChw : public TransformOp {
 public:
  std::string name() const override { return "hwc_to_chw"; }
  Tensor apply(const Tensor& x, const SampleInfo&) const override {
    SPORE_CHECK(x.dim() == 4, "[hwc_to_chw] expects (H, W, C) samples, got samples of shape ",
                shape_str(std::span<const Dim>(x.shape().begin() + 1, x.shape().end())));
    const Tensor src = x.contiguous();
    const int64_t n = src.size(0), h = src.size(1), w = src.size(2), c = src.size(3);
    Tensor out = Tensor::empty(Shape{n, c, h, w}, src.dtype());
    by_width(src.dtype(), [&]<class U>() {
      const U* in = static_cast<const U*>(src.data_ptr());
      U* o = static_cast<U*>(out.data_ptr());
      for (int64_t s = 0; s < n; ++s)
        for (int64_t p = 0; p < h * w; ++p)
          for (int64_t ch = 0; ch < c; ++ch) o[(s * c + ch) * h * w + p] = in[(s * h * w + p) * c + ch];
    });
    return out;
  }
};

class OneHot : public TransformOp {
 public:
  OneHot(int64_t classes, DType dtype) : classes_(classes), dtype_(dtype) {}
  std::string name() const override { return "one_hot(" + std::to_string(classes_) + ")"; }
  Tensor apply(const Tensor& x, const SampleInfo& info) const override {
    SPORE_CHECK(x.dim() == 1 && is_integral(x.dtype(), true), "[one_hot] expects integer class labels of shape (), got ",
                dtype_name(x.dtype()), " samples of shape ",
                shape_str(std::span<const Dim>(x.shape().begin() + 1, x.shape().end())));
    const std::vector<int64_t> labels = x.to_vector<int64_t>();
    std::vector<float> v(labels.size() * static_cast<size_t>(classes_), 0.0f);
    for (size_t i = 0; i < labels.size(); ++i) {
      SPORE_CHECK(labels[i] >= 0 && labels[i] < classes_, "[one_hot] label ", labels[i], " of sample ", info.ids[i],
                  " is outside [0, ", classes_, ")");
      v[i * static_cast<size_t>(classes_) + static_cast<size_t>(labels[i])] = 1.0f;
    }
    return ops::from_vector(v, Shape{static_cast<int64_t>(labels.size()), classes_}).to(dtype_);
  }

 private:
  int64_t classes_;
  DType dtype_;
};

}  // namespace

Transform type_cast(DType dtype, double scale) {
  SPORE_CHECK(scale == 1 || is_floating(dtype), "[type_cast] a scale (", scale, ") needs a floating dtype, not ",
              dtype_name(dtype));
  return std::make_shared<TypeCast>(dtype, scale);
}

Transform to_tensor() { return std::make_shared<ToTensor>(); }

Transform normalize(std::vector<double> mean, std::vector<double> std) {
  SPORE_CHECK(!mean.empty() && mean.size() == std.size(), "[normalize] mean has ", mean.size(), " values and std ",
              std.size(), "; give the same number (one per channel, or one for all)");
  for (double s : std) SPORE_CHECK(s != 0 && std::isfinite(s), "[normalize] std values must be finite and nonzero, got ", s);
  return std::make_shared<Normalize>(std::move(mean), std::move(std));
}

Transform hwc_to_chw() { return std::make_shared<HwcToChw>(); }

Transform one_hot(int64_t num_classes, DType dtype) {
  SPORE_CHECK(num_classes >= 1, "[one_hot] num_classes must be >= 1, got ", num_classes);
  return std::make_shared<OneHot>(num_classes, dtype);
}

}  // namespace spore::data
