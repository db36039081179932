// SPDX-License-Identifier: Apache-2.0
// Oracle cases for shape and indexing ops: views (reshape ... diagonal) and copies (concat ...
// nonzero) x dtypes x shapes (non-contiguous, transposed, zero-size, 0-d, negative axes).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "oracle.h"
#include "prims/shape_of.h"
#include "runtime/dispatch.h"

namespace spore::oracle {
namespace {

using namespace ops;
using V = std::vector<int64_t>;

const std::vector<DType> kDTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                    DType::Int64,   DType::Int32,   DType::UInt8,   DType::Bool};

Fill fill_for(DType dt) { return dt == DType::Bool ? Fill::Bool : is_floating(dt) ? Fill::Normal : Fill::Int; }

/// Distinct values (a shuffled arange) so that sort/topk have no ties in integer dtypes.
Tensor distinct(const Shape& s, DType dt, uint64_t seed) {
  int64_t n = 1;
  for (Dim d : s) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(seed));
  return from_vector(v, s).to(dt);
}

Shape to_shape(const V& v) { return Shape(v.begin(), v.end()); }

void views(Writer& w, uint64_t& seed) {
  for (DType dt : kDTypes) {
    auto R = [&](const Shape& s) { return rand_tensor(s, dt, seed++, fill_for(dt)); };
    Tensor x = R({2, 3, 4}), nc = non_contiguous(R({2, 3, 4})), t = R({4, 3, 2}).transpose(0, 2);
    for (const V& s : {V{4, 6}, V{-1, 2}, V{24}, V{2, 1, 12}})
      for (const Tensor& in : {x, nc, t}) w.add("reshape", {in}, {reshape(in, to_shape(s))}, {{"shape", s}});
    Tensor z = R({0, 3});
    w.add("reshape", {z}, {reshape(z, {3, 0, 1})}, {{"shape", V{3, 0, 1}}});
    for (const Tensor& in : {x, nc}) {
      w.add("flatten", {in}, {flatten(in, 1, 2)}, {{"start", int64_t{1}}, {"end", int64_t{2}}});
      w.add("flatten", {in}, {flatten(in)}, {{"start", int64_t{0}}, {"end", int64_t{-1}}});
      w.add("transpose", {in}, {transpose(in, 0, -1)}, {{"a", int64_t{0}}, {"b", int64_t{-1}}});
      w.add("permute", {in}, {permute(in, {2, 0, 1})}, {{"axes", V{2, 0, 1}}});
      w.add("permute", {in}, {permute(in, {-1, 1, 0})}, {{"axes", V{-1, 1, 0}}});
      for (const V& sl : {V{2, 1, 4, 2}, V{-1, -3, 100, 1}, V{1, 2, 1, 1}, V{0, 0, 2, 3}})
        w.add("slice", {in}, {slice(in, sl[0], sl[1], sl[2], sl[3])},
              {{"axis", sl[0]}, {"start", sl[1]}, {"stop", sl[2]}, {"step", sl[3]}});
      w.add("select", {in}, {select(in, 1, -1)}, {{"axis", int64_t{1}}, {"i", int64_t{-1}}});
      w.add("select", {in}, {select(in, -3, 1)}, {{"axis", int64_t{-3}}, {"i", int64_t{1}}});
      w.add("unsqueeze", {in}, {unsqueeze(in, -1)}, {{"axis", int64_t{-1}}});
      w.add("unsqueeze", {in}, {unsqueeze(in, 1)}, {{"axis", int64_t{1}}});
    }
    w.add("transpose", {z}, {transpose(z, 0, 1)}, {{"a", int64_t{0}}, {"b", int64_t{1}}});
    Tensor f0 = R({});
    w.add("flatten", {f0}, {flatten(f0)}, {{"start", int64_t{0}}, {"end", int64_t{-1}}});
    w.add("unsqueeze", {f0}, {unsqueeze(f0, -1)}, {{"axis", int64_t{-1}}});
    w.add("reshape", {f0}, {reshape(f0, {1, 1})}, {{"shape", V{1, 1}}});
    Tensor q = R({1, 3, 1});
    w.add("squeeze", {q}, {squeeze(q, 0)}, {{"axis", int64_t{0}}});
    w.add("squeeze", {q}, {squeeze(q, -1)}, {{"axis", int64_t{-1}}});
    w.add("squeeze", {q}, {squeeze(q, 1)}, {{"axis", int64_t{1}}});
    w.add("squeeze", {q}, {squeeze(q)});
    Tensor e = R({3, 1});
    w.add("expand", {e}, {expand(e, {2, 3, 4})}, {{"shape", V{2, 3, 4}}});
    w.add("expand", {e}, {expand(e, {-1, 5})}, {{"shape", V{-1, 5}}});
    w.add("broadcast_to", {e}, {broadcast_to(e, {2, 3, 0})}, {{"shape", V{2, 3, 0}}});
    Tensor ent = non_contiguous(R({3, 1}));
    w.add("broadcast_to", {ent}, {broadcast_to(ent, {4, 3, 2})}, {{"shape", V{4, 3, 2}}});
    w.add("stop_gradient", {ent}, {stop_gradient(ent)});
    Tensor m = R({4, 5}), m3 = non_contiguous(R({2, 3, 4}));
    for (int64_t off : {0, 1, -2, 7})
      w.add("diagonal", {m}, {diagonal(m, off)}, {{"offset", off}, {"axis1", int64_t{0}}, {"axis2", int64_t{1}}});
    w.add("diagonal", {m3}, {diagonal(m3, 1, -1, 0)}, {{"offset", int64_t{1}}, {"axis1", int64_t{-1}}, {"axis2", int64_t{0}}});
  }
}

