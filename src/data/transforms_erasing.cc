// SPDX-License-Identifier: Apache-2.0
// random_erasing (torchvision's algorithm, our keyed draws) and per_sample (user functions).
#include <cmath>

#include "data/image_layout.h"
#include "spore/ops/shape.h"

namespace spore::data {
namespace {

constexpr uint64_t kEraseSalt = 0xe4a5eull, kUserSalt = 0x05e4ull;

class RandomErasing : public TransformOp {
 public:
  RandomErasing(double p, std::pair<double, double> scale, std::pair<double, double> ratio, double value, uint64_t seed)
      : p_(p), scale_(scale), ratio_(ratio), value_(value), seed_(seed) {}
  std::string name() const override { return "random_erasing"; }
  Tensor apply(const Tensor& x, const SampleInfo& info) const override {
    const ImageBlock g = image_block(x, "random_erasing");
    const Tensor src = x.contiguous();
    Tensor out = src.clone();
    const double area = static_cast<double>(g.h * g.w);
    const double log_r0 = std::log(ratio_.first), log_r1 = std::log(ratio_.second);
    by_width(src.dtype(), [&]<class U>() {
      U fv;
      fill_bytes(src.dtype(), value_, &fv);
      U* o = static_cast<U*>(out.data_ptr());
      for (int64_t s = 0; s < g.n; ++s) {
        KeyedRandom rng(transform_key(seed_, kEraseSalt, info.epoch, info.ids[s]));
        if (rng.uniform() >= p_) continue;
        for (int attempt = 0; attempt < 10; ++attempt) {
          const double erase_area = area * rng.uniform(scale_.first, scale_.second);
          const double aspect = std::exp(rng.uniform(log_r0, log_r1));
          const auto eh = static_cast<int64_t>(std::nearbyint(std::sqrt(erase_area * aspect)));
          const auto ew = static_cast<int64_t>(std::nearbyint(std::sqrt(erase_area / aspect)));
          if (!(eh < g.h && ew < g.w) || eh < 1 || ew < 1) continue;
          const int64_t top = rng.below(g.h - eh + 1), left = rng.below(g.w - ew + 1);
          for (int64_t ch = 0; ch < g.c; ++ch) {
            U* plane = o + (s * g.c + ch) * g.h * g.w;
            for (int64_t y = top; y < top + eh; ++y) std::fill(plane + y * g.w + left, plane + y * g.w + left + ew, fv);
          }
          break;
        }
      }
    });
    return out;
  }

 private:
  double p_;
  std::pair<double, double> scale_, ratio_;
  double value_;
  uint64_t seed_;
};

class PerSample : public TransformOp {
 public:
  PerSample(std::string name, std::function<Tensor(const Tensor&, uint64_t)> fn, uint64_t seed)
      : name_(std::move(name)), fn_(std::move(fn)), seed_(seed) {}
  std::string name() const override { return name_; }
  Tensor apply(const Tensor& x, const SampleInfo& info) const override {
    std::vector<Tensor> outs;
    outs.reserve(static_cast<size_t>(x.size(0)));
    for (int64_t s = 0; s < x.size(0); ++s) {
      outs.push_back(fn_(x[s], transform_key(seed_, kUserSalt, info.epoch, info.ids[s])));
      SPORE_CHECK(outs.back().defined(), "[", name_, "] returned an undefined tensor for sample ", info.ids[s]);
      SPORE_CHECK(outs.back().shape() == outs[0].shape() && outs.back().dtype() == outs[0].dtype(), "[", name_,
                  "] returned ", shape_str(outs[0].shape()), " ", dtype_name(outs[0].dtype()), " for one sample and ",
                  shape_str(outs.back().shape()), " ", dtype_name(outs.back().dtype()), " for sample ", info.ids[s],
                  "; every output must have one shape and dtype");
    }
    if (outs.empty()) return x;
    return ops::stack(outs, 0);
  }

 private:
  std::string name_;
  std::function<Tensor(const Tensor&, uint64_t)> fn_;
  uint64_t seed_;
};

}  // namespace

Transform random_erasing(double p, std::pair<double, double> scale, std::pair<double, double> ratio, double value,
                         uint64_t seed) {
  SPORE_CHECK(p >= 0 && p <= 1, "[random_erasing] p must be in [0, 1], got ", p);
  SPORE_CHECK(scale.first > 0 && scale.first <= scale.second && scale.second <= 1,
              "[random_erasing] scale must satisfy 0 < low <= high <= 1, got (", scale.first, ", ", scale.second, ")");
  SPORE_CHECK(ratio.first > 0 && ratio.first <= ratio.second, "[random_erasing] ratio must satisfy 0 < low <= high, got (",
              ratio.first, ", ", ratio.second, ")");
  return std::make_shared<RandomErasing>(p, scale, ratio, value, seed);
}

Transform per_sample(std::string name, std::function<Tensor(const Tensor& sample, uint64_t key)> fn, uint64_t seed) {
  SPORE_CHECK(fn != nullptr, "[per_sample] the function is empty");
  return std::make_shared<PerSample>(std::move(name), std::move(fn), seed);
}

}  // namespace spore::data
