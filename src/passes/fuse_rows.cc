// SPDX-License-Identifier: Apache-2.0
#include "passes/fuse_rows.h"

#include <algorithm>

#include "codegen/emit_cpp.h"
#include "codegen/loop_program.h"

namespace spore::passes::fuse_rows {

std::vector<ir::Dim> row_shape(std::vector<ir::Dim> s, int r) {
  for (size_t d = s.size() - std::min(s.size(), static_cast<size_t>(r)); d < s.size(); ++d) s[d] = 1;
  return s;
}

std::optional<Desc> merge(const Desc& a, const Desc& b) {
  if (a.rdims > 0 && b.rdims > 0 && a.rdims != b.rdims) return std::nullopt;
  const int r = std::max(a.rdims, b.rdims);
  if (a.shape == b.shape) return Desc{a.shape, r};
  if (r == 0) return std::nullopt;
  if (b.rdims == 0 && b.shape == row_shape(a.shape, r)) return Desc{a.shape, r};
  if (a.rdims == 0 && a.shape == row_shape(b.shape, r)) return Desc{b.shape, r};
  return std::nullopt;
}

bool worth_a_row_group(const std::vector<ir::Dim>& shape, int r) {
  constexpr int64_t kMinRowLength = 32, kMinRows = 16;
  const size_t lead = shape.size() - static_cast<size_t>(r);
  int64_t rows = 1, len = 1;
  bool rows_known = true, len_known = true;
  for (size_t d = 0; d < shape.size(); ++d) {
    const ir::Dim& x = shape[d];
    if (d < lead) {
      rows_known = rows_known && x.is_const();
      if (x.is_const()) rows *= x.value();
    } else {
      len_known = len_known && x.is_const();
      if (x.is_const()) len *= x.value();
    }
  }
  return !(len_known && len < kMinRowLength) && !(rows_known && rows < kMinRows);
}

bool emitted(const ir::Graph& g, size_t k) {
  int32_t cost = 0;
  const std::optional<codegen::Instr> i = codegen::detail::op_instr(g, k, &cost);
  return !i || codegen::emits(*i);
}

}  // namespace spore::passes::fuse_rows
