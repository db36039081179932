// SPDX-License-Identifier: Apache-2.0
#include "codegen/loop_interpreter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "codegen/geometry.h"
#include "codegen/tile_io.h"
#include "runtime/parallel.h"
#include "spore/error.h"

namespace spore::codegen {
namespace {

using detail::element;

template <class T>
class Runner {
 public:
  Runner(const LoopProgram& p, const Schedule& s, std::span<const Buffer> in, std::span<const Buffer> out)
      : p_(p), s_(s), in_(in), out_(out), g_(geometry(in, out[0])), ops_(ops()) {
    n_ = out[0].numel();
    uniform_.resize(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      bool u = true;
      for (int d = 0; d < g_.ndim; ++d) u = u && g_.strides[k][d] == 0;
      uniform_[k] = u;
    }
  }

  void run() {
    const int64_t tiles = (n_ + s_.tile - 1) / s_.tile;
    if (tiles == 0) return;
    if (s_.threads > 1) runtime::parallel_for(tiles, s_.grain_tiles, [&](int64_t b, int64_t e) { work(b, e); });
    else work(0, tiles);
  }

 private:
  static const TileOps<T>& ops() { return detail::tile_ops_for<T>(); }

  int64_t offset(size_t k, std::array<int64_t, kMaxRank>& idx, int64_t i) const { return detail::offset(g_, k, idx, i); }
  void gather(size_t k, int64_t start, int64_t len, T* dst) const { detail::gather(g_, k, in_[k], start, len, dst); }

  void work(int64_t tb, int64_t te) const {
    const int64_t tile = s_.tile, lanes = s_.lanes;
    // The register file: one tile per register, per thread, kept between calls.
    thread_local std::vector<T> storage;
    const size_t need = static_cast<size_t>(p_.num_registers) * static_cast<size_t>(tile);
    if (storage.size() < need) storage.assign(need, T(0));
    auto buf = [&](int32_t r) { return storage.data() + static_cast<int64_t>(r) * tile; };
    std::vector<const T*> rp(static_cast<size_t>(p_.num_registers), nullptr);
    // Hoisted: literals and broadcast-scalar inputs are the same in every tile.
    for (const Instr& i : p_.code) {
      if (i.kind == InstrKind::Const) {
        std::fill(buf(i.dst), buf(i.dst) + tile, static_cast<T>(i.imm));
        rp[i.dst] = buf(i.dst);
      } else if (i.kind == InstrKind::Load && uniform_[i.slot]) {
        const Buffer& b = in_[static_cast<size_t>(i.slot)];
        std::fill(buf(i.dst), buf(i.dst) + tile, element<T>(static_cast<const char*>(b.data), b.dtype));
        rp[i.dst] = buf(i.dst);
      }
    }
    std::array<int64_t, kMaxRank> idx{};
    for (int64_t t = tb; t < te; ++t) {
      const int64_t start = t * tile, len = std::min(tile, n_ - start);
      const int64_t npad = (len + lanes - 1) / lanes * lanes;
      for (const Instr& i : p_.code) {
        switch (i.kind) {
          case InstrKind::Load: {
            const size_t k = static_cast<size_t>(i.slot);
            if (uniform_[k]) break;
            const int nd = g_.ndim;
            // Read in place when the tile is one contiguous run of the input (no padding lanes
            // to read past its end); else gather.
            const bool direct = nd > 0 && npad == len && in_[k].dtype == p_.dtype && g_.strides[k][nd - 1] == 1 &&
                                start % g_.shape[nd - 1] + len <= g_.shape[nd - 1];
            if (direct) {
              rp[i.dst] = static_cast<const T*>(in_[k].data) + offset(k, idx, start);
            } else {
              gather(k, start, len, buf(i.dst));
              rp[i.dst] = buf(i.dst);
            }
            break;
          }
          case InstrKind::Const: break;
          case InstrKind::Store: {
            const Buffer& o = out_[static_cast<size_t>(i.slot)];
            const T* src = rp[i.a];
            if (o.dtype == DType::Bool) {
              uint8_t* d = static_cast<uint8_t*>(o.data) + start;
              for (int64_t j = 0; j < len; ++j) d[j] = src[j] != T(0) ? 1 : 0;
            } else {
              std::memcpy(static_cast<T*>(o.data) + start, src, static_cast<size_t>(len) * sizeof(T));
            }
            break;
          }
          default:
            detail::run_op(ops_, i, rp, buf(i.dst), npad);
            break;
        }
        if (i.kind != InstrKind::Load && i.kind != InstrKind::Const && i.kind != InstrKind::Store) rp[i.dst] = buf(i.dst);
      }
    }
  }

  const LoopProgram& p_;
  const Schedule& s_;
  std::span<const Buffer> in_, out_;
  Geometry g_;
  const TileOps<T>& ops_;
  int64_t n_ = 0;
  std::vector<bool> uniform_;
};

}  // namespace

void run_loop_program(const LoopProgram& p, const Schedule& s, std::span<const Buffer> in, std::span<const Buffer> out) {
  SPORE_ASSERT(in.size() == p.inputs.size() && out.size() == p.outputs.size(), "fused kernel called with ", in.size(),
               " inputs and ", out.size(), " outputs for a program of ", p.inputs.size(), " and ", p.outputs.size());
  SPORE_ASSERT(s.tile % s.lanes == 0, "fused schedule's tile ", s.tile, " is not whole vectors of ", s.lanes);
  for (size_t k = 0; k < in.size(); ++k)
    SPORE_ASSERT(in[k].dtype == p.inputs[k], "fused input ", k, " is ", dtype_name(in[k].dtype), ", the program loads ",
                 dtype_name(p.inputs[k]));
  if (p.row_dims > 0) return detail::run_row_program(p, s, in, out);
  if (out.empty() || out[0].numel() == 0) return;  // (an empty tensor's strides need not be contiguous ones)
  for (size_t j = 0; j < out.size(); ++j) {
    SPORE_ASSERT(out[j].dtype == p.outputs[j] && dense(out[j]), "fused output ", j, " must be a dense ",
                 dtype_name(p.outputs[j]), " buffer");
    SPORE_ASSERT(same_layout(out[j], out[0]), "fused outputs must share the iteration shape and layout");
  }
  if (p.dtype == DType::Float64) Runner<double>(p, s, in, out).run();
  else Runner<float>(p, s, in, out).run();
}

}  // namespace spore::codegen
