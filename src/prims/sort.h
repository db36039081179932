// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sorting along one axis: sort (stable, all of it) and topk (the first k). Both give
// (values, int64 indices). NaN orders above every number, as in PyTorch: last ascending,
// first descending, and counted among the largest by topk.
#include "core/primitive.h"

namespace spore::prims {

/// Stable sort along `axis` (normalized); ties keep their input order.
struct SortAttrs {
  int64_t axis = -1;
  bool descending = false;
  static constexpr auto fields() {
    return std::make_tuple(field("axis", &SortAttrs::axis), field("descending", &SortAttrs::descending));
  }
};
/// The k largest (or smallest) along `axis`, in sorted order; ties go to the lower index.
struct TopkAttrs {
  int64_t k = 1;
  int64_t axis = -1;
  bool largest = true;
  static constexpr auto fields() {
    return std::make_tuple(field("k", &TopkAttrs::k), field("axis", &TopkAttrs::axis),
                           field("largest", &TopkAttrs::largest));
  }
};

const Primitive& sort_primitive();
const Primitive& topk_primitive();

}  // namespace spore::prims
