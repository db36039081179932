// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spore/data/dataset.h"
#include "spore/data/random.h"

/// Transforms for Dataset::map. A transform runs on a block of samples stacked along axis 0
/// (one loop over the whole block, no tensor per sample). Image transforms take samples laid out
/// as torchvision's tensors: (H, W) or (C, H, W); decoded (H, W, C) images go through
/// to_tensor() or hwc_to_chw() first.
namespace spore::data {

/// What a transform sees besides the data: the epoch and each row's sample index (the row's
/// index in the map's input, so its random key is the same whatever the worker count).
struct SampleInfo {
  uint64_t epoch = 0;
  std::span<const int64_t> ids;
};

/// A transform: pure, thread-safe (workers share it), and never writes into its input.
class TransformOp {
 public:
  virtual ~TransformOp() = default;
  /// "normalize", "random_crop(24x24, pad 4)", ... for errors and stats().
  virtual std::string name() const = 0;
  /// `batch` holds info.ids.size() samples stacked along axis 0; returns the transformed samples,
  /// stacked the same way.
  virtual Tensor apply(const Tensor& batch, const SampleInfo& info) const = 0;
};

/// Converts to `dtype` and multiplies by `scale` (e.g. type_cast(Float32, 1 / 255.0)). A scale
/// other than 1 needs a floating `dtype`.
Transform type_cast(DType dtype, double scale = 1.0);
/// uint8 (H, W) or (H, W, C) images to float32 (1, H, W) or (C, H, W) in [0, 1] (torchvision's ToTensor).
Transform to_tensor();
/// (x - mean[c]) / std[c] per channel of float (C, H, W) or (H, W) samples; one value serves every channel.
Transform normalize(std::vector<double> mean, std::vector<double> std);
/// (H, W, C) to (C, H, W).
Transform hwc_to_chw();
/// Bilinear resize of (H, W) or (C, H, W) samples to (height, width), half-pixel centers
/// (PyTorch's interpolate with align_corners=False, no antialias). uint8 rounds to nearest.
Transform resize(int64_t height, int64_t width);
/// The centered (height, width) window (torchvision's rule for odd margins); zero-padded when
/// the image is smaller.
Transform center_crop(int64_t height, int64_t width);
/// A random (height, width) window of the image padded by `padding` pixels of `fill` on each side.
Transform random_crop(int64_t height, int64_t width, int64_t padding = 0, double fill = 0, uint64_t seed = 0);
/// Mirrors the width axis with probability p.
Transform random_horizontal_flip(double p = 0.5, uint64_t seed = 0);
/// Integer class labels () to one-hot vectors (num_classes); a label outside [0, num_classes) is an error.
Transform one_hot(int64_t num_classes, DType dtype = DType::Float32);
/// With probability p, sets a random rectangle (area fraction in `scale`, aspect ratio in
/// `ratio`, drawn log-uniformly) of every channel to `value` (torchvision's RandomErasing algorithm).
Transform random_erasing(double p = 0.5, std::pair<double, double> scale = {0.02, 0.33},
                         std::pair<double, double> ratio = {0.3, 3.3}, double value = 0, uint64_t seed = 0);
/// Encoded PNG or JPEG bytes, uint8 (bytes,) samples, to uint8 (H, W, C) images (the format from
/// the first bytes). `channels`: 3 RGB, 1 gray, 0 as stored (see ImageFolderOptions). Every
/// sample of a block must decode to one shape; image_folder with decode = false sends its
/// encoded rows one per block.
Transform decode(int channels = 3);
/// A user function applied to each sample alone (slower: one call per sample); `key` is the
/// sample's random key from (seed, epoch, sample index). Outputs must share one shape.
Transform per_sample(std::string name, std::function<Tensor(const Tensor& sample, uint64_t key)> fn,
                     uint64_t seed = 0);

}  // namespace spore::data
