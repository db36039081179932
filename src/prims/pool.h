// SPDX-License-Identifier: Apache-2.0
#pragma once
// 2-D pooling primitives over (N, C, H, W): "pool2d" (max or average window pooling, max
// optionally with PyTorch-style indices) and "adaptive_avg_pool2d".
#include "prims/conv.h"

namespace spore::prims {

enum class PoolKind : uint8_t { Max, Avg };

/// Attributes of "pool2d". Output size follows PyTorch (ceil_mode drops a last window that
/// would start in the right padding). Max with `with_indices` has a second int64 output: the
/// flat index h * W + w of each maximum within its input plane.
struct Pool2dAttrs {
  PoolKind kind = PoolKind::Max;
  IntList kernel, stride, padding;  // 2 entries each
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg only
  bool with_indices = false;      // max only
  static constexpr auto fields() {
    return std::make_tuple(field("kind", &Pool2dAttrs::kind), field("kernel", &Pool2dAttrs::kernel),
                           field("stride", &Pool2dAttrs::stride), field("padding", &Pool2dAttrs::padding),
                           field("ceil_mode", &Pool2dAttrs::ceil_mode),
                           field("count_include_pad", &Pool2dAttrs::count_include_pad),
                           field("with_indices", &Pool2dAttrs::with_indices));
  }
};

/// Attributes of "adaptive_avg_pool2d": window i covers [floor(i*in/out), ceil((i+1)*in/out)).
struct AdaptivePool2dAttrs {
  IntList output_size;
  static constexpr auto fields() { return std::make_tuple(field("output_size", &AdaptivePool2dAttrs::output_size)); }
};

const Primitive& pool2d_primitive();
const Primitive& adaptive_avg_pool2d_primitive();

/// Output extent of one pooled dim (PyTorch's pooling_output_shape, dilation 1).
int64_t pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode);

/// Plain C++ kernel for "pool2d" (every float dtype, any strides); also the oneDNN fallback.
void pool2d_reference(const Pool2dAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out);

}  // namespace spore::prims
