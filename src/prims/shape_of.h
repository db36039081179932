// SPDX-License-Identifier: Apache-2.0
#pragma once
// shape_of(x): x's sizes as an int64 1-D tensor, read from the tensor when the node runs. A
// traced ONNX Shape of a value whose sizes a tensor's values give (value symbols, shape.h) is
// one: its data edge from x keeps the node that binds those sizes ahead of it, where a constant
// would leave it dead to the passes.
#include "core/primitive.h"

namespace spore::prims {

const Primitive& shape_of_primitive();

}  // namespace spore::prims
