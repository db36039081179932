// SPDX-License-Identifier: Apache-2.0
#include "data/block.h"

#include <algorithm>
#include <cstring>

#include "spore/ops/shape.h"

namespace spore::data {
namespace {

Shape row_shape(const Tensor& t) { return Shape(t.shape().begin() + 1, t.shape().end()); }

Shape with_rows(int64_t rows, const Shape& row) {
  Shape s{rows};
  for (Dim d : row) s.push_back(d);
  return s;
}

bool same_shape(const Shape& a, const Shape& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

size_t row_bytes(const Tensor& t) {
  return t.size(0) == 0 ? 0 : static_cast<size_t>(t.numel() / t.size(0)) * t.itemsize();
}

}  // namespace

Tensor gather_rows(const Tensor& t, std::span<const int64_t> idx) {
  const Tensor src = t.contiguous();
  Tensor out = Tensor::empty(with_rows(static_cast<int64_t>(idx.size()), row_shape(src)), src.dtype());
  const size_t rb = row_bytes(src);
  const auto* s = static_cast<const char*>(src.data_ptr());
  auto* d = static_cast<char*>(out.data_ptr());
  const int64_t n = src.size(0);
  for (size_t i = 0; i < idx.size(); ++i) {
    SPORE_ASSERT(idx[i] >= 0 && idx[i] < n, "row ", idx[i], " of ", n);
    std::memcpy(d + i * rb, s + static_cast<size_t>(idx[i]) * rb, rb);
  }
  return out;
}

Block take_rows(const Block& b, std::span<const int64_t> idx) {
  Block out;
  out.rows = static_cast<int64_t>(idx.size());
  for (const Tensor& c : b.columns) out.columns.push_back(gather_rows(c, idx));
  return out;
}

Block slice_rows(const Block& b, int64_t start, int64_t stop) {
  if (start == 0 && stop == b.rows) return b;
  Block out;
  out.rows = stop - start;
  for (const Tensor& c : b.columns) out.columns.push_back(c.slice(0, start, stop));
  return out;
}

Block block_of_row(const Row& row) {
  Block out;
  out.rows = 1;
  for (const Tensor& c : row) out.columns.push_back(c.unsqueeze(0));
  return out;
}

Row row_of_block(const Block& b, int64_t i) {
  Row row;
  row.reserve(b.columns.size());
  for (const Tensor& c : b.columns) row.push_back(c[i]);
  return row;
}

void check_same_rows(const Block& a, const Block& b, const char* op) {
  SPORE_CHECK(a.columns.size() == b.columns.size(), "[", op, "] rows have ", a.columns.size(), " columns and ",
              b.columns.size(), " columns; every row must have the same columns");
  for (size_t c = 0; c < a.columns.size(); ++c) {
    const Tensor& x = a.columns[c];
    const Tensor& y = b.columns[c];
    SPORE_CHECK(x.dtype() == y.dtype(), "[", op, "] column ", c, " is ", dtype_name(x.dtype()), " in some rows and ",
                dtype_name(y.dtype()), " in others; cast them to one dtype (map with type_cast)");
    SPORE_CHECK(same_shape(row_shape(x), row_shape(y)), "[", op, "] column ", c, " has shape ",
                shape_str(row_shape(x)), " in some rows and ", shape_str(row_shape(y)),
                " in others; resize them to one shape (map) or pad them (batch with a BatchPad)");
  }
}

Block empty_like_rows(const Block& like, int64_t rows) {
  Block out;
  out.rows = rows;
  for (const Tensor& c : like.columns) out.columns.push_back(Tensor::empty(with_rows(rows, row_shape(c)), c.dtype()));
  return out;
}

void copy_row(const Block& src, int64_t src_row, Block& dst, int64_t dst_row) {
  for (size_t c = 0; c < src.columns.size(); ++c) {
    const Tensor s = src.columns[c].contiguous();
    const size_t rb = row_bytes(s);
    std::memcpy(static_cast<char*>(dst.columns[c].data_ptr()) + dst_row * rb,
                static_cast<const char*>(s.data_ptr()) + src_row * rb, rb);
  }
}

Block concat_blocks(const std::vector<Block>& parts, const std::optional<BatchPad>& pad, const char* op) {
  SPORE_ASSERT(!parts.empty());
  if (parts.size() == 1 && !pad) return parts[0];
  const size_t ncols = parts[0].columns.size();
  int64_t total = 0;
  for (const Block& p : parts) {
    SPORE_CHECK(p.columns.size() == ncols, "[", op, "] rows have ", ncols, " and ", p.columns.size(),
                " columns; every row must have the same columns");
    total += p.rows;
  }
  Block out;
  out.rows = total;
  for (size_t c = 0; c < ncols; ++c) {
    const Tensor& first = parts[0].columns[c];
    Shape target = row_shape(first);
    for (const Block& p : parts) {
      const Tensor& x = p.columns[c];
      SPORE_CHECK(x.dtype() == first.dtype(), "[", op, "] column ", c, " is ", dtype_name(first.dtype()),
                  " in some rows and ", dtype_name(x.dtype()), " in others; cast them to one dtype (map with type_cast)");
      const Shape rs = row_shape(x);
      if (same_shape(rs, target)) continue;
      SPORE_CHECK(pad.has_value(), "[", op, "] column ", c, " has shape ", shape_str(target), " in some rows and ",
                  shape_str(rs), " in others; resize them to one shape (map) or pad them (batch with a BatchPad)");
      SPORE_CHECK(rs.size() == target.size(), "[", op, "] cannot pad column ", c, ": rows of rank ", target.size(),
                  " and ", rs.size());
      for (size_t a = 0; a < rs.size(); ++a) target[a] = std::max(target[a], rs[a]);
    }
    if (pad && !pad->shape.empty()) {
      SPORE_CHECK(pad->shape.size() == target.size(), "[", op, "] pad shape ", shape_str(pad->shape),
                  " has rank ", pad->shape.size(), " but column ", c, " rows have shape ", shape_str(target));
      for (size_t a = 0; a < target.size(); ++a)
        SPORE_CHECK(pad->shape[a] >= target[a], "[", op, "] column ", c, " has rows of shape ", shape_str(target),
                    ", larger than the pad shape ", shape_str(pad->shape));
      target = pad->shape;
    }
    Tensor joined = Tensor::empty(with_rows(total, target), first.dtype());
    auto* d = static_cast<char*>(joined.data_ptr());
    for (const Block& p : parts) {
      Tensor x = p.columns[c];
      const Shape rs = row_shape(x);
      if (!same_shape(rs, target)) {
        std::vector<int64_t> pads;
        for (size_t a = rs.size(); a-- > 0;) {
          pads.push_back(0);
          pads.push_back(target[a] - rs[a]);
        }
        x = ops::pad(x, pads, ops::PadMode::Constant, pad->value);
      }
      x = x.contiguous();
      const size_t bytes = static_cast<size_t>(x.numel()) * x.itemsize();
      if (bytes) std::memcpy(d, x.data_ptr(), bytes);
      d += bytes;
    }
    out.columns.push_back(std::move(joined));
  }
  return out;
}

void BlockQueue::push(Block b) {
  if (b.rows <= 0) return;
  total_ += b.rows;
  q_.push_back(std::move(b));
}

Block BlockQueue::pop(int64_t n, const std::optional<BatchPad>& pad, const char* op) {
  SPORE_ASSERT(n > 0 && n <= total_);
  std::vector<Block> parts;
  int64_t need = n;
  while (need > 0) {
    Block& front = q_.front();
    const int64_t take = std::min(need, front.rows - head_);
    parts.push_back(slice_rows(front, head_, head_ + take));
    head_ += take;
    need -= take;
    if (head_ == front.rows) {
      q_.pop_front();
      head_ = 0;
    }
  }
  total_ -= n;
  return concat_blocks(parts, pad, op);
}

}  // namespace spore::data
