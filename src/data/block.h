// SPDX-License-Identifier: Apache-2.0
#pragma once
// Moving rows between blocks: gathers, slices, joins. Row data is copied with memcpy of whole
// rows; only batch padding goes through a tensor op.
#include <deque>
#include <optional>
#include <span>

#include "spore/data/dataset.h"

namespace spore::data {

/// Rows `idx` of a contiguous tensor (axis 0), copied into a new tensor.
Tensor gather_rows(const Tensor& t, std::span<const int64_t> idx);
/// Rows `idx` of every column.
Block take_rows(const Block& b, std::span<const int64_t> idx);
/// Rows [start, stop) as views.
Block slice_rows(const Block& b, int64_t start, int64_t stop);
/// One row as a block of one (views).
Block block_of_row(const Row& row);
/// Row i of a block (views).
Row row_of_block(const Block& b, int64_t i);
/// The blocks one after the other. Columns whose rows differ in shape are padded with `pad`,
/// or are an error naming `op`.
Block concat_blocks(const std::vector<Block>& parts, const std::optional<BatchPad>& pad, const char* op);
/// Row r of `dst` = row `src_row` of `src`, every column (same dtypes and row shapes; checked by the caller).
void copy_row(const Block& src, int64_t src_row, Block& dst, int64_t dst_row);
/// An uninitialized block of `rows` rows shaped like `like`'s.
Block empty_like_rows(const Block& like, int64_t rows);
/// Clear error when two blocks do not hold the same kind of rows (column count, dtype, row shape).
void check_same_rows(const Block& a, const Block& b, const char* op);

/// A FIFO of rows arriving in blocks of any size, popped in runs of any size.
class BlockQueue {
 public:
  void push(Block b);
  int64_t rows() const { return total_; }
  /// The next `n` (<= rows()) rows; views when they lie in one block and no padding is asked.
  Block pop(int64_t n, const std::optional<BatchPad>& pad, const char* op);

 private:
  std::deque<Block> q_;
  int64_t head_ = 0;  // rows of q_.front() already popped
  int64_t total_ = 0;
};

}  // namespace spore::data
