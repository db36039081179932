// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the fusion pass (fuse.h) groups row reductions (codegen/loop_program.h, row programs): a
// group's iteration shape and row dims, when two groups can merge, and which reductions and ops
// a row group takes.
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace spore::passes::fuse_rows {

/// A group's iteration shape, and the trailing dims its row reductions reduce (0: none yet).
struct Desc {
  std::vector<ir::Dim> shape;
  int rdims = 0;
};

/// `s` with its last r dims 1: the shape of a per-row value.
std::vector<ir::Dim> row_shape(std::vector<ir::Dim> s, int r);

/// The group that holds both: the same iteration shape, or one side holding only per-row values
/// (the other's shape with its row dims 1) of a side with row reductions.
std::optional<Desc> merge(const Desc& a, const Desc& b);

/// Whether a reduction over the last r dims of `shape` should start or join a row group. Not
/// when the shape says the rows are short (under 32 elements: a row program's per-row work then
/// costs more than the traffic it saves) or few (under 16: rows are its unit of parallelism, and
/// the unfused reduction splits a long row over threads); symbolic dims count as large.
bool worth_a_row_group(const std::vector<ir::Dim>& shape, int r);

/// Whether node k of `g` has a port in the C++ emitter: a row group holding one that has not
/// would run on the loop interpreter for good, slower than the ops unfused.
bool emitted(const ir::Graph& g, size_t k);

}  // namespace spore::passes::fuse_rows
