// SPDX-License-Identifier: Apache-2.0
// Gradient-check cases of the nn primitives: matmul (2-D, batched with broadcast, 1-D operands,
// the transpose flags, addmm), conv and conv_transpose (1-3 spatial dims, stride, padding
// including 'same', dilation, groups, output padding, bias), pooling (overlapping max windows,
// ceil_mode, avg with and without counted padding, adaptive), interpolate, embedding with
// repeated indices, the norms with and without affine parameters (batch norm in training and
// inference), the losses (reductions, ignore_index, class weights, label smoothing) and dropout
// with a fixed key. oracle_op and attrs are those of tests/oracle/cases_{linalg,conv,nn}.cc; a
// case whose torch function takes inputs this table cannot hold (an absent weight is an
// undefined tensor there) leaves oracle_op empty.
#include <sstream>

#include "autodiff/grad_cases.h"
#include "prims/batch_norm_grad.h"
#include "prims/conv.h"
#include "prims/conv_weight_grad.h"
#include "prims/dropout.h"
#include "prims/matmul.h"
#include "runtime/dispatch.h"

namespace spore::gradcheck {
namespace {

using namespace ops;
using oracle::Fill;
using IV = std::vector<int64_t>;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using Xs = const std::vector<Tensor>&;

Tensor I(std::vector<int64_t> v, const Shape& s) { return from_vector(std::move(v), s); }
/// Case names by stream (gcc 12's -Wrestrict misfires on chained std::string +).
template <class... A>
std::string cat(const A&... a) {
  std::ostringstream os;
  (os << ... << a);
  return os.str();
}

struct Adder {
  std::vector<GradCase>& cases;
  GradCase& operator()(std::string name, std::string prim, Fn fn, std::vector<Tensor> inputs, int order = 2) {
    GradCase c;
    c.name = std::move(name);
    c.prims = {std::move(prim)};
    c.fn = std::move(fn);
    c.inputs = std::move(inputs);
    c.order = order;
    cases.push_back(std::move(c));
    return cases.back();
  }
};

GradCase& vs_torch(GradCase& c, std::string op, oracle::Attrs attrs, std::vector<int> wrt = {}) {
  c.oracle_op = std::move(op);
  c.attrs = std::move(attrs);
  c.wrt = std::move(wrt);
  return c;
}

// ---- matmul -------------------------------------------------------------------------------

void matmul_cases(Adder& add) {
  auto mm = [](Xs x) { return matmul(x[0], x[1]); };
  const std::vector<std::tuple<const char*, Shape, Shape>> shapes = {
      {"matmul/2d", {3, 4}, {4, 5}},
      {"matmul/batched_broadcast", {2, 1, 3, 4}, {5, 4, 6}},
      {"matmul/batched_times_2d", {2, 3, 4}, {4, 6}},
      {"matmul/2d_times_batched", {3, 4}, {2, 4, 5}},
      {"matmul/1d_left", {5}, {2, 5, 3}},
      {"matmul/1d_right", {2, 3, 5}, {5}},
      {"matmul/dot", {7}, {7}},
      {"matmul/vec_mat", {4}, {4, 3}},
  };
  uint64_t seed = 100;
  for (const auto& [name, sa, sb] : shapes)
    vs_torch(add(name, "matmul", mm, {R(sa, seed++), R(sb, seed++)}), "matmul", {});
  vs_torch(add("matmul/addmm", "matmul", [](Xs x) { return addmm(x[0], x[1], x[2], 0.5, 2.0); },
             {R({5}, seed++), R({3, 7}, seed++), R({7, 5}, seed++)}),
         "addmm", {{"beta", 0.5}, {"alpha", 2.0}});
  vs_torch(add("matmul/addmm_bias_col", "matmul", [](Xs x) { return addmm(x[0], x[1], x[2], -1.0, 0.25); },
             {R({3, 1}, seed++), R({3, 7}, seed++), R({7, 5}, seed++)}),
         "addmm", {{"beta", -1.0}, {"alpha", 0.25}});
  // The transpose flags (no public op sets them): alpha op(a) @ op(b) + beta bias.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      std::string name = "matmul/trans";
      name += ta ? "_a" : "";
      name += tb ? "_b" : "";
      Shape sa = ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, sb = tb ? Shape{5, 4} : Shape{4, 5};
      add(name, "matmul",
          [ta, tb](Xs x) {
            return runtime::call(prims::matmul_primitive(), prims::MatmulAttrs{ta, tb, 1.5, 0.5}, {x[0], x[1], x[2]});
          },
          {R(sa, seed++), R(sb, seed++), R({3, 1}, seed++)});
    }
}

// ---- conv ---------------------------------------------------------------------------------

oracle::Attrs conv_attrs(const ConvOptions& o, size_t nsp) {
  auto expand = [&](const IV& v) { return v.size() == 1 ? IV(nsp, v[0]) : v; };
  return {{"stride", expand(o.stride)}, {"padding", expand(o.padding)}, {"dilation", expand(o.dilation)},
          {"groups", o.groups}, {"same", o.same}};
}

void conv_cases(Adder& add) {
  struct C {
    const char* name;
    Shape x, w;
    ConvOptions o;
    bool bias;
  };
  const std::vector<C> cs = {
      {"conv/2d_stride2_pad", {2, 3, 7, 7}, {4, 3, 3, 3}, {{2}, {1}, {1}, 1, false}, true},
      {"conv/2d_stride2_tail", {1, 2, 8, 7}, {3, 2, 3, 2}, {{2, 3}, {0}, {1}, 1, false}, false},
      // Padded and strided over an even input (ResNet's 3x3/2, pad 1): the data gradient is a
      // conv_transpose2d with output_padding 1 beside the padding.
      {"conv/2d_stride2_pad_even", {2, 3, 8, 8}, {4, 3, 3, 3}, {{2}, {1}, {1}, 1, false}, true},
      {"conv/2d_dilation", {1, 2, 8, 8}, {3, 2, 3, 3}, {{1}, {2}, {2}, 1, false}, false},
      {"conv/2d_groups2", {2, 4, 6, 6}, {6, 2, 3, 3}, {{1}, {1}, {1}, 2, false}, true},
      {"conv/2d_groups2_stride2_dilation", {1, 4, 9, 9}, {4, 2, 3, 3}, {{2}, {1}, {2}, 2, false}, true},
      {"conv/2d_same_even_kernel", {1, 2, 6, 6}, {3, 2, 4, 4}, {{1}, {0}, {1}, 1, true}, true},
      {"conv/2d_same_dilation", {2, 3, 7, 7}, {4, 3, 2, 3}, {{1}, {0}, {2, 1}, 1, true}, true},
      {"conv/1d_same_even_kernel", {2, 3, 10}, {4, 3, 4}, {{1}, {0}, {1}, 1, true}, true},
      {"conv/1d_stride2", {2, 3, 11}, {4, 3, 3}, {{2}, {1}, {1}, 1, false}, true},
      {"conv/1d_groups_dilation", {2, 4, 10}, {6, 2, 3}, {{1}, {1}, {3}, 2, false}, false},
      {"conv/3d_stride2", {1, 2, 5, 5, 5}, {3, 2, 3, 3, 3}, {{2}, {1}, {1}, 1, false}, true},
      {"conv/3d_groups", {1, 4, 4, 4, 4}, {4, 2, 2, 2, 2}, {{1}, {0}, {1}, 2, true}, false},
  };
  uint64_t seed = 200;
  for (const C& c : cs) {
    const size_t nsp = c.x.size() - 2;
    const ConvOptions o = c.o;
    const bool bias = c.bias;
    auto fn = [o, nsp, bias](Xs x) {
      const Tensor b = bias ? x[2] : Tensor();
      return nsp == 1 ? conv1d(x[0], x[1], b, o) : nsp == 2 ? conv2d(x[0], x[1], b, o) : conv3d(x[0], x[1], b, o);
    };
    std::vector<Tensor> ins = {R(c.x, seed++), R(c.w, seed++)};
    if (bias) ins.push_back(R({c.w[0]}, seed++));
    const char* op = nsp == 1 ? "conv1d" : nsp == 2 ? "conv2d" : "conv3d";
    vs_torch(add(c.name, "conv", fn, ins), op, conv_attrs(o, nsp));
  }

  // conv_transpose2d: weight (in, out/groups, kh, kw).
  struct T {
    const char* name;
    Shape x, w;
    ConvOptions o;
    IV output_padding;
    bool bias;
  };
  const std::vector<T> ts = {
      {"conv_transpose/stride2_output_padding", {2, 3, 5, 6}, {3, 4, 3, 3}, {{2}, {1}, {1}, 1, false}, {1}, true},
      {"conv_transpose/groups2_stride2", {2, 4, 5, 5}, {4, 3, 3, 3}, {{2}, {0}, {1}, 2, false}, {0}, false},
      {"conv_transpose/dilation", {1, 2, 4, 4}, {2, 2, 3, 2}, {{1}, {1}, {2}, 1, false}, {0}, true},
      {"conv_transpose/uneven_stride", {1, 2, 4, 4}, {2, 3, 3, 3}, {{3, 2}, {0, 1}, {1}, 1, false}, {2, 1}, true},
  };
  for (const T& c : ts) {
    const ConvOptions o = c.o;
    const IV op = c.output_padding;
    const bool bias = c.bias;
    auto fn = [o, op, bias](Xs x) { return conv_transpose2d(x[0], x[1], bias ? x[2] : Tensor(), o, op); };
    std::vector<Tensor> ins = {R(c.x, seed++), R(c.w, seed++)};
    if (bias) ins.push_back(R({c.w[1] * o.groups}, seed++));
    oracle::Attrs at = conv_attrs(o, 2);
    at.push_back({"output_padding", op.size() == 1 ? IV{op[0], op[0]} : op});
    vs_torch(add(c.name, "conv_transpose", fn, ins), "conv_transpose2d", at);
  }
  // 1-D and 3-D transposed convs have no public op: the primitive itself.
  auto prim_t = [](prims::ConvTransposeAttrs at) {
    return [at](Xs x) {
      return x.size() == 3 ? runtime::call(prims::conv_transpose_primitive(), at, {x[0], x[1], x[2]})
                           : runtime::call(prims::conv_transpose_primitive(), at, {x[0], x[1]});
    };
  };
  add("conv_transpose/1d_stride2", "conv_transpose", prim_t({{2}, {1}, {1}, {2}, 2}),
      {R({2, 4, 5}, seed++), R({4, 3, 3}, seed++), R({6}, seed++)});
  add("conv_transpose/3d_stride2", "conv_transpose", prim_t({{2, 1, 2}, {1, 0, 0}, {1, 0, 0}, {1, 1, 1}, 1}),
      {R({1, 2, 3, 3, 2}, seed++), R({2, 3, 3, 2, 2}, seed++)});
  // conv_weight_grad (what conv's vjp emits for the weight), called itself: bilinear in x and dy,
  // so second order checks its rules' products. 2-D with groups, asymmetric padding, strides
  // and a dilation; 1-D with a tail no window reads.
  auto wgrad = [](prims::ConvWeightGradAttrs at) {
    return [at](Xs x) { return runtime::call(prims::conv_weight_grad_primitive(), at, {x[0], x[1]}); };
  };
  add("conv_weight_grad/2d_groups", "conv_weight_grad", wgrad({{2, 1}, {1, 0}, {1, 1}, {1, 2}, {3, 2}, 2}),
      {R({2, 4, 5, 6}, seed++), R({2, 6, 3, 5}, seed++)});
  add("conv_weight_grad/1d_tail", "conv_weight_grad", wgrad({{2}, {0}, {0}, {1}, {3}, 1}),
      {R({2, 3, 8}, seed++), R({2, 2, 3}, seed++)});
}

// ---- pooling ------------------------------------------------------------------------------

oracle::Attrs pool_attrs(const PoolOptions& o) {
  return {{"kernel", o.kernel}, {"stride", o.stride}, {"padding", o.padding}, {"ceil_mode", o.ceil_mode},
          {"count_include_pad", o.count_include_pad}};
}

void pool_cases(Adder& add) {
  auto po = [](IV k, IV s, IV p, bool ceil = false, bool cip = true) { return PoolOptions{k, s, p, ceil, cip}; };
  struct P {
    const char* variant;
    Shape x;
    PoolOptions o;
  };
  const std::vector<P> ps = {
      {"overlap_pad", {2, 3, 9, 9}, po({3}, {2}, {1})},
      {"rect_overlap", {1, 2, 10, 7}, po({3, 2}, {2, 1}, {1, 0})},
      {"ceil_mode", {2, 2, 9, 9}, po({3}, {2}, {0}, true)},
      {"exclude_pad_ceil", {2, 3, 11, 11}, po({4}, {3}, {2}, true, false)},
      {"disjoint", {2, 3, 8, 8}, po({2}, {}, {0})},
  };
  uint64_t seed = 300;
  for (const P& p : ps) {
    const PoolOptions o = p.o;
    // Max: piecewise linear (order 1); random inputs keep each window's maximum unique.
    vs_torch(add(cat("pool2d/max_", p.variant), "pool2d", [o](Xs x) { return max_pool2d(x[0], o); },
               {R(p.x, seed++)}, 1),
           "max_pool2d", pool_attrs(o));
    vs_torch(add(cat("pool2d/avg_", p.variant), "pool2d", [o](Xs x) { return avg_pool2d(x[0], o); },
               {R(p.x, seed++)}),
           "avg_pool2d", pool_attrs(o));
  }
  const PoolOptions o = po({3}, {2}, {1});
  vs_torch(add("pool2d/max_with_indices", "pool2d", [o](Xs x) { return max_pool2d_with_indices(x[0], o).first; },
             {R({2, 3, 9, 9}, seed++)}, 1),
         "max_pool2d_with_indices", pool_attrs(o));
  const std::vector<std::pair<Shape, IV>> as = {
      {{2, 3, 7, 9}, {3, 4}}, {{2, 3, 8, 8}, {4, 4}}, {{1, 2, 5, 5}, {1, 1}}, {{1, 2, 4, 4}, {6, 5}}};
  for (const auto& [s, osz] : as) {
    std::string name = cat("adaptive_avg_pool2d/", s[2], "x", s[3], "_to_", osz[0], "x", osz[1]);
    const std::array<int64_t, 2> out = {osz[0], osz[1]};
    vs_torch(add(name, "adaptive_avg_pool2d", [out](Xs x) { return adaptive_avg_pool2d(x[0], out); }, {R(s, seed++)}),
           "adaptive_avg_pool2d", {{"output_size", osz}});
  }
}

// ---- interpolate, embedding ---------------------------------------------------------------

void resize_cases(Adder& add) {
  struct S {
    Shape x;
    IV size;
  };
  const std::vector<S> ss = {
      {{1, 2, 4, 5}, {8, 10}}, {{2, 3, 5, 7}, {3, 4}}, {{1, 1, 3, 3}, {7, 5}}, {{1, 2, 6, 4}, {6, 9}}};
  uint64_t seed = 400;
  for (const S& s : ss) {
    const std::array<int64_t, 2> size = {s.size[0], s.size[1]};
    std::string dims = cat(s.x[2], "x", s.x[3], "_to_", size[0], "x", size[1]);
    vs_torch(add(cat("interpolate/nearest_", dims), "interpolate", [size](Xs x) { return interpolate(x[0], size); },
               {R(s.x, seed++)}),
           "interpolate", {{"size", s.size}, {"mode", std::string("nearest")}});
    for (bool ac : {false, true}) {
      auto fn = [size, ac](Xs x) { return interpolate(x[0], size, InterpolateMode::Bilinear, ac); };
      vs_torch(add(cat(ac ? "interpolate/bilinear_align_" : "interpolate/bilinear_", dims), "interpolate", fn,
                 {R(s.x, seed++)}),
             "interpolate", {{"size", s.size}, {"mode", std::string("bilinear")}, {"align_corners", ac}});
    }
  }
}

void embedding_cases(Adder& add) {
  auto fn = [](Xs x) { return embedding(x[0], x[1]); };
  const Tensor idx = I({1, 3, 1, 1, 7, 3, 9, 0, 1, 4}, {2, 5});
  vs_torch(add("embedding/repeated_indices", "embedding", fn, {R({10, 6}, 500), idx}),
         "embedding", {});
  vs_torch(add("embedding/scalar_index", "embedding", fn, {R({4, 3}, 501), I({2}, {})}), "embedding", {});
}

// ---- norms --------------------------------------------------------------------------------

void norm_cases(Adder& add) {
  uint64_t seed = 600;
  // layer_norm over the last dim and over the last two.
  for (const auto& [s, norm] : std::vector<std::pair<Shape, Shape>>{{{4, 10}, {10}}, {{2, 3, 5}, {3, 5}}}) {
    IV ns(norm.begin(), norm.end());
    std::string dims = cat("_", norm.size(), "d");
    vs_torch(add(cat("layer_norm/affine", dims), "layer_norm",
               [norm](Xs x) { return layer_norm(x[0], norm, x[1], x[2], 1e-5); },
               {R(s, seed++) * 3 + 1, R(norm, seed++), R(norm, seed++)}),
           "layer_norm", {{"shape", ns}, {"eps", 1e-5}});
    add(cat("layer_norm/plain", dims), "layer_norm", [norm](Xs x) { return layer_norm(x[0], norm, {}, {}, 1e-5); },
        {R(s, seed++) * 3 + 1});
    add(cat("layer_norm/weight_only", dims), "layer_norm",
        [norm](Xs x) { return layer_norm(x[0], norm, x[1], {}, 1e-3); },
        {R(s, seed++), R(norm, seed++)});
  }
  add("layer_norm/bias_only", "layer_norm", [](Xs x) { return layer_norm(x[0], {6}, {}, x[1], 1e-5); },
      {R({3, 6}, seed++), R({6}, seed++)});

  for (const auto& [s, g] : std::vector<std::pair<Shape, int64_t>>{{{2, 6, 5}, 3}, {{3, 4, 3, 3}, 2}, {{2, 6, 4}, 1}}) {
    std::string dims = cat("_g", g, "_r", s.size());
    const int64_t groups = g;
    vs_torch(add(cat("group_norm/affine", dims), "group_norm",
               [groups](Xs x) { return group_norm(x[0], groups, x[1], x[2], 1e-5); },
               {R(s, seed++) * 2 - 1, R({s[1]}, seed++), R({s[1]}, seed++)}),
           "group_norm", {{"groups", groups}, {"eps", 1e-5}});
    add(cat("group_norm/plain", dims), "group_norm", [groups](Xs x) { return group_norm(x[0], groups, {}, {}, 1e-5); },
        {R(s, seed++) * 2 - 1});
  }

  for (const auto& [s, norm] : std::vector<std::pair<Shape, Shape>>{{{4, 10}, {10}}, {{2, 3, 8}, {3, 8}}}) {
    IV ns(norm.begin(), norm.end());
    std::string dims = cat("_", norm.size(), "d");
    vs_torch(add(cat("rms_norm/weight", dims), "rms_norm", [norm](Xs x) { return rms_norm(x[0], norm, x[1]); },
               {R(s, seed++), R(norm, seed++)}),
           "rms_norm", {{"shape", ns}});
    vs_torch(add(cat("rms_norm/weight_eps", dims), "rms_norm",
                 [norm](Xs x) { return rms_norm(x[0], norm, x[1], 1e-2); },
               {R(s, seed++), R(norm, seed++)}),
           "rms_norm", {{"shape", ns}, {"eps", 1e-2}});
    add(cat("rms_norm/plain", dims), "rms_norm", [norm](Xs x) { return rms_norm(x[0], norm, {}, 1e-5); },
        {R(s, seed++)});
  }

  // batch_norm: training (batch statistics; the running statistics are copies, updated in
  // place by the op and not differentiated) and inference (running statistics, differentiable
  // inputs of the primitive, though not in PyTorch).
  for (const Shape& s : std::vector<Shape>{{4, 3}, {2, 3, 5}, {3, 2, 4, 4}}) {
    const Dim C = s[1];
    std::string dims = cat("_r", s.size());
    std::vector<Tensor> ins = {R(s, seed++) * 2 + 0.5, R({C}, seed++), R({C}, seed++), R({C}, seed++),
                               R({C}, seed++, Fill::Positive)};
    GradCase& train = add(cat("batch_norm/train_affine", dims), "batch_norm", [](Xs x) {
      return batch_norm(x[0], x[1], x[2], x[3].clone(), x[4].clone(), true, 0.2, 1e-5);
    }, ins);
    vs_torch(train, "batch_norm_train", {{"momentum", 0.2}, {"eps", 1e-5}}, {0, 1, 2});
    add(cat("batch_norm/train_plain", dims), "batch_norm", [](Xs x) { return batch_norm(x[0], {}, {}, {}, {}, true); },
        {R(s, seed++)});
    vs_torch(add(cat("batch_norm/eval_affine", dims), "batch_norm",
               [](Xs x) { return batch_norm(x[0], x[1], x[2], x[3], x[4], false, 0.2, 1e-5); }, ins),
           "batch_norm_eval", {{"eps", 1e-5}}, {0, 1, 2});
    GradCase& stats = add(cat("batch_norm/eval_running_stats", dims), "batch_norm",
                          [](Xs x) { return batch_norm(x[0], x[1], x[2], x[3], x[4], false, 0.2, 1e-5); }, ins);
    stats.wrt = {0, 3, 4};
  }
  // batch_norm_grad (what batch_norm's vjp emits in training): the three results as one
  // vector, checked to second order, so the jvp and vjp it takes from its formula are too.
  for (bool with_w : {true, false}) {
    const Shape s{3, 2, 2, 3};
    std::vector<Tensor> ins = {R(s, seed++), R(s, seed++) * 2 + 0.5, R({2}, seed++), R({2}, seed++, Fill::Positive)};
    if (with_w) ins.push_back(R({2}, seed++));
    add(with_w ? "batch_norm_grad/affine" : "batch_norm_grad/plain", "batch_norm_grad", [with_w](Xs x) {
      prims::BatchNormGradAttrs a{1e-3, with_w};
      auto r = runtime::dispatch(prims::batch_norm_grad_primitive(), &a, x);
      return concat({reshape(r.t[0], {-1}), r.t[1], r.t[2]}, 0);
    }, ins);
  }
  add("batch_norm/eval_plain", "batch_norm", [](Xs x) { return batch_norm(x[0], {}, {}, x[1], x[2], false); },
      {R({4, 3, 2}, seed++), R({3}, seed++), R({3}, seed++, Fill::Positive)});
}

// ---- losses -------------------------------------------------------------------------------

const char* red_name(Reduction r) { return r == Reduction::None ? "none" : r == Reduction::Sum ? "sum" : "mean"; }

void loss_cases(Adder& add) {
  uint64_t seed = 700;
  struct S {
    Shape lp;
    Shape target;
    std::vector<int64_t> tv;  // target values (1 is ignored where ignore_index is 1)
  };
  const std::vector<S> ss = {
      {{6, 5}, {6}, {0, 1, 4, 2, 1, 3}},
      {{3, 4, 2}, {3, 2}, {3, 1, 0, 2, 1, 1}},
      {{5}, {}, {3}},
  };
  for (const S& s : ss) {
    std::string dims = cat("_r", s.lp.size());
    const int64_t C = s.lp.size() == 1 ? s.lp[0] : s.lp[1];
    for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum})
      for (int64_t ignore : {int64_t{-100}, int64_t{1}}) {
        std::string name = cat("nll_loss/", red_name(r), ignore == 1 ? "_ignore" : "", dims);
        std::vector<Tensor> ins = {R(s.lp, seed++), I(s.tv, s.target), R({C}, seed++, Fill::Positive)};
        oracle::Attrs at = {
            {"reduction", std::string(red_name(r))}, {"ignore_index", ignore}, {"label_smoothing", 0.0}};
        // torch has no derivative for the class weight: the oracle compares the log-probabilities'.
        vs_torch(add(name, "nll_loss", [r, ignore](Xs x) { return nll_loss(x[0], x[1], x[2], ignore, r); }, ins),
               "nll_loss", at, {0});
        add(cat(name, "_weight_grad"), "nll_loss", [r, ignore](Xs x) { return nll_loss(x[0], x[1], x[2], ignore, r); },
            ins).wrt = {0, 2};
        add(cat(name, "_unweighted"), "nll_loss", [r, ignore](Xs x) { return nll_loss(x[0], x[1], {}, ignore, r); },
            {ins[0], ins[1]});
      }
    // Label smoothing comes through cross_entropy (log_softmax, then nll_loss).
    for (Reduction r : {Reduction::Mean, Reduction::None}) {
      std::vector<Tensor> ins = {R(s.lp, seed++) * 2, I(s.tv, s.target), R({C}, seed++, Fill::Positive)};
      oracle::Attrs at = {
          {"reduction", std::string(red_name(r))}, {"ignore_index", int64_t{1}}, {"label_smoothing", 0.15}};
      GradCase& c = add(cat("nll_loss/smoothing_", red_name(r), dims), "nll_loss",
                        [r](Xs x) { return cross_entropy(x[0], x[1], x[2], 1, r, 0.15); }, ins);
      vs_torch(c, "cross_entropy", at, {0});
      add(cat("nll_loss/smoothing_weight_grad_", red_name(r), dims), "nll_loss",
          [r](Xs x) { return cross_entropy(x[0], x[1], x[2], 1, r, 0.15); }, ins).wrt = {0, 2};
    }
    // Class probabilities: soft_nll_loss, differentiable in the target too.
    for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum})
      for (double ls : {0.0, 0.15}) {
        const int64_t ca = s.lp.size() == 1 ? 0 : 1;
        std::vector<Tensor> ins = {R(s.lp, seed++) * 2, softmax(R(s.lp, seed++), ca), R({C}, seed++, Fill::Positive)};
        oracle::Attrs at = {{"reduction", std::string(red_name(r))}, {"ignore_index", int64_t{-100}},
                            {"label_smoothing", ls}};
        std::string name = cat("soft_nll_loss/", red_name(r), ls > 0 ? "_smoothing" : "", dims);
        auto fn = [r, ls](Xs x) { return cross_entropy(x[0], x[1], x[2], -100, r, ls); };
        vs_torch(add(name, "soft_nll_loss", fn, ins), "cross_entropy", at, {0, 1});
        add(cat(name, "_weight_grad"), "soft_nll_loss", fn, ins).wrt = {2};
        add(cat(name, "_unweighted"), "soft_nll_loss",
            [r, ls](Xs x) { return cross_entropy(x[0], x[1], {}, -100, r, ls); },
            {ins[0], ins[1]});
      }
  }
}

