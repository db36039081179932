// SPDX-License-Identifier: Apache-2.0
#pragma once
// Convolution primitives over 1-3 spatial dims, NC(D)HW layout: "conv" (forward) and
// "conv_transpose". Public tensors stay plain; the oneDNN kernel reorders to its own layouts
// inside its prepared kernel.
#include "core/primitive.h"

namespace spore::prims {

using IntList = SmallVec<int64_t, 6>;

/// Attributes of "conv": one entry per spatial dim. Padding may be asymmetric (PyTorch's
/// padding='same' puts the odd element on the right). Inputs: x (N, C, *S), w (O, C/groups,
/// *K) and optionally bias (O).
struct ConvAttrs {
  IntList stride, pad_l, pad_r, dilation;
  int64_t groups = 1;
  static constexpr auto fields() {
    return std::make_tuple(field("stride", &ConvAttrs::stride), field("pad_l", &ConvAttrs::pad_l),
                           field("pad_r", &ConvAttrs::pad_r), field("dilation", &ConvAttrs::dilation),
                           field("groups", &ConvAttrs::groups));
  }
};

/// Attributes of "conv_transpose" (PyTorch's ConvTransposeNd): x (N, C, *S), w (C, O/groups,
/// *K), optional bias (O). Output size (S-1)*stride - 2*padding + dilation*(K-1) + output_padding + 1.
struct ConvTransposeAttrs {
  IntList stride, padding, output_padding, dilation;
  int64_t groups = 1;
  static constexpr auto fields() {
    return std::make_tuple(field("stride", &ConvTransposeAttrs::stride), field("padding", &ConvTransposeAttrs::padding),
                           field("output_padding", &ConvTransposeAttrs::output_padding),
                           field("dilation", &ConvTransposeAttrs::dilation), field("groups", &ConvTransposeAttrs::groups));
  }
};

const Primitive& conv_primitive();

/// True when a conv's kernel (w: O, C, *K) covers more positions than its output (y: N, O, *Q)
/// and fits inside its image (x: N, C, *S): a weight gradient in disguise (autodiff's
/// conv_weight_grad), which the oneDNN kernel runs as backward-weights over swapped dims; such
/// convs stay plain (no epilogue, no channels-last). Symbolic sizes: false.
bool conv_is_weight_gradient_shaped(const Shape& x, const Shape& w, const Shape& y);
const Primitive& conv_transpose_primitive();

/// Plain C++ kernels (float32, float64, 16-bit floats accumulating in float32). Exposed for the
/// oneDNN kernels' fallback and for tests.
void conv_reference(const ConvAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out);
void conv_transpose_reference(const ConvTransposeAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out);

}  // namespace spore::prims
