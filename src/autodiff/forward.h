// SPDX-License-Identifier: Apache-2.0
#pragma once
// Forward mode (jvp): a frame whose tensors carry tangents. Each op with a tangent-carrying
// input runs its jvp rule right away, with only the outer frames active, so tangents of
// tangents (jvp of jvp) and tangents of gradients (jvp of grad: Hessian-vector products) are
// recorded by the outer frames.
#include "autodiff/frames.h"

namespace spore::autodiff {

class Forward final : public Frame {
 public:
  Forward() : Frame(Kind::Forward) {}

  /// A fresh alias of `primal` carrying `tangent` (same shape and dtype; undefined = zero).
  Tensor track(const Tensor& primal, const Tensor& tangent);
  /// The tangent `t` carries in this frame (undefined when it has none).
  Tensor tangent_of(const Tensor& t) const;

  void record(int depth, const Primitive& p, const void* attrs, std::span<const Tensor> in,
              std::span<const Tensor> out) override;
};

}  // namespace spore::autodiff
