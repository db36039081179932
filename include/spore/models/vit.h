// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Vision Transformer (Dosovitskiy et al.) in torchvision's form: a strided convolution cuts the
// image into patch embeddings (conv_proj), a learned class token is prepended (class_token), a
// learned position embedding is added (pos_embedding), then `depth` pre-norm encoder layers
// (PyTorch's nn.TransformerEncoderLayer names: layers.N.self_attn, linear1, linear2, norm1, norm2),
// a final LayerNorm (norm) and a Dense head on the class token (head). Its parameter count equals
// torchvision's VisionTransformer of the same configuration.
#include <cstdint>
#include <memory>

#include "spore/nn/containers.h"
#include "spore/nn/conv.h"
#include "spore/nn/dense.h"
#include "spore/nn/dropout.h"
#include "spore/nn/normalization.h"

namespace spore::models {

struct ViTOptions {
  int64_t image_size = 32;  // square images; a multiple of patch_size
  int64_t patch_size = 4;
  int64_t in_channels = 3;
  int64_t num_classes = 10;
  int64_t dim = 192;  // embedding width (ViT-Tiny / DeiT-Tiny)
  int64_t depth = 12;
  int64_t heads = 3;
  int64_t mlp_dim = 768;
  double dropout = 0.0;
};

class VisionTransformer : public nn::UnaryCell {
 public:
  explicit VisionTransformer(ViTOptions o = {});
  /// (N, in_channels, image_size, image_size) -> (N, num_classes) logits.
  Tensor construct(const Tensor& x) override;
  const ViTOptions& options() const { return o_; }

  std::unique_ptr<nn::Conv2d> conv_proj;
  Tensor class_token;    // (1, 1, dim), zeros
  Tensor pos_embedding;  // (1, patches + 1, dim), N(0, 0.02)
  std::unique_ptr<nn::Dropout> dropout;
  std::unique_ptr<nn::CellList> layers;  // TransformerEncoderLayer (pre-norm, GELU, batch first)
  std::unique_ptr<nn::LayerNorm> norm;
  std::unique_ptr<nn::Dense> head;  // zeros, as torchvision

 protected:
  /// Redraws as the constructor did: the layers' own init plus torchvision's (LeCun-normal
  /// patch embedding, N(0, 0.02) positions, zero class token and head).
  void reset_own() override;

 private:
  void init_patch_embedding();
  ViTOptions o_;
};

/// Any configuration: `vit({.image_size = 28, .patch_size = 7, .in_channels = 1, .depth = 4})`.
std::unique_ptr<VisionTransformer> vit(ViTOptions o);
/// ViT-Tiny (dim 192, depth 12, 3 heads, MLP 768) for small images: 32x32 in 4x4 patches by default.
std::unique_ptr<VisionTransformer> vit_tiny(int64_t image_size = 32, int64_t patch_size = 4, int64_t num_classes = 10,
                                            int64_t in_channels = 3);

}  // namespace spore::models
