// SPDX-License-Identifier: Apache-2.0
// The loop interpreter for row programs (loop_program.h): rows are spread over threads; for each
// row the segments run in order, an element segment in tiles along the row, a per-row segment
// once on one vector of lanes (all lanes holding the row's value).
//
// A reduction folds its row as the unfused reduce_sum / reduce_max / reduce_min do on a
// contiguous row (prims/reduce_engine.h): the row's values are gathered into chunks of
// kRowFoldChunk, each chunk reduced by the same vector loop (cpu::reduce_kernels()), the chunks
// combined in order. So a row program's sums equal the unfused graph's bit for bit, whatever the
// tile, the thread count, or whether the emitted kernel (which calls the same loops) runs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/reduce_kernels.h"
#include "prims/reduce_engine.h"
#include "codegen/loop_interpreter.h"
#include "codegen/schedule.h"
#include "codegen/tile_io.h"
#include "runtime/parallel.h"
#include "spore/error.h"
#include "spore/threading.h"

namespace spore::codegen::detail {
namespace {

static_assert(kRowFoldChunk == prims::reduce_detail::kChunk, "row folds must chunk as the unfused reductions do");

template <class T>
T initial(ReduceCode c) {
  switch (c) {
    case ReduceCode::max: return -std::numeric_limits<T>::infinity();
    case ReduceCode::min: return std::numeric_limits<T>::infinity();
    default: return T(0);
  }
}

// One chunk's reduction by the unfused kernels' loop (n >= 1).
template <class T>
T block(ReduceCode c, const T* x, int64_t n) {
  const auto& k = cpu::reduce_kernels();
  if constexpr (std::is_same_v<T, float>) {
    return c == ReduceCode::max ? k.max_f32(x, n) : c == ReduceCode::min ? k.min_f32(x, n) : k.sum_f32(x, n);
  } else {
    return c == ReduceCode::max ? k.max_f64(x, n) : c == ReduceCode::min ? k.min_f64(x, n) : k.sum_f64(x, n);
  }
}

// The engine's combine: a sum, or a max / min where the first NaN wins (prims/reduce_ops.h).
template <class T>
T combine(ReduceCode c, T a, T b) {
  if (c == ReduceCode::max) return (b > a || b != b) && a == a ? b : a;
  if (c == ReduceCode::min) return (b < a || b != b) && a == a ? b : a;
  return a + b;
}

// A reduction's state over one row: the finished chunks' result and the open chunk's values.
template <class T>
struct Fold {
  T acc{};
  bool any = false;
  int64_t fill = 0;
  T* chunk = nullptr;  // kRowFoldChunk values

