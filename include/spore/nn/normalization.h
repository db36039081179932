// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>

#include "spore/nn/cell.h"
#include "spore/nn/int_list.h"

namespace spore::nn {

/// Batch normalization over axis 1. Training normalizes with the batch statistics and updates
/// the running ones (buffers running_mean, running_var, num_batches_tracked; PyTorch's momentum);
/// eval normalizes with the running statistics. Without track_running_stats it always uses
/// the batch's. BatchNorm1d takes (N, C) or (N, C, L), BatchNorm2d (N, C, H, W).
class BatchNorm : public UnaryCell {
 public:
  Tensor construct(const Tensor& x) override;

  Tensor weight;  // gamma (ones), when affine
  Tensor bias;    // beta (zeros), when affine
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;  // int64 scalar

 protected:
  BatchNorm(const char* name, int64_t num_features, double eps, double momentum, bool affine,
            bool track_running_stats, std::vector<int64_t> ranks);
  /// Weight ones, bias zeros and the running statistics restarted (PyTorch's
  /// reset_parameters, reset_running_stats included).
  void reset_own() override;

 private:
  int64_t num_features_;
  double eps_, momentum_;
  bool track_;
  std::vector<int64_t> ranks_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm1d", num_features, eps, momentum, affine, track_running_stats, {2, 3}) {}
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm2d", num_features, eps, momentum, affine, track_running_stats, {4}) {}
};

/// Normalizes over the trailing `normalized_shape` dims; weight ones and bias zeros.
class LayerNorm : public UnaryCell {
 public:
  explicit LayerNorm(IntList normalized_shape, double eps = 1e-5, bool elementwise_affine = true, bool bias = true);
  Tensor construct(const Tensor& x) override;

  Tensor weight;
  Tensor bias;

 protected:
  void reset_own() override;

 private:
  Shape shape_;
  double eps_;
};

/// Normalizes (N, C, *) over groups of channels; per-channel weight and bias.
class GroupNorm : public UnaryCell {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor construct(const Tensor& x) override;

  Tensor weight;
  Tensor bias;

 protected:
  void reset_own() override;

 private:
  int64_t groups_, channels_;
  double eps_;
};

/// x / rms(x) over the trailing dims [* weight]; eps defaults to the dtype's machine epsilon.
class RMSNorm : public UnaryCell {
 public:
  explicit RMSNorm(IntList normalized_shape, std::optional<double> eps = std::nullopt, bool elementwise_affine = true);
  Tensor construct(const Tensor& x) override;

  Tensor weight;

 protected:
  void reset_own() override;

 private:
  Shape shape_;
  std::optional<double> eps_;
};

}  // namespace spore::nn
