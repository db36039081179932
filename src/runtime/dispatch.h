// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one dispatch every op goes through: infer types, then (no trace open) allocate outputs
// and run the kernel now, then record into open traces.
#include <array>
#include <initializer_list>
#include <span>

#include "core/primitive.h"

namespace spore::runtime {

/// A primitive call's outputs (at most kMaxOutputs).
struct Outputs {
  std::array<Tensor, kMaxOutputs> t;
  int n = 0;
  Tensor& operator[](int i) { return t[i]; }
};

/// Runs primitive `p` on `inputs`. `device` is used only when there are no inputs (factories).
Outputs dispatch(const Primitive& p, const void* attrs, std::span<const Tensor> inputs,
                 Device device = kCPU);

/// Single-output convenience.
template <class Attrs>
Tensor call(const Primitive& p, const Attrs& attrs, std::initializer_list<Tensor> inputs,
            Device device = kCPU) {
  return std::move(dispatch(p, &attrs, std::span<const Tensor>(inputs.begin(), inputs.size()), device).t[0]);
}
template <class Attrs>
Outputs call_multi(const Primitive& p, const Attrs& attrs, std::initializer_list<Tensor> inputs,
                   Device device = kCPU) {
  return dispatch(p, &attrs, std::span<const Tensor>(inputs.begin(), inputs.size()), device);
}

/// The type of a tensor as inference sees it.
TensorType type_of(const Tensor& t);

}  // namespace spore::runtime