  void flush(ReduceCode c) {
    if (fill == 0) return;
    const T p = combine(c, initial<T>(c), block(c, chunk, fill));
    acc = any ? combine(c, acc, p) : p;
    any = true;
    fill = 0;
  }
  void push(ReduceCode c, const T* x, int64_t n) {
    while (n > 0) {
      const int64_t m = std::min(n, kRowFoldChunk - fill);
      std::copy(x, x + m, chunk + fill);
      fill += m;
      x += m;
      n -= m;
      if (fill == kRowFoldChunk) flush(c);
    }
  }
  T finish(ReduceCode c) {
    flush(c);
    return any ? acc : initial<T>(c);
  }
};

template <class T>
class RowRunner {
 public:
  RowRunner(const LoopProgram& p, std::span<const Buffer> in, std::span<const Buffer> out, int64_t tile)
      : p_(p), in_(in), out_(out), ops_(tile_ops_for<T>()) {
    // The iteration shape: the inputs' broadcast shape (the reductions' operand shape).
    int nd = 0;
    for (const Buffer& b : in) nd = std::max(nd, b.ndim);
    shape_.assign(static_cast<size_t>(nd), 1);
    for (const Buffer& b : in)
      for (int d = 0; d < b.ndim; ++d)
        if (b.shape[d] != 1) shape_[static_cast<size_t>(nd - b.ndim + d)] = b.shape[d];
    SPORE_ASSERT(nd >= p.row_dims, "row program over rank ", nd, " with ", p.row_dims, " row dims");
    lead_ = nd - p.row_dims;
    for (int d = 0; d < lead_; ++d) rows_ *= shape_[static_cast<size_t>(d)];
    for (int d = lead_; d < nd; ++d) row_len_ *= shape_[static_cast<size_t>(d)];
    for (size_t j = 0; j < out.size(); ++j) {
      const int64_t want = p.row_output[j] ? rows_ : rows_ * row_len_;
      // (An empty buffer's strides need not be contiguous ones.)
      SPORE_ASSERT(out[j].dtype == p.outputs[j] && (want == 0 || out[j].contiguous()) && out[j].numel() == want, "row program output ", j,
                   " must be a contiguous ", dtype_name(p.outputs[j]), " buffer of ", want, " elements");
    }
    // Per-row loads: each input's element strides over the leading dims (0 where it broadcasts).
    lead_strides_.assign(in.size() * static_cast<size_t>(std::max(1, lead_)), 0);
    for (size_t k = 0; k < in.size(); ++k)
      for (int d = 0; d < lead_; ++d) {
        const int id = d - (nd - in[k].ndim);
        lead_strides_[k * static_cast<size_t>(lead_) + static_cast<size_t>(d)] =
            id < 0 || in[k].shape[id] == 1 ? 0 : in[k].strides[id];
      }
    if (rows_ * row_len_ > 0) {
      // Element loads walk the row-major iteration space (its geometry needs a nonempty shape).
      strides_.assign(static_cast<size_t>(nd), 1);
      for (int d = nd - 2; d >= 0; --d)
        strides_[static_cast<size_t>(d)] = strides_[static_cast<size_t>(d) + 1] * shape_[static_cast<size_t>(d) + 1];
      const Buffer ref{.data = nullptr, .dtype = p.dtype, .ndim = nd, .shape = shape_.data(), .strides = strides_.data()};
      g_ = geometry(in, ref);
    }
    // The schedule of the whole iteration space (the outputs may all be per row).
    s_ = make_schedule(p, std::max<int64_t>(1, rows_ * row_len_), tile);
    lanes_ = s_.lanes;
    if (row_len_ > 0 && 2 * row_len_ <= s_.tile) {
      batch_ = s_.tile / row_len_;
      tile_ = (batch_ * row_len_ + lanes_ - 1) / lanes_ * lanes_;
    } else {
      tile_ = std::min<int64_t>(s_.tile, std::max<int64_t>(lanes_, (row_len_ + lanes_ - 1) / lanes_ * lanes_));
    }
  }

  void run() {
    if (rows_ == 0) return;
    const int64_t per_element = std::max<int64_t>(1, p_.cost + static_cast<int64_t>(p_.inputs.size() + p_.outputs.size()));
    const int64_t grain = std::max<int64_t>(1, runtime::kParallelGrain / (per_element * std::max<int64_t>(1, row_len_)));
    if (num_threads() > 1 && rows_ > grain) runtime::parallel_for(rows_, grain, [&](int64_t b, int64_t e) { work(b, e); });
    else work(0, rows_);
  }

 private:
  // Element offset of row r's first element in input k.
  int64_t row_offset(size_t k, int64_t r) const {
    int64_t off = 0;
    for (int d = lead_ - 1; d >= 0; --d) {
      const int64_t e = shape_[static_cast<size_t>(d)];
      off += (r % e) * lead_strides_[k * static_cast<size_t>(lead_) + static_cast<size_t>(d)];
      r /= e;
    }
    return off;
  }

