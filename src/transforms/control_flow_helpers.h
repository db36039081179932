// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small helpers shared by the control-flow rules (jvp/vjp, residual plans, vmap).
#include <span>
#include <vector>

#include "ir/graph.h"
#include "runtime/dispatch.h"
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

/// Whether a loop body returns its input j unchanged as output j (a loop-invariant carry).
inline bool passes_through(const ir::Graph& body, size_t j) {
  return body.outputs()[j].value == ir::ValueRef{ir::ValueRef::kParam, static_cast<int32_t>(j)};
}

}  // namespace spore::transforms::cf_helpers
