// SPDX-License-Identifier: Apache-2.0
#pragma once
// The nn family's rule files (src/autodiff/rules/<part>.cc); install_nn_rules() in nn.cc runs
// each part's install function. Private to src/autodiff/rules.
#include "autodiff/rules/util.h"

namespace spore::autodiff {

namespace rules {
/// A GEMM operand the library kernel takes: cotangents and tangents are often broadcast views
/// (the cotangent of a sum is one value expanded), and a stride-0 operand sends matmul to the
/// reference kernel, hundreds of times slower. Copies those; transposed views are fine.
inline Tensor gemm_operand(const Tensor& t) {
  for (int64_t i = 0; i < t.dim(); ++i)
    if (t.strides()[i] == 0 && t.shape()[i] > 1) return t.contiguous();
  return t;
}
}  // namespace rules

void install_matmul_rules();     // matmul.cc
void install_conv_rules();       // conv.cc: conv, conv_transpose
void install_pool_rules();       // pool.cc: pool2d (max, avg), adaptive_avg_pool2d
void install_resize_rules();     // resize.cc: interpolate
void install_embedding_rules();  // embedding.cc
void install_norm_rules();       // norm.cc: layer_norm, rms_norm, group_norm
void install_batch_norm_rules(); // batch_norm.cc
void install_batch_norm_grad_rules(); // batch_norm_grad.cc
void install_loss_rules();       // loss.cc: nll_loss, soft_nll_loss
void install_dropout_rules();    // dropout.cc

}  // namespace spore::autodiff
