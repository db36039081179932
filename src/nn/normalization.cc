// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/normalization.h"

#include <algorithm>

#include "spore/nn/init.h"
#include "spore/ops.h"

namespace spore::nn {

BatchNorm::BatchNorm(const char* name, int64_t num_features, double eps, double momentum, bool affine,
                     bool track_running_stats, std::vector<int64_t> ranks)
    : UnaryCell(name),
      num_features_(num_features),
      eps_(eps),
      momentum_(momentum),
      track_(track_running_stats),
      ranks_(std::move(ranks)) {
  SPORE_CHECK(num_features > 0, "[", name, "] num_features must be positive, got ", num_features);
  if (affine) {
    weight = init::ones({num_features});
    bias = init::zeros({num_features});
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
  if (track_) {
    running_mean = init::zeros({num_features});
    running_var = init::ones({num_features});
    num_batches_tracked = ops::zeros({}, {DType::Int64, init::current_device()});
    register_buffer("running_mean", &running_mean);
    register_buffer("running_var", &running_var);
    register_buffer("num_batches_tracked", &num_batches_tracked);
  }
}

void BatchNorm::reset_own() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
  if (!track_) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  if (num_batches_tracked.device().type != DeviceType::Meta) ops::fill_(num_batches_tracked, 0);  // int64: no init form
}

Tensor BatchNorm::construct(const Tensor& x) {
  SPORE_CHECK(std::find(ranks_.begin(), ranks_.end(), x.dim()) != ranks_.end() && x.size(1) == num_features_, "[",
              type_name(), "] input has shape ", shape_str(x.shape()), "; expected ",
              ranks_.size() == 1 ? "(N, C, H, W)" : "(N, C) or (N, C, L)", " with C = ", num_features_);
  const bool batch_stats = is_training() || !track_;
  if (is_training() && track_) ops::copy_(num_batches_tracked, num_batches_tracked + 1);
  return ops::batch_norm(x, weight, bias, track_ ? running_mean : Tensor(), track_ ? running_var : Tensor(),
                         batch_stats, momentum_, eps_);
}

LayerNorm::LayerNorm(IntList normalized_shape, double eps, bool affine, bool with_bias)
    : UnaryCell("LayerNorm"), shape_(normalized_shape.values.begin(), normalized_shape.values.end()), eps_(eps) {
  SPORE_CHECK(!shape_.empty(), "[LayerNorm] normalized_shape is empty; give the trailing dims to normalize");
  if (affine) {
    weight = init::ones(shape_);
    register_parameter("weight", &weight);
    if (with_bias) {
      bias = init::zeros(shape_);
      register_parameter("bias", &bias);
    }
  }
}

// Norm layers draw nothing: ones and zeros, as their constructors make them.
void LayerNorm::reset_own() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNorm::construct(const Tensor& x) { return ops::layer_norm(x, shape_, weight, bias, eps_); }

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : UnaryCell("GroupNorm"), groups_(num_groups), channels_(num_channels), eps_(eps) {
  SPORE_CHECK(num_groups > 0 && num_channels % num_groups == 0, "[GroupNorm] num_channels ", num_channels,
              " must be divisible by num_groups ", num_groups);
  if (affine) {
    weight = init::ones({num_channels});
    bias = init::zeros({num_channels});
    register_parameter("weight", &weight);
    register_parameter("bias", &bias);
  }
}

void GroupNorm::reset_own() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor GroupNorm::construct(const Tensor& x) {
  SPORE_CHECK(x.dim() >= 2 && x.size(1) == channels_, "[GroupNorm] input has shape ", shape_str(x.shape()),
              "; expected (N, ", channels_, ", *)");
  return ops::group_norm(x, groups_, weight, bias, eps_);
}

RMSNorm::RMSNorm(IntList normalized_shape, std::optional<double> eps, bool affine)
    : UnaryCell("RMSNorm"), shape_(normalized_shape.values.begin(), normalized_shape.values.end()), eps_(eps) {
  SPORE_CHECK(!shape_.empty(), "[RMSNorm] normalized_shape is empty; give the trailing dims to normalize");
  if (affine) {
    weight = init::ones(shape_);
    register_parameter("weight", &weight);
  }
}

void RMSNorm::reset_own() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNorm::construct(const Tensor& x) { return ops::rms_norm(x, shape_, weight, eps_); }

}  // namespace spore::nn
