// SPDX-License-Identifier: Apache-2.0
#include "spore/models/vit.h"

#include <cmath>

#include "spore/error.h"
#include "spore/nn/init.h"
#include "spore/nn/transformer.h"
#include "spore/ops.h"

namespace spore::models {

VisionTransformer::VisionTransformer(ViTOptions o) : nn::UnaryCell("VisionTransformer"), o_(o) {
  SPORE_CHECK(o.image_size > 0 && o.patch_size > 0 && o.image_size % o.patch_size == 0,
              "[VisionTransformer] image_size ", o.image_size, " must be a positive multiple of patch_size ",
              o.patch_size);
  SPORE_CHECK(o.in_channels > 0 && o.num_classes > 0 && o.depth > 0 && o.mlp_dim > 0,
              "[VisionTransformer] in_channels, num_classes, depth and mlp_dim must be positive");
  SPORE_CHECK(o.heads > 0 && o.dim > 0 && o.dim % o.heads == 0, "[VisionTransformer] dim ", o.dim,
              " must be a positive multiple of heads ", o.heads);
  const int64_t grid = o.image_size / o.patch_size;
  conv_proj = std::make_unique<nn::Conv2d>(o.in_channels, o.dim, o.patch_size, o.patch_size);
  init_patch_embedding();
  class_token = nn::init::zeros({1, 1, o.dim});
  pos_embedding = nn::init::normal({1, grid * grid + 1, o.dim}, 0.0, 0.02);
  dropout = std::make_unique<nn::Dropout>(o.dropout);
  layers = std::make_unique<nn::CellList>();
  const nn::TransformerOptions lo{.dim_feedforward = o.mlp_dim,
                                  .dropout = o.dropout,
                                  .activation = nn::Activation::GELU,
                                  .layer_norm_eps = 1e-6,
                                  .batch_first = true,
                                  .norm_first = true};
  for (int64_t i = 0; i < o.depth; ++i)
    layers->append(std::make_unique<nn::TransformerEncoderLayer>(o.dim, o.heads, lo));
  norm = std::make_unique<nn::LayerNorm>(o.dim, 1e-6);
  head = std::make_unique<nn::Dense>(o.dim, o.num_classes);
  nn::init::zeros_(head->weight);
  nn::init::zeros_(head->bias);
  register_cell("conv_proj", conv_proj.get());
  register_parameter("class_token", &class_token);
  register_parameter("pos_embedding", &pos_embedding);
  register_cell("dropout", dropout.get());
  register_cell("layers", layers.get());
  register_cell("norm", norm.get());
  register_cell("head", head.get());
}

// torchvision's LeCun-normal patch embedding.
void VisionTransformer::init_patch_embedding() {
  nn::init::trunc_normal_(conv_proj->weight, 0.0,
                          std::sqrt(1.0 / static_cast<double>(o_.in_channels * o_.patch_size * o_.patch_size)));
  nn::init::zeros_(conv_proj->bias);
}

// The constructor's order: each child reset where it was built, the post-init right after.
void VisionTransformer::reset_own() {
  reset_child(*conv_proj);
  init_patch_embedding();
  nn::init::zeros_(class_token);
  nn::init::normal_(pos_embedding, 0.0, 0.02);
  reset_child(*dropout);
  reset_child(*layers);
  reset_child(*norm);
  reset_child(*head);
  nn::init::zeros_(head->weight);
  nn::init::zeros_(head->bias);
}

Tensor VisionTransformer::construct(const Tensor& x) {
  SPORE_CHECK(
      x.dim() == 4 && x.shape()[1] == o_.in_channels && x.shape()[2] == o_.image_size && x.shape()[3] == o_.image_size,
      "[VisionTransformer] expects (N, ", o_.in_channels, ", ", o_.image_size, ", ", o_.image_size, ") images, got ",
      shape_str(x.shape()), "; build it with ViTOptions matching the data");
  // (N, dim, grid, grid) -> (N, patches, dim), then the class token in front.
  Tensor h = ops::transpose(ops::flatten((*conv_proj)(x), 2), 1, 2);
  Tensor cls = ops::expand(class_token, {x.shape()[0], 1, o_.dim});
  h = (*dropout)(ops::concat({cls, h}, 1) + pos_embedding);
  for (size_t i = 0; i < layers->size(); ++i) h = layers->at<nn::TransformerEncoderLayer>(i)(h);
  return (*head)(ops::select((*norm)(h), 1, 0));
}

std::unique_ptr<VisionTransformer> vit(ViTOptions o) { return std::make_unique<VisionTransformer>(o); }

std::unique_ptr<VisionTransformer> vit_tiny(int64_t image_size, int64_t patch_size, int64_t num_classes,
                                            int64_t in_channels) {
  return vit(
      {.image_size = image_size, .patch_size = patch_size, .in_channels = in_channels, .num_classes = num_classes});
}

}  // namespace spore::models
