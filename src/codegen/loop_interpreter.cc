// SPDX-License-Identifier: Apache-2.0
#include "codegen/loop_interpreter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "codegen/geometry.h"
#include "runtime/parallel.h"
#include "spore/error.h"

namespace spore::codegen {
namespace {

template <class T>
T element(const char* p, DType dt) {
  if (dt == DType::Bool) return *reinterpret_cast<const uint8_t*>(p) != 0 ? T(1) : T(0);
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

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
  static const TileOps<T>& ops() {
    if constexpr (std::is_same_v<T, float>) return tile_kernels().f32;
    else return tile_kernels().f64;
  }

  // Element offset of flat output index `i` in input k, and the multi-index (for gathers).
  int64_t offset(size_t k, std::array<int64_t, kMaxRank>& idx, int64_t i) const {
    int64_t off = 0;
    for (int d = g_.ndim - 1; d >= 0; --d) {
      idx[d] = i % g_.shape[d];
      i /= g_.shape[d];
      off += idx[d] * g_.strides[k][d];
    }
    return off;
  }

  // Copies `len` elements of input k from flat index `start` into dst, converting bools to 0/1.
  void gather(size_t k, int64_t start, int64_t len, T* dst) const {
    const Buffer& b = in_[k];
    const char* base = static_cast<const char*>(b.data);
    const int64_t isz = static_cast<int64_t>(dtype_size(b.dtype));
    if (g_.ndim == 0) {
      const T v = element<T>(base, b.dtype);
      std::fill(dst, dst + len, v);
      return;
    }
    std::array<int64_t, kMaxRank> idx{};
    const int nd = g_.ndim;
    const int64_t inner = g_.shape[nd - 1], s = g_.strides[k][nd - 1];
    int64_t off = offset(k, idx, start);
    for (int64_t pos = 0; pos < len;) {
      const int64_t seg = std::min(inner - idx[nd - 1], len - pos);
      const char* src = base + off * isz;
      if (s == 0) {
        std::fill(dst + pos, dst + pos + seg, element<T>(src, b.dtype));
      } else if (s == 1 && b.dtype != DType::Bool) {
        std::memcpy(dst + pos, src, static_cast<size_t>(seg) * sizeof(T));
      } else {
        for (int64_t j = 0; j < seg; ++j) dst[pos + j] = element<T>(src + j * s * isz, b.dtype);
      }
      pos += seg;
      // Next row: carry the multi-index and recompute the offset.
      off += seg * s;
      idx[nd - 1] += seg;
      for (int d = nd - 1; d > 0 && idx[d] == g_.shape[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
      if (idx[nd - 1] == 0) {
        off = 0;
        for (int d = 0; d < nd; ++d) off += idx[d] * g_.strides[k][d];
      }
    }
  }

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
          case InstrKind::Unary: ops_.unary[i.code](rp[i.a], buf(i.dst), npad, cpu::UnaryParams{i.pa, i.pb}); break;
          case InstrKind::Binary: ops_.binary[i.code](rp[i.a], rp[i.b], buf(i.dst), npad); break;
          case InstrKind::Compare: ops_.compare[i.code](rp[i.a], rp[i.b], buf(i.dst), npad); break;
          case InstrKind::Logical: ops_.logical[i.code](rp[i.a], rp[i.b], buf(i.dst), npad); break;
          case InstrKind::Predicate: ops_.predicate[i.code](rp[i.a], buf(i.dst), npad); break;
          case InstrKind::Where: ops_.where(rp[i.a], rp[i.b], rp[i.c], buf(i.dst), npad); break;
          case InstrKind::Clamp: ops_.clamp(rp[i.a], rp[i.b], rp[i.c], buf(i.dst), npad); break;
          case InstrKind::Lerp: ops_.lerp(rp[i.a], rp[i.b], rp[i.c], buf(i.dst), npad); break;
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
