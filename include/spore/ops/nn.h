// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "spore/tensor.h"

namespace spore::ops {

/// exp(x - max) / sum(exp(x - max)) along `axis` (floating x; 16-bit floats compute in float32).
Tensor softmax(const Tensor& x, int64_t axis = -1);
/// x - logsumexp(x) along `axis`, computed stably.
Tensor log_softmax(const Tensor& x, int64_t axis = -1);

/// Convolution over N spatial dims (N = 1, 2, 3), NC(D)HW layout, weight (O, I/groups, k...).
struct ConvOptions {
  std::vector<int64_t> stride = {1};
  /// Explicit symmetric padding per spatial dim; ignored when `same` is set.
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> dilation = {1};
  int64_t groups = 1;
  /// PyTorch's padding='same' (stride 1).
  bool same = false;
};
/// 1-D convolution: x (N, C, L) or unbatched (C, L), w (O, C/groups, k), bias (O) optional.
/// Option lists hold one value (repeated) or one per spatial dim. Floating dtypes only.
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& bias = {}, const ConvOptions& o = {});
/// 2-D convolution: x (N, C, H, W) or (C, H, W), w (O, C/groups, kh, kw), bias (O) optional.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias = {}, const ConvOptions& o = {});
/// 3-D convolution: x (N, C, D, H, W) or (C, D, H, W), w (O, C/groups, kd, kh, kw).
Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& bias = {}, const ConvOptions& o = {});
/// Weight (I, O/groups, kh, kw) as PyTorch.
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias = {}, const ConvOptions& o = {},
                        std::vector<int64_t> output_padding = {0});

/// Window options of the 2-D pools; one value applies to both dims. Padding is at most half
/// the kernel; ceil_mode keeps a last partial window that starts inside the input or left pad.
struct PoolOptions {
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride;  // empty: = kernel
  std::vector<int64_t> padding = {0};
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg only
};
/// Max over each window of x (N, C, H, W) or (C, H, W); NaN propagates, as in PyTorch.
Tensor max_pool2d(const Tensor& x, const PoolOptions& o);
/// (values, flat indices into each input plane) as PyTorch's return_indices=True.
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const PoolOptions& o);
/// Mean over each window; count_include_pad counts the padding (not ceil_mode's overhang).
Tensor avg_pool2d(const Tensor& x, const PoolOptions& o);
/// Mean over windows [floor(i*H/out), ceil((i+1)*H/out)) giving exactly `output_size`.
Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> output_size);

/// Normalizes over axis 1 (channels). Training: batch statistics; running stats are updated
/// in place when given (momentum as PyTorch). Returns y.
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor running_mean,
                  Tensor running_var, bool training, double momentum = 0.1, double eps = 1e-5);
/// Normalizes over the trailing dims `normalized_shape` (which must match x's last dims); weight
/// and bias, when given, have that shape.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
/// Normalizes x (N, C, *) over groups of C/groups channels; weight and bias have shape (C).
Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
/// x * rsqrt(mean(x^2) + eps) over the trailing dims [* weight]; eps defaults to the machine
/// epsilon of x's dtype, as PyTorch.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
/// Zeroes each element with probability p and scales by 1/(1-p) (training only).
Tensor dropout(const Tensor& x, double p, bool training = true);
/// Rows of `weight` (V, D) picked by integer `indices`: shape indices.shape + (D,). An index
/// outside [0, V) is an error.
Tensor embedding(const Tensor& weight, const Tensor& indices);
/// softmax(q k^T * scale + mask) v; mask is boolean (true = keep) or additive float.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask = {}, bool causal = false,
                                    std::optional<double> scale = std::nullopt);
enum class InterpolateMode { Nearest, Bilinear };
/// Resizes x (N, C, H, W) to `size` (PyTorch's nearest, or bilinear with align_corners).
Tensor interpolate(const Tensor& x, std::array<int64_t, 2> size, InterpolateMode mode = InterpolateMode::Nearest,
                   bool align_corners = false);

/// Negative log likelihood of log-probabilities (N, C) or (N, C, d...) against class indices.
enum class Reduction { None, Mean, Sum };
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = {},
                int64_t ignore_index = -100, Reduction reduction = Reduction::Mean);
/// Cross-entropy from logits with class indices (int64) or class probabilities (float).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                     int64_t ignore_index = -100, Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0);

}  // namespace spore::ops
