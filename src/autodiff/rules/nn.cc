// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of matmul, conv, pooling, normalization, embedding, interpolation, losses
// and dropout: one file per part (nn_parts.h).
#include "autodiff/rules/nn_parts.h"

namespace spore::autodiff {

void install_nn_rules() {
  install_matmul_rules();
  install_conv_rules();
  install_pool_rules();
  install_resize_rules();
  install_embedding_rules();
  install_norm_rules();
  install_batch_norm_rules();
  install_batch_norm_grad_rules();
  install_loss_rules();
  install_dropout_rules();
}

}  // namespace spore::autodiff
