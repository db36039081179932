// SPDX-License-Identifier: Apache-2.0
#pragma once
// The image-model registry behind `spore train --model NAME`: every zoo model that fits the
// (num_classes, in_channels, image_size) signature, by name.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spore/nn/cell.h"

namespace spore::models {

/// A zoo model by name for (N, in_channels, image_size, image_size) inputs: "mlp", "lenet"
/// ("lenet5"; 28x28 only), "resnet18", "resnet34", "resnet50", "mobilenet_v2", "vit_tiny"
/// (4x4 patches, so image_size must be a multiple of 4). An unknown name lists the known ones.
std::unique_ptr<nn::UnaryCell> create(const std::string& name, int64_t num_classes = 10, int64_t in_channels = 1,
                                      int64_t image_size = 28);
/// The names create() knows.
std::vector<std::string> model_names();

}  // namespace spore::models
