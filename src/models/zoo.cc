// SPDX-License-Identifier: Apache-2.0
#include "spore/models/zoo.h"

#include "spore/error.h"
#include "spore/models/classic.h"
#include "spore/models/mobilenet.h"
#include "spore/models/resnet.h"
#include "spore/models/vit.h"

namespace spore::models {

std::vector<std::string> model_names() {
  return {"mlp", "lenet", "resnet18", "resnet34", "resnet50", "mobilenet_v2", "vit_tiny"};
}

std::unique_ptr<nn::UnaryCell> create(const std::string& name, int64_t num_classes, int64_t in_channels,
                                      int64_t image_size) {
  SPORE_CHECK(num_classes >= 1 && in_channels >= 1 && image_size >= 1, "[models::create] num_classes ", num_classes,
              ", in_channels ", in_channels, " and image_size ", image_size, " must be positive");
  if (name == "mlp") return mlp({in_channels * image_size * image_size, 512, 256, num_classes});
  if (name == "lenet" || name == "lenet5") {
    SPORE_CHECK(image_size == 28, "[models::create] lenet takes 28x28 images, got image_size ", image_size,
                "; resize the data or pick another model");
    return lenet5(num_classes, in_channels);
  }
  if (name == "resnet18") return resnet18(num_classes, in_channels);
  if (name == "resnet34") return resnet34(num_classes, in_channels);
  if (name == "resnet50") return resnet50(num_classes, in_channels);
  if (name == "mobilenet_v2") return mobilenet_v2(num_classes, 1.0, in_channels);
  if (name == "vit_tiny") return vit_tiny(image_size, 4, num_classes, in_channels);
  std::string known;
  for (const auto& n : model_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("[models::create] unknown model '" + name + "'; known: " + known);
}

}  // namespace spore::models
