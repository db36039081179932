// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small helpers shared by the control-flow rules (jvp/vjp, residual plans, vmap).
#include <span>
#include <vector>

#include "ir/graph.h"
#include "runtime/dispatch.h"
#include "spore/ops.h"
#include "spore/tensor.h"
#include "transforms/ir_bridge.h"

namespace spore::transforms::cf_helpers {

inline std::vector<TensorType> types_of(std::span<const Tensor> v) {
  std::vector<TensorType> t;
  for (const Tensor& x : v) t.push_back(runtime::type_of(x));
  return t;
}

/// The types of a sub-graph's outputs.
inline std::vector<TensorType> output_types(const ir::Graph& g) {
  std::vector<TensorType> t;
  for (const auto& o : g.outputs()) t.push_back(from_ir(std::get<ir::TensorType>(g.type_of(o.value))));
  return t;
}

/// The type of one step's slice of a scanned (stacked) value: the leading axis dropped.
inline TensorType slice_type(TensorType t) {
  Shape s;
  for (size_t d = 1; d < t.shape.size(); ++d) s.push_back(t.shape[d]);
  t.shape = s;
  t.weak = false;
  return t;
}
inline TensorType slice_type(const Tensor& stacked) { return slice_type(runtime::type_of(stacked)); }

inline std::vector<int> float_positions(std::span<const TensorType> t) {
  std::vector<int> p;
  for (size_t i = 0; i < t.size(); ++i)
    if (is_floating(t[i].dtype)) p.push_back(static_cast<int>(i));
  return p;
}

/// Whether a type has a dimension known only at run time (a loop's trip count).
inline bool has_runtime_dims(const TensorType& t) {
  for (Dim d : t.shape)
    if (is_symbolic(d)) return true;
  return false;
}
inline bool any_runtime_dims(std::span<const TensorType> ts) {
  for (const TensorType& t : ts)
    if (has_runtime_dims(t)) return true;
  return false;
}

/// Zeros shaped like `t` at run time: a factory's shape is fixed when traced, so for a type with
/// run-time dimensions the zeros are derived from `t` itself (where(t < t, t, 0) is 0 for every
/// value, NaN and infinities included).
inline Tensor zeros_like_at_run_time(const Tensor& t) {
  return ops::where(ops::less(t, t), t, ops::scalar_tensor(0.0, t.dtype()));
}

/// Whether a loop body returns its input j unchanged as output j (a loop-invariant carry).
inline bool passes_through(const ir::Graph& body, size_t j) {
  return body.outputs()[j].value == ir::ValueRef{ir::ValueRef::kParam, static_cast<int32_t>(j)};
}

}  // namespace spore::transforms::cf_helpers