// ---- dropout ------------------------------------------------------------------------------

void dropout_cases(Adder& add) {
  // A fixed key (the public op draws a fresh one per call, which finite differences cannot use).
  auto with_key = [](double p) {
    return [p](Xs x) { return runtime::call(prims::dropout_primitive(), prims::DropoutAttrs{p, 1234, 8}, {x[0]}); };
  };
  add("dropout/fixed_key", "dropout", with_key(0.3), {R({4, 7}, 800)});
  add("dropout/p0", "dropout", with_key(0.0), {R({3, 5}, 801)});
  // Exact zeros in the input (x0 - x1 where they are equal): the mask comes from the key, so
  // kept zeros still pass their cotangent on (a rule reading the output could not tell).
  Tensor x0 = R({4, 6}, 802);
  const std::vector<double> scale = {1, 1, 2, 1, 1, 3, 1, 1, 1, 1, 2, 1, 1, 1, 1, 4, 1, 1, 1, 2, 1, 1, 1, 1};
  Tensor x1 = x0 * from_vector(scale, {4, 6});
  add("dropout/zeros_in_input", "dropout", [](Xs x) {
    return runtime::call(prims::dropout_primitive(), prims::DropoutAttrs{0.5, 77, 0}, {x[0] - x[1]});
  }, {x0, x1}).wrt = {0};
}

}  // namespace

SPORE_GRAD_CASES(nn) {
  Adder add{cases};
  matmul_cases(add);
  conv_cases(add);
  pool_cases(add);
  resize_cases(add);
  embedding_cases(add);
  norm_cases(add);
  loss_cases(add);
  dropout_cases(add);
}

}  // namespace spore::gradcheck
