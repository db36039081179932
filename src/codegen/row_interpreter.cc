// SPDX-License-Identifier: Apache-2.0
// The loop interpreter for row programs (loop_program.h): rows are spread over threads; for each
// row the segments run in order, an element segment in tiles along the row, a per-row segment
// once on one vector of lanes (all lanes holding the row's value).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "codegen/loop_interpreter.h"
#include "codegen/tile_io.h"
#include "runtime/parallel.h"
#include "spore/error.h"

namespace spore::codegen::detail {
namespace {

template <class T>
T fold(ReduceCode c, T acc, const T* x, int64_t n) {
  if (c == ReduceCode::sum || c == ReduceCode::mean) {
    // Sixteen partial sums: vectorizable, and a shorter dependency chain than one running sum.
    T part[16] = {};
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
      for (int q = 0; q < 16; ++q) part[q] += x[j + q];
    for (int q = 0; j < n; ++j, ++q) part[q] += x[j];
    for (int w = 8; w > 0; w /= 2)
      for (int q = 0; q < w; ++q) part[q] += part[q + w];
    return acc + part[0];
  }
  // max / min propagate NaN, as the unfused reductions do.
  for (int64_t j = 0; j < n; ++j) {
    const T v = x[j];
    if (c == ReduceCode::max ? (v > acc || v != v) : (v < acc || v != v)) acc = v;
    if (acc != acc) break;
  }
  return acc;
}

template <class T>
T initial(ReduceCode c) {
  switch (c) {
    case ReduceCode::max: return -std::numeric_limits<T>::infinity();
    case ReduceCode::min: return std::numeric_limits<T>::infinity();
    default: return T(0);
  }
}

template <class T>
class RowRunner {
 public:
  RowRunner(const LoopProgram& p, const Schedule& s, std::span<const Buffer> in, std::span<const Buffer> out)
      : p_(p), s_(s), in_(in), out_(out), ops_(tile_ops_for<T>()) {
    // The iteration shape: the inputs' broadcast shape (the reductions' operand shape).
    int nd = 0;
    for (const Buffer& b : in) nd = std::max(nd, b.ndim);
    shape_.assign(static_cast<size_t>(nd), 1);
    for (const Buffer& b : in)
      for (int d = 0; d < b.ndim; ++d) {
        Dim& x = shape_[static_cast<size_t>(nd - b.ndim + d)];
        if (b.shape[d] != 1) x = b.shape[d];
      }
    SPORE_ASSERT(nd >= p.row_dims, "row program over rank ", nd, " with ", p.row_dims, " row dims");
    strides_.assign(static_cast<size_t>(nd), 1);
    for (int d = nd - 2; d >= 0; --d) strides_[static_cast<size_t>(d)] = strides_[static_cast<size_t>(d) + 1] * shape_[static_cast<size_t>(d) + 1];
    row_len_ = 1;
    for (int d = nd - p.row_dims; d < nd; ++d) row_len_ *= shape_[static_cast<size_t>(d)];
    int64_t n = 1;
    for (Dim x : shape_) n *= x;
    rows_ = row_len_ > 0 ? n / row_len_ : 0;
    if (row_len_ == 0) {
      rows_ = 1;
      for (int d = 0; d < nd - p.row_dims; ++d) rows_ *= shape_[static_cast<size_t>(d)];
    }
    const Buffer ref{.data = nullptr, .dtype = p.dtype, .ndim = nd, .shape = shape_.data(), .strides = strides_.data()};
    g_ = geometry(in, ref);
    for (size_t j = 0; j < out.size(); ++j) {
      const int64_t want = p.row_output[j] ? rows_ : rows_ * row_len_;
      SPORE_ASSERT(out[j].dtype == p.outputs[j] && out[j].contiguous() && out[j].numel() == want, "row program output ", j,
                   " must be a contiguous ", dtype_name(p.outputs[j]), " buffer of ", want, " elements");
    }
    lanes_ = s.lanes;
    tile_ = std::min<int64_t>(s.tile, std::max<int64_t>(lanes_, (row_len_ + lanes_ - 1) / lanes_ * lanes_));
  }

  void run() {
    if (rows_ == 0) return;
    const int64_t per_element = std::max<int64_t>(1, p_.cost + static_cast<int64_t>(p_.inputs.size() + p_.outputs.size()));
    const int64_t grain = std::max<int64_t>(1, runtime::kParallelGrain / (per_element * std::max<int64_t>(1, row_len_)));
    if (s_.threads > 1 && rows_ > grain) runtime::parallel_for(rows_, grain, [&](int64_t b, int64_t e) { work(b, e); });
    else work(0, rows_);
  }

