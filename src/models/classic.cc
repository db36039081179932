// SPDX-License-Identifier: Apache-2.0
#include "spore/models/classic.h"

#include "spore/error.h"
#include "spore/nn/activation.h"
#include "spore/nn/conv.h"
#include "spore/nn/dense.h"
#include "spore/nn/pooling.h"

namespace spore::models {

std::unique_ptr<nn::SequentialCell> mlp(const std::vector<int64_t>& sizes) {
  SPORE_CHECK(sizes.size() >= 2, "[models::mlp] needs at least an input and an output size, got ", sizes.size(),
              " sizes");
  auto net = std::make_unique<nn::SequentialCell>();
  net->add(std::make_unique<nn::Flatten>());
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    SPORE_CHECK(sizes[i] > 0 && sizes[i + 1] > 0, "[models::mlp] layer sizes must be positive, got ", sizes[i], " and ",
                sizes[i + 1]);
    net->add(std::make_unique<nn::Dense>(sizes[i], sizes[i + 1]));
    if (i + 2 < sizes.size()) net->add(std::make_unique<nn::ReLU>());
  }
  return net;
}

std::unique_ptr<nn::SequentialCell> lenet5(int64_t num_classes, int64_t in_channels) {
  SPORE_CHECK(num_classes >= 1 && in_channels >= 1, "[models::lenet5] num_classes and in_channels must be positive");
  // Added one by one: the layers draw their weights in this order. (Built as constructor
  // arguments, the order of the draws would be the compiler's choice: GCC evaluates them last
  // to first, so the same seed gave other weights under another compiler, and reset_parameters,
  // which redraws in registration order, could not reproduce them.)
  auto net = std::make_unique<nn::SequentialCell>();
  net->add(std::make_unique<nn::Conv2d>(in_channels, 6, 5, /*stride=*/1, /*padding=*/2))
      .add(std::make_unique<nn::ReLU>())
      .add(std::make_unique<nn::MaxPool2d>(2))
      .add(std::make_unique<nn::Conv2d>(6, 16, 5))
      .add(std::make_unique<nn::ReLU>())
      .add(std::make_unique<nn::MaxPool2d>(2))
      .add(std::make_unique<nn::Flatten>())
      .add(std::make_unique<nn::Dense>(16 * 5 * 5, 120))
      .add(std::make_unique<nn::ReLU>())
      .add(std::make_unique<nn::Dense>(120, 84))
      .add(std::make_unique<nn::ReLU>())
      .add(std::make_unique<nn::Dense>(84, num_classes));
  return net;
}

}  // namespace spore::models