void movement(Writer& w, uint64_t& seed) {
  for (DType dt : kDTypes) {
    auto R = [&](const Shape& s) { return rand_tensor(s, dt, seed++, fill_for(dt)); };
    Tensor a = R({2, 3}), b = R({4, 3}), c = non_contiguous(R({2, 5}));
    w.add("concat", {a, b}, {concat({a, b}, 0)}, {{"axis", int64_t{0}}});
    w.add("concat", {a, R({2, 0}), c}, {concat({a, R({2, 0}), c}, -1)}, {{"axis", int64_t{-1}}});
    Tensor at = R({3, 2}).transpose(0, 1);
    w.add("concat", {at, a, at}, {concat({at, a, at}, 1)}, {{"axis", int64_t{1}}});
    Tensor big = R({64, 300});
    w.add("concat", {big, big.transpose(0, 1).transpose(0, 1)}, {concat({big, big}, 1)}, {{"axis", int64_t{1}}});
    w.add("stack", {a, a, at}, {stack({a, a, at}, 0)}, {{"axis", int64_t{0}}});
    w.add("stack", {a, at}, {stack({a, at}, -1)}, {{"axis", int64_t{-1}}});
    Tensor s0 = R({}), s1 = R({});
    w.add("stack", {s0, s1}, {stack({s0, s1})}, {{"axis", int64_t{0}}});
    Tensor sp = R({5, 4}), spn = non_contiguous(R({3, 4}));
    auto parts = split(sp, {2, 0, 3}, 0);
    w.add("split", {sp}, parts, {{"sizes", V{2, 0, 3}}, {"axis", int64_t{0}}});
    w.add("split", {spn}, split(spn, {1, 3}, -1), {{"sizes", V{1, 3}}, {"axis", int64_t{-1}}});
    Tensor ch = R({7, 3}), ch2 = R({2, 6});
    w.add("chunk", {ch}, chunk(ch, 3, 0), {{"chunks", int64_t{3}}, {"axis", int64_t{0}}});
    w.add("chunk", {ch2}, chunk(ch2, 4, -1), {{"chunks", int64_t{4}}, {"axis", int64_t{-1}}});
    w.add("chunk", {ch2}, chunk(ch2, 1, 0), {{"chunks", int64_t{1}}, {"axis", int64_t{0}}});
    Tensor ez = R({0, 3}), ez2 = R({2, 0});
    w.add("chunk", {ez}, chunk(ez, 3, 0), {{"chunks", int64_t{3}}, {"axis", int64_t{0}}});
    w.add("split", {ez2}, split(ez2, {0, 0}, 1), {{"sizes", V{0, 0}}, {"axis", int64_t{1}}});
    w.add("concat", {ez, ez}, {concat({ez, ez}, 0)}, {{"axis", int64_t{0}}});
    w.add("stack", {ez2, ez2}, {stack({ez2, ez2}, 1)}, {{"axis", int64_t{1}}});
    w.add("tile", {ez2}, {tile(ez2, {2, 3})}, {{"reps", V{2, 3}}});
    w.add("roll", {ez2}, {roll(ez2, {1}, {1})}, {{"shifts", V{1}}, {"axes", V{1}}});
    w.add("pad", {ez2}, {pad(ez2, {1, 2})}, {{"pads", V{1, 2}}, {"mode", std::string("constant")}, {"value", 0.0}});
    Tensor big3 = R({6, 50, 120});
    w.add("flip", {big3}, {flip(big3, {1, 2})}, {{"axes", V{1, 2}}});
    w.add("roll", {big3}, {roll(big3, {5, -9}, {1, 2})}, {{"shifts", V{5, -9}}, {"axes", V{1, 2}}});
    const double pv = is_floating(dt) ? 2.5 : 1;
    auto P = [&](const Tensor& x, const V& pads, PadMode mode, const char* name, double v = 0) {
      w.add("pad", {x}, {pad(x, pads, mode, v)}, {{"pads", pads}, {"mode", std::string(name)}, {"value", v}});
    };
    P(a, {1, 2}, PadMode::Constant, "constant");
    P(c, {1, 0, 2, 1}, PadMode::Constant, "constant", pv);
    P(a, {-1, 2}, PadMode::Constant, "constant", pv);
    P(R({2, 3, 2}), {1, 1, 0, 2, 1, 0}, PadMode::Constant, "constant");
    P(R({0, 3}), {1, 1}, PadMode::Constant, "constant", pv);
    P(R({3, 40, 300}), {3, 5, 1, 0}, PadMode::Constant, "constant", pv);
    if (dt != DType::Bool) {
      for (auto [mode, name] : {std::pair{PadMode::Reflect, "reflect"}, std::pair{PadMode::Replicate, "replicate"}}) {
        P(R({2, 5}), {2, 3}, mode, name);
        P(non_contiguous(R({2, 3, 5})), {4, 1}, mode, name);
        P(R({2, 3, 4}), {1, 2, 2, 1}, mode, name);
        P(R({3, 4, 5}).transpose(1, 2), {0, 3, 1, 0}, mode, name);
        P(R({1, 2, 3, 4, 3}), {1, 1, 1, 1, 2, 0}, mode, name);
      }
    }
    // Stride-0 (broadcast) inputs.
    Tensor ex = broadcast_to(R({3, 1}), {3, 4});
    Tensor a4 = R({4, 2}).transpose(0, 1);
    w.add("concat", {ex, a4}, {concat({ex, a4}, 0)}, {{"axis", int64_t{0}}});
    P(ex, {1, 2, 0, 1}, PadMode::Constant, "constant", pv);
    w.add("flip", {ex}, {flip(ex, {0, 1})}, {{"axes", V{0, 1}}});
    w.add("tril", {ex}, {tril(ex, 1)}, {{"diagonal", int64_t{1}}});
    w.add("sort", {ex}, {sort(ex, 0).first, sort(ex, 0).second}, {{"axis", int64_t{0}}, {"descending", false}});
    Tensor ei = broadcast_to(rand_index({1, 4}, 3, seed++), {2, 4});
    w.add("gather", {ex, ei}, {gather(ex, 0, ei)}, {{"axis", int64_t{0}}});
    w.add("nonzero", {ex}, {nonzero(ex)});
    Tensor fl = R({3, 4, 5}), fln = non_contiguous(R({3, 4, 5}));
    for (const V& ax : {V{0, 2}, V{-1}, V{}, V{1, 0, 2}}) {
      w.add("flip", {fl}, {flip(fl, ax)}, {{"axes", ax}});
      w.add("flip", {fln}, {flip(fln, ax)}, {{"axes", ax}});
    }
    Tensor fz = R({0, 4});
    w.add("flip", {fz}, {flip(fz, {0, 1})}, {{"axes", V{0, 1}}});
    Tensor ro = R({4, 5}), ron = R({5, 4}).transpose(0, 1);
    for (const Tensor& in : {ro, ron}) {
      w.add("roll", {in}, {roll(in, {2}, {1})}, {{"shifts", V{2}}, {"axes", V{1}}});
      w.add("roll", {in}, {roll(in, {-7, 3}, {0, -1})}, {{"shifts", V{-7, 3}}, {"axes", V{0, -1}}});
      w.add("roll", {in}, {roll(in, {3}, {})}, {{"shifts", V{3}}, {"axes", V{}}});
    }
    for (const V& reps : {V{2}, V{2, 1, 3}, V{0, 2}, V{1, 1}}) {
      w.add("tile", {a}, {tile(a, reps)}, {{"reps", reps}});
      w.add("tile", {at}, {tile(at, reps)}, {{"reps", reps}});
    }
    w.add("tile", {s0}, {tile(s0, {3})}, {{"reps", V{3}}});
    for (auto [rep, ax] : {std::pair<int64_t, int64_t>{2, 1}, {3, 0}, {0, -1}, {2, -2}}) {
      w.add("repeat_interleave", {a}, {repeat_interleave(a, rep, ax)}, {{"repeats", rep}, {"axis", ax}});
      w.add("repeat_interleave", {at}, {repeat_interleave(at, rep, ax)}, {{"repeats", rep}, {"axis", ax}});
    }
    Tensor tr = R({4, 5}), trn = non_contiguous(R({2, 3, 3})), trz = R({0, 3}), trb = R({3, 70, 200});
    for (int64_t d : {0, 1, -2, 9}) {
      for (const Tensor& in : {tr, trn, trz}) {
        w.add("tril", {in}, {tril(in, d)}, {{"diagonal", d}});
        w.add("triu", {in}, {triu(in, d)}, {{"diagonal", d}});
      }
    }
    w.add("tril", {trb}, {tril(trb, 3)}, {{"diagonal", int64_t{3}}});
    w.add("triu", {trb.transpose(1, 2)}, {triu(trb.transpose(1, 2), -1)}, {{"diagonal", int64_t{-1}}});
  }
  // Mixed dtypes promote like torch.cat; 1-D empty tensors are skipped (PyTorch's legacy rule).
  Tensor f = rand_tensor({2, 3}, DType::Float16, seed++), i = rand_tensor({1, 3}, DType::Int64, seed++, Fill::Int);
  w.add("concat", {f, i}, {concat({f, i}, 0)}, {{"axis", int64_t{0}}});
  Tensor e1 = zeros({0});
  w.add("concat", {f.to(DType::Float32), e1}, {concat({f.to(DType::Float32), e1}, 0)}, {{"axis", int64_t{0}}});
}