 private:
  void work(int64_t rb, int64_t re) const {
    thread_local std::vector<T> storage;
    const size_t need = static_cast<size_t>(p_.num_registers) * static_cast<size_t>(tile_);
    if (storage.size() < need) storage.assign(need, T(0));
    auto buf = [&](int32_t r) { return storage.data() + static_cast<int64_t>(r) * tile_; };
    std::vector<const T*> rp(static_cast<size_t>(p_.num_registers), nullptr);
    std::vector<T> acc(static_cast<size_t>(p_.num_accumulators));
    std::array<int64_t, kMaxRank> idx{};
    const int nd = g_.ndim;
    for (int64_t r = rb; r < re; ++r) {
      for (size_t a = 0; a < acc.size(); ++a) acc[a] = initial<T>(p_.accumulators[a]);
      for (const Segment& sg : p_.segments) {
        if (sg.per_row) {
          for (int32_t at = sg.begin; at < sg.end; ++at) {
            const Instr& i = p_.code[static_cast<size_t>(at)];
            T* d = i.dst >= 0 ? buf(i.dst) : nullptr;
            switch (i.kind) {
              case InstrKind::Load:
                gather(g_, static_cast<size_t>(i.slot), in_[static_cast<size_t>(i.slot)], r * row_len_, 1, d);
                std::fill(d + 1, d + lanes_, d[0]);
                break;
              case InstrKind::Const: std::fill(d, d + lanes_, static_cast<T>(i.imm)); break;
              case InstrKind::Result: std::fill(d, d + lanes_, acc[static_cast<size_t>(i.slot)]); break;
              case InstrKind::Store: store(i, rp, r, 1); break;
              default: run_op(ops_, i, rp, d, lanes_); break;
            }
            if (d) rp[static_cast<size_t>(i.dst)] = d;
          }
          continue;
        }
        for (int64_t c0 = 0; c0 < row_len_; c0 += tile_) {
          const int64_t start = r * row_len_ + c0, len = std::min(tile_, row_len_ - c0);
          const int64_t npad = (len + lanes_ - 1) / lanes_ * lanes_;
          for (int32_t at = sg.begin; at < sg.end; ++at) {
            const Instr& i = p_.code[static_cast<size_t>(at)];
            switch (i.kind) {
              case InstrKind::Load: {
                const auto k = static_cast<size_t>(i.slot);
                const bool direct = nd > 0 && npad == len && in_[k].dtype == p_.dtype && g_.strides[k][nd - 1] == 1 &&
                                    start % g_.shape[nd - 1] + len <= g_.shape[nd - 1];
                if (direct) {
                  rp[static_cast<size_t>(i.dst)] = static_cast<const T*>(in_[k].data) + offset(g_, k, idx, start);
                } else {
                  gather(g_, k, in_[k], start, len, buf(i.dst));
                  rp[static_cast<size_t>(i.dst)] = buf(i.dst);
                }
                break;
              }
              case InstrKind::Splat:
                std::fill(buf(i.dst), buf(i.dst) + npad, rp[static_cast<size_t>(i.a)][0]);
                rp[static_cast<size_t>(i.dst)] = buf(i.dst);
                break;
              case InstrKind::Reduce: {
                T& x = acc[static_cast<size_t>(i.slot)];
                x = fold(static_cast<ReduceCode>(i.code), x, rp[static_cast<size_t>(i.a)], len);
                break;
              }
              case InstrKind::Store: store(i, rp, start, len); break;
              default:
                run_op(ops_, i, rp, buf(i.dst), npad);
                rp[static_cast<size_t>(i.dst)] = buf(i.dst);
                break;
            }
          }
        }
        // Means divide once their row is summed (as the unfused reduce_mean: sum / n).
        for (int32_t at = sg.begin; at < sg.end; ++at) {
          const Instr& i = p_.code[static_cast<size_t>(at)];
          if (i.kind == InstrKind::Reduce && static_cast<ReduceCode>(i.code) == ReduceCode::mean)
            acc[static_cast<size_t>(i.slot)] /= static_cast<T>(row_len_);
        }
      }
    }
  }

  // Stores len elements of register i.a at element `start` of output i.slot.
  void store(const Instr& i, const std::vector<const T*>& rp, int64_t start, int64_t len) const {
    const Buffer& o = out_[static_cast<size_t>(i.slot)];
    const T* src = rp[static_cast<size_t>(i.a)];
    if (o.dtype == DType::Bool) {
      uint8_t* d = static_cast<uint8_t*>(o.data) + start;
      for (int64_t j = 0; j < len; ++j) d[j] = src[j] != T(0) ? 1 : 0;
    } else {
      std::memcpy(static_cast<T*>(o.data) + start, src, static_cast<size_t>(len) * sizeof(T));
    }
  }

  const LoopProgram& p_;
  const Schedule& s_;
  std::span<const Buffer> in_, out_;
  const TileOps<T>& ops_;
  std::vector<Dim> shape_;
  std::vector<int64_t> strides_;
  Geometry g_;
  int64_t row_len_ = 1, rows_ = 0, lanes_ = 1, tile_ = 1;
};

}  // namespace

void run_row_program(const LoopProgram& p, const Schedule& s, std::span<const Buffer> in, std::span<const Buffer> out) {
  if (p.dtype == DType::Float64) RowRunner<double>(p, s, in, out).run();
  else RowRunner<float>(p, s, in, out).run();
}

}  // namespace spore::codegen::detail
