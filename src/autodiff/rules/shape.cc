// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the view and shape primitives.
#include "autodiff/rules/util.h"
#include "prims/views.h"

namespace spore::autodiff {
namespace {

}  // namespace

void install_shape_rules() {}

}  // namespace spore::autodiff
