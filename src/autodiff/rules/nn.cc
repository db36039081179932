// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of matmul, conv, pooling, normalization, embedding, interpolation, losses
// and dropout.
#include "autodiff/rules/util.h"
#include "prims/matmul.h"

namespace spore::autodiff {
namespace {

}  // namespace

void install_nn_rules() {}

}  // namespace spore::autodiff
