// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small classic networks, each constructible in one line: an MLP and LeNet-5.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spore/models/zoo.h"  // create() and model_names(), declared here before the zoo grew
#include "spore/nn/containers.h"

namespace spore::models {

/// Flatten, then Dense layers of the given sizes with ReLU between them:
/// `mlp({784, 512, 256, 10})` takes (N, 1, 28, 28) or (N, 784) and returns (N, 10) logits.
std::unique_ptr<nn::SequentialCell> mlp(const std::vector<int64_t>& sizes);

/// LeNet-5 for 28x28 inputs (MNIST / Fashion-MNIST), with ReLU and max pooling:
/// conv 5x5 (pad 2) -> 6, pool, conv 5x5 -> 16, pool, dense 400-120-84-classes.
std::unique_ptr<nn::SequentialCell> lenet5(int64_t num_classes = 10, int64_t in_channels = 1);

}  // namespace spore::models
