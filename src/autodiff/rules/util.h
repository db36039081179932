// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the rule files (written with public ops, like the rules).
#include <span>

#include "autodiff/rules.h"
#include "spore/ops.h"

namespace spore::autodiff::rules {

/// A cotangent of a broadcast result summed back to an input's type: over the leading axes the
/// input lacks and over its size-1 axes that were broadcast; then reshaped and cast to `to`.
inline Tensor unbroadcast(const Tensor& ct, const TensorType& to) {
  Tensor g = ct;
  const int64_t lead = g.dim() - static_cast<int64_t>(to.shape.size());
  ops::Axes axes;
  for (int64_t i = 0; i < g.dim(); ++i)
    if (i < lead || (to.shape[i - lead] == 1 && g.shape()[i] != 1)) axes.push_back(i);
  if (!axes.empty()) g = ops::sum(g, axes, true);
  if (!(g.shape() == to.shape)) g = g.reshape(to.shape);
  if (g.dtype() != to.dtype) g = g.to(to.dtype);
  return g;
}

/// acc += v, where an undefined acc is zero.
inline void accumulate(Tensor& acc, const Tensor& v) {
  if (!v.defined()) return;
  acc = acc.defined() ? acc + v : v;
}

/// The tangent t broadcast to `shape` (for a binary op whose output is wider than its input).
inline Tensor broadcast_tangent(const Tensor& t, const Shape& shape) {
  return t.shape() == shape ? t : ops::broadcast_to(t, shape);
}

}  // namespace spore::autodiff::rules
