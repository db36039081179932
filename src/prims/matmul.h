// SPDX-License-Identifier: Apache-2.0
#pragma once
// The matmul primitive: out = alpha * op(a) @ op(b) + beta * bias, over broadcast batch dims.
#include "core/primitive.h"

namespace spore::prims {

/// Attributes of "matmul". Inputs: a (..., M, K), b (..., K, N) and optionally a bias that
/// broadcasts to the output (..., M, N). `trans_a` / `trans_b` swap the last two dims of that
/// input first (so autodiff and passes can express a^T b without a view). All inputs share
/// one dtype (the op layer promotes); bool is refused.
struct MatmulAttrs {
  bool trans_a = false;
  bool trans_b = false;
  double alpha = 1.0;
  double beta = 1.0;  // scale of the bias; 0 ignores it (NaN included), as PyTorch's addmm
  static constexpr auto fields() {
    return std::make_tuple(field("trans_a", &MatmulAttrs::trans_a), field("trans_b", &MatmulAttrs::trans_b),
                           field("alpha", &MatmulAttrs::alpha), field("beta", &MatmulAttrs::beta));
  }
};

/// The "matmul" primitive (2 or 3 inputs; a and b of rank >= 2).
const Primitive& matmul_primitive();

/// The geometry of one matmul call, shared by the reference and library kernels: batch dims
/// (broadcast), M, N, K, and each input's element strides per output batch dim (0 where the
/// input broadcasts), its row/column strides after the transpose flags.
struct MatmulGeometry {
  Shape batch;  // output batch dims
  int64_t M = 0, N = 0, K = 0;
  Strides a_batch, b_batch, c_batch, bias_batch;  // per output batch dim
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0;
  int64_t bias_m = 0, bias_n = 0;
  bool has_bias = false;
};
MatmulGeometry matmul_geometry(const MatmulAttrs& a, std::span<const Buffer> in, const Buffer& out);

/// The plain C++ kernel (every dtype but bool; 16-bit floats accumulate in float32). Exposed so
/// library kernels can fall back to it and tests can compare against it.
void matmul_reference(const MatmulAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out);

}  // namespace spore::prims