/// An index along `axis` of `shape` with distinct values per line (so scatter has no duplicates).
Tensor unique_index(const Shape& shape, int64_t axis, int64_t bound, uint64_t seed) {
  Shape full = shape;
  full[axis] = bound;
  Tensor perm = argsort(rand_tensor(full, DType::Float64, seed), axis);
  return slice(perm, axis, 0, shape[axis]).contiguous();
}

void indexing(Writer& w, uint64_t& seed) {
  for (DType dt : kDTypes) {
    auto R = [&](const Shape& s) { return rand_tensor(s, dt, seed++, fill_for(dt)); };
    Tensor x = R({4, 5}), xn = non_contiguous(R({4, 5})), xt = R({5, 4}).transpose(0, 1);
    for (const Tensor& in : {x, xn, xt}) {
      Tensor i1 = rand_index({4, 3}, 5, seed++), i0 = rand_index({2, 5}, 4, seed++);
      w.add("gather", {in, i1}, {gather(in, 1, i1)}, {{"axis", int64_t{1}}});
      w.add("gather", {in, i0}, {gather(in, -2, i0)}, {{"axis", int64_t{-2}}});
      Tensor it = rand_index({5, 3}, 4, seed++).transpose(0, 1);
      w.add("gather", {in, it}, {gather(in, 0, it)}, {{"axis", int64_t{0}}});
      Tensor iz = rand_index({0, 5}, 4, seed++);
      w.add("gather", {in, iz}, {gather(in, 0, iz)}, {{"axis", int64_t{0}}});
      Tensor u0 = unique_index({3, 5}, 0, 4, seed++), s0 = R({3, 5});
      w.add("scatter", {in, u0, s0}, {scatter(in, 0, u0, s0)}, {{"axis", int64_t{0}}});
      Tensor u1 = unique_index({4, 2}, 1, 5, seed++), s1 = non_contiguous(R({4, 3}));
      w.add("scatter", {in, u1, s1}, {scatter(in, -1, u1, s1)}, {{"axis", int64_t{-1}}});
      if (dt != DType::Bool) {
        Tensor d0 = rand_index({6, 5}, 4, seed++), sa = R({6, 5});
        w.add("scatter_add", {in, d0, sa}, {scatter_add(in, 0, d0, sa)}, {{"axis", int64_t{0}}});
        Tensor d1 = rand_index({3, 7}, 5, seed++), sb = R({3, 8});
        w.add("scatter_add", {in, d1, sb}, {scatter_add(in, 1, d1, sb)}, {{"axis", int64_t{1}}});
      }
      Tensor sel = from_vector(V{3, 0, 0, 2});
      w.add("index_select", {in, sel}, {index_select(in, 0, sel)}, {{"axis", int64_t{0}}});
      Tensor sel32 = from_vector(std::vector<int32_t>{4, 1}), sel0 = zeros({0}, {DType::Int64});
      w.add("index_select", {in, sel32}, {index_select(in, -1, sel32)}, {{"axis", int64_t{-1}}});
      w.add("index_select", {in, sel0}, {index_select(in, 1, sel0)}, {{"axis", int64_t{1}}});
      Tensor ta = rand_index({4, 7}, 5, seed++), tb = rand_index({1, 2}, 5, seed++);
      w.add("take_along_axis", {in, ta}, {take_along_axis(in, ta, 1)}, {{"axis", int64_t{1}}});
      w.add("take_along_axis", {in, tb}, {take_along_axis(in, tb, -1)}, {{"axis", int64_t{-1}}});
      Tensor mk = rand_tensor({4, 5}, DType::Bool, seed++, Fill::Bool), mb = rand_tensor({5}, DType::Bool, seed++, Fill::Bool);
      const double v = dt == DType::Bool ? 1.0 : is_floating(dt) ? -1.5 : 7.0;
      Scalar sv = is_floating(dt) ? Scalar(v) : Scalar(static_cast<int64_t>(v));
      w.add("masked_fill", {in, mk}, {masked_fill(in, mk, sv)}, {{"value", v}});
      w.add("masked_fill", {in, mb}, {masked_fill(in, mb, sv)}, {{"value", v}});
    }
    Tensor g0 = R({}), gi = zeros({}, {DType::Int64});
    w.add("gather", {g0, gi}, {gather(g0, 0, gi)}, {{"axis", int64_t{0}}});
    Tensor gi32 = rand_index({2, 2}, 4, seed++).to(DType::Int32);
    w.add("gather", {x, gi32}, {gather(x, 1, gi32)}, {{"axis", int64_t{1}}});
    Tensor big = R({200, 300}), bi = rand_index({200, 300}, 200, seed++);
    w.add("gather", {big, bi}, {gather(big, 0, bi)}, {{"axis", int64_t{0}}});
    // Sorting: Edge values give ties, NaN and +-Inf in float dtypes (stable sort is deterministic).
    Fill sf = is_floating(dt) ? Fill::Edge : fill_for(dt);
    Tensor so = rand_tensor({5, 9}, dt, seed++, sf), son = non_contiguous(rand_tensor({5, 9}, dt, seed++, sf));
    for (const Tensor& in : {so, son, so.transpose(0, 1)})
      for (int64_t ax : {-1, 0})
        for (bool desc : {false, true}) {
          auto [sv, si] = sort(in, ax, desc);
          w.add("sort", {in}, {sv, si}, {{"axis", ax}, {"descending", desc}});
          w.add("argsort", {in}, {argsort(in, ax, desc)}, {{"axis", ax}, {"descending", desc}});
        }
    Tensor sz = R({3, 0}), sc = R({});
    w.add("sort", {sz}, {sort(sz, 0).first, sort(sz, 0).second}, {{"axis", int64_t{0}}, {"descending", false}});
    w.add("sort", {sc}, {sort(sc).first, sort(sc).second}, {{"axis", int64_t{-1}}, {"descending", false}});
    Tensor bs = R({4, 3000});
    w.add("sort", {bs}, {sort(bs).first, sort(bs).second}, {{"axis", int64_t{-1}}, {"descending", false}}, {});
    if (dt != DType::Bool) {
      Tensor tk = distinct({4, 7}, dt, seed++), tkn = non_contiguous(distinct({4, 7}, dt, seed++));
      for (const Tensor& in : {tk, tkn, tk.transpose(0, 1)})
        for (auto [k, ax] : {std::pair<int64_t, int64_t>{3, -1}, {2, 0}, {0, 1}, {4, 0}})
          for (bool largest : {true, false}) {
            auto [tv, ti] = topk(in, k, ax, largest);
            w.add("topk", {in}, {tv, ti}, {{"k", k}, {"axis", ax}, {"largest", largest}});
          }
    }
    for (const Tensor& in : {rand_tensor({3, 4}, dt, seed++, Fill::Bool), non_contiguous(rand_tensor({2, 3, 4}, dt, seed++, Fill::Bool)),
                             R({0, 3}), rand_tensor({}, dt, seed++, Fill::Bool).to(dt), ones({}, {dt})})
      w.add("nonzero", {in}, {nonzero(in)});
  }
  // NaN is the largest value for topk; integer and int32 indices for one_hot.
  Tensor nanv = from_vector(std::vector<float>{1.5f, NAN, -2.f, 3.f, 0.25f, -INFINITY, INFINITY, 0.5f}, {2, 4});
  for (bool largest : {true, false}) {
    auto [tv, ti] = topk(nanv, 3, -1, largest);
    w.add("topk", {nanv}, {tv, ti}, {{"k", int64_t{3}}, {"axis", int64_t{-1}}, {"largest", largest}});
  }
  Tensor oh = rand_index({5}, 4, seed++), oh2 = rand_index({2, 3}, 6, seed++).transpose(0, 1);
  w.add("one_hot", {oh}, {one_hot(oh, 4)}, {{"num_classes", int64_t{4}}});
  w.add("one_hot", {oh}, {one_hot(oh, -1)}, {{"num_classes", int64_t{-1}}});
  w.add("one_hot", {oh2}, {one_hot(oh2, 6)}, {{"num_classes", int64_t{6}}});
  Tensor ohz = zeros({0}, {DType::Int64}), oh0 = full({}, 2, {DType::Int64});
  w.add("one_hot", {ohz}, {one_hot(ohz, 3)}, {{"num_classes", int64_t{3}}});
  w.add("one_hot", {oh0}, {one_hot(oh0, 3)}, {{"num_classes", int64_t{3}}});
  Tensor nz = rand_tensor({4, 6}, DType::Float32, seed++, Fill::Edge);
  w.add("nonzero", {nz}, {nonzero(nz)});
  // shape_of (an ONNX Shape of a run-time-sized value): the sizes, for any dtype and rank.
  for (const Tensor& in : {nz, zeros({0, 3}), ones({}, {DType::Int64}), non_contiguous(rand_tensor({2, 3, 4}, DType::Float32, seed++, Fill::Edge))})
    w.add("shape_of", {in}, {spore::runtime::call(spore::prims::shape_of_primitive(), spore::NoAttrs{}, {in})});
}

}  // namespace

SPORE_ORACLE_FAMILY(shape) {
  uint64_t seed = 100;
  views(w, seed);
  movement(w, seed);
  indexing(w, seed);
}

}  // namespace spore::oracle