  // Rows of at most half a tile run `batch_` at a time: an element segment is then one tile over
  // all their elements and a per-row segment one vector op over their values, so the per-
  // instruction dispatch is shared by the batch (short rows would otherwise pay it per row).
  void work(int64_t rb, int64_t re) const {
    thread_local std::vector<T> storage, chunks;
    const size_t need = static_cast<size_t>(p_.num_registers) * static_cast<size_t>(tile_);
    if (storage.size() < need) storage.assign(need, T(0));
    const bool batched = batch_ > 1;
    const size_t chunk_need = batched ? 0 : static_cast<size_t>(p_.num_accumulators) * static_cast<size_t>(kRowFoldChunk);
    if (chunks.size() < chunk_need) chunks.assign(chunk_need, T(0));
    auto buf = [&](int32_t r) { return storage.data() + static_cast<int64_t>(r) * tile_; };
    std::vector<const T*> rp(static_cast<size_t>(p_.num_registers), nullptr);
    std::vector<Fold<T>> folds(batched ? 0 : static_cast<size_t>(p_.num_accumulators));
    for (size_t a = 0; a < folds.size(); ++a) folds[a].chunk = chunks.data() + a * static_cast<size_t>(kRowFoldChunk);
    // done[a * batch_ + j]: accumulator a's result for row j of the batch.
    std::vector<T> done(static_cast<size_t>(p_.num_accumulators * batch_));
    std::array<int64_t, kMaxRank> idx{};
    const int nd = g_.ndim;
    for (int64_t r0 = rb; r0 < re; r0 += batch_) {
      const int64_t nb = std::min(batch_, re - r0), nrow_pad = (nb + lanes_ - 1) / lanes_ * lanes_;
      for (auto& f : folds) f = Fold<T>{.chunk = f.chunk};
      for (const Segment& sg : p_.segments) {
        if (sg.per_row) {
          for (int32_t at = sg.begin; at < sg.end; ++at) {
            const Instr& i = p_.code[static_cast<size_t>(at)];
            T* d = i.dst >= 0 ? buf(i.dst) : nullptr;
            switch (i.kind) {
              case InstrKind::Load: {
                const Buffer& b = in_[static_cast<size_t>(i.slot)];
                const auto isz = static_cast<int64_t>(dtype_size(b.dtype));
                for (int64_t j = 0; j < nb; ++j)
                  d[j] = element<T>(static_cast<const char*>(b.data) + row_offset(static_cast<size_t>(i.slot), r0 + j) * isz, b.dtype);
                std::fill(d + nb, d + nrow_pad, d[0]);  // padding lanes: a real value, never garbage
                break;
              }
              case InstrKind::Const: std::fill(d, d + nrow_pad, static_cast<T>(i.imm)); break;
              case InstrKind::Result: {
                const T* v = done.data() + static_cast<int64_t>(i.slot) * batch_;
                std::copy(v, v + nb, d);
                std::fill(d + nb, d + nrow_pad, v[0]);
                break;
              }
              case InstrKind::Store: store(i, rp, r0, nb); break;
              default: run_op(ops_, i, rp, d, nrow_pad); break;
            }
            if (d) rp[static_cast<size_t>(i.dst)] = d;
          }
          continue;
        }
        // A batch is one tile of nb rows; a single long row is walked in tiles.
        const int64_t span = batched ? nb * row_len_ : row_len_, step = batched ? span : tile_;
        for (int64_t c0 = 0; c0 < span; c0 += step) {
          const int64_t start = r0 * row_len_ + c0, len = std::min(step, span - c0);
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
              case InstrKind::Splat: {
                T* d = buf(i.dst);
                const T* v = rp[static_cast<size_t>(i.a)];
                if (batched) {
                  for (int64_t j = 0; j < nb; ++j) std::fill(d + j * row_len_, d + (j + 1) * row_len_, v[j]);
                  std::fill(d + len, d + npad, v[0]);
                } else {
                  std::fill(d, d + npad, v[0]);
                }
                rp[static_cast<size_t>(i.dst)] = d;
                break;
              }
              case InstrKind::Reduce: {
                const auto c = static_cast<ReduceCode>(i.code);
                const T* x = rp[static_cast<size_t>(i.a)];
                if (batched) {
                  // A short row is one chunk: its result is final here (as the unfused fold of
                  // one chunk: the identity combined with the chunk's reduction).
                  T* v = done.data() + static_cast<int64_t>(i.slot) * batch_;
                  for (int64_t j = 0; j < nb; ++j) v[j] = combine(c, initial<T>(c), block(c, x + j * row_len_, row_len_));
                } else {
                  folds[static_cast<size_t>(i.slot)].push(c, x, len);
                }
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
        // The segment's reductions are finished: a mean divides its sum (as reduce_mean: sum / n).
        for (int32_t at = sg.begin; at < sg.end; ++at) {
          const Instr& i = p_.code[static_cast<size_t>(at)];
          if (i.kind != InstrKind::Reduce) continue;
          const auto c = static_cast<ReduceCode>(i.code);
          T* v = done.data() + static_cast<int64_t>(i.slot) * batch_;
          if (!batched) v[0] = folds[static_cast<size_t>(i.slot)].finish(c);
          if (c == ReduceCode::mean)
            for (int64_t j = 0; j < nb; ++j) v[j] /= static_cast<T>(row_len_);
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
  std::span<const Buffer> in_, out_;
  const TileOps<T>& ops_;
  Schedule s_;
  std::vector<Dim> shape_;
  std::vector<int64_t> strides_, lead_strides_;
  Geometry g_;
  int lead_ = 0;
  int64_t row_len_ = 1, rows_ = 1, lanes_ = 1, tile_ = 1, batch_ = 1;
};

}  // namespace

void run_row_program(const LoopProgram& p, const Schedule& s, std::span<const Buffer> in, std::span<const Buffer> out) {
  // The caller's schedule gives the tile length only: threads follow the whole iteration space.
  if (p.dtype == DType::Float64) RowRunner<double>(p, in, out, s.tile).run();
  else RowRunner<float>(p, in, out, s.tile).run();
}

}  // namespace spore::codegen::detail
