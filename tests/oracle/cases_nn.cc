// SPDX-License-Identifier: Apache-2.0
// Oracle cases for the nn family: softmax/log_softmax, norms, losses, embedding, interpolate,
// attention x float dtypes x shapes (axis variants, strided inputs, zero-size batches, edge
// values).
#include "oracle.h"

#include <cmath>

namespace spore::oracle {
namespace {

using ops::Reduction;

Attrs axis_attr(int64_t axis) { return {{"axis", axis}}; }

void softmax_cases(Writer& w, uint64_t& seed) {
  struct C {
    Shape s;
    int64_t axis;
  };
  const std::vector<C> cs = {{{7}, 0},       {{3, 33}, -1},   {{3, 33}, 0},    {{2, 5, 130}, 1}, {{2, 5, 130}, -1},
                             {{4, 3, 2, 9}, 2}, {{0, 5}, 1},  {{0, 5}, 0},     {{}, 0},          {{16, 768}, -1},
                             {{2, 70, 3}, 1}};
  for (DType dt : kFloatTypes)
    for (const C& c : cs)
      for (Fill f : {Fill::Normal, Fill::Edge}) {
        if (f == Fill::Edge && c.s.size() < 2) continue;
        // PyTorch 1.13's bf16 kernel for inner axes drops the NaN of a column holding +inf
        // (float32 and float16 give NaN, as Spore does): edge values only on the last axis.
        if (f == Fill::Edge && dt == DType::BFloat16 && c.axis != -1) continue;
        Tensor x = rand_tensor(c.s, dt, seed++, f) * (f == Fill::Normal ? 4 : 1);
        w.add("softmax", {x}, {ops::softmax(x, c.axis)}, axis_attr(c.axis));
        w.add("log_softmax", {x}, {ops::log_softmax(x, c.axis)}, axis_attr(c.axis));
      }
  // All -inf rows and a NaN row, both layouts.
  Tensor special = ops::tensor({{-INFINITY, -INFINITY, -INFINITY}, {1.f, NAN, 2.f}, {1.f, 2.f, 3.f}});
  for (int64_t ax : {0, 1}) {
    w.add("softmax", {special}, {ops::softmax(special, ax)}, axis_attr(ax));
    w.add("log_softmax", {special}, {ops::log_softmax(special, ax)}, axis_attr(ax));
  }
  for (DType dt : kFloatTypes) {
    Tensor x = non_contiguous(rand_tensor({6, 9}, dt, seed++));
    for (int64_t ax : {0, 1}) {
      w.add("softmax", {x}, {ops::softmax(x, ax)}, axis_attr(ax));
      w.add("log_softmax", {x}, {ops::log_softmax(x, ax)}, axis_attr(ax));
    }
    Tensor xt = rand_tensor({5, 4, 7}, dt, seed++).transpose(0, 2);
    w.add("softmax", {xt}, {ops::softmax(xt, 1)}, axis_attr(1));
  }
}

void layer_norm_cases(Writer& w, uint64_t& seed) {
  struct C {
    Shape s;
    Shape norm;
  };
  const std::vector<C> cs = {{{4, 10}, {10}},        {{2, 3, 17}, {17}}, {{2, 3, 17}, {3, 17}}, {{0, 8}, {8}},
                             {{16, 768}, {768}},     {{5}, {5}},         {{3, 2, 33}, {2, 33}}};
  for (DType dt : kFloatTypes)
    for (const C& c : cs)
      for (int affine = 0; affine < 3; ++affine) {
        Tensor x = rand_tensor(c.s, dt, seed++) * 3 + 1;
        Tensor wt = affine ? rand_tensor(c.norm, dt, seed++) : Tensor();
        Tensor b = affine == 2 ? rand_tensor(c.norm, dt, seed++) : Tensor();
        std::vector<int64_t> ns(c.norm.begin(), c.norm.end());
        // bf16 with an affine: outputs near 0 come from cancellation in w * xhat + b, where
        // PyTorch's bf16 kernel rounds differently; compare those with an absolute bound.
        w.add("layer_norm", {x, wt, b}, {ops::layer_norm(x, c.norm, wt, b, 1e-5)}, {{"shape", ns}, {"eps", 1e-5}},
              {.atol = dt == DType::BFloat16 && affine ? 0.05 : -1});
      }
  for (DType dt : {DType::Float64, DType::BFloat16}) {  // strided input and weight
    Tensor xs = rand_tensor({7, 5}, dt, seed++).transpose(0, 1);
    Tensor ws = non_contiguous(rand_tensor({7}, dt, seed++));
    w.add("layer_norm", {xs, ws, Tensor()}, {ops::layer_norm(xs, {7}, ws)}, {{"shape", std::vector<int64_t>{7}}, {"eps", 1e-5}});
    w.add("rms_norm", {xs, ws}, {ops::rms_norm(xs, {7}, ws)}, {{"shape", std::vector<int64_t>{7}}});
  }
  Tensor x = non_contiguous(rand_tensor({6, 9}, DType::Float32, seed++));
  Tensor b = non_contiguous(rand_tensor({9}, DType::Float32, seed++));
  w.add("layer_norm", {x, Tensor(), b}, {ops::layer_norm(x, {9}, {}, b, 1e-3)},
        {{"shape", std::vector<int64_t>{9}}, {"eps", 1e-3}});
}

void norm_cases(Writer& w, uint64_t& seed) {
  // group_norm: (N, C, *) with groups dividing C. One-element groups are left out: there the
  // variance is 0, rstd = 1/sqrt(eps) amplifies rounding, and PyTorch's x * scale + shift form
  // (and its bf16 kernel, which returns 0 instead of the bias) differ from the exact answer.
  struct G {
    Shape s;
    int64_t groups;
  };
  for (DType dt : kFloatTypes)
    for (const G& g : std::vector<G>{{{2, 6, 5}, 3}, {{3, 4, 3, 3}, 2}, {{2, 8, 3}, 8}, {{0, 4, 3}, 2}, {{2, 6, 65}, 1}})
      for (int affine = 0; affine < 2; ++affine) {
        Tensor x = rand_tensor(g.s, dt, seed++) * 2 - 1;
        Tensor wt = affine ? rand_tensor({g.s[1]}, dt, seed++) : Tensor();
        Tensor b = affine ? rand_tensor({g.s[1]}, dt, seed++) : Tensor();
        // PyTorch 1.13's bf16 group_norm keeps statistics in bf16 (Spore's float32 result matches
        // a float64 reference rounded to bf16), so bf16 gets an absolute bound.
        w.add("group_norm", {x, wt, b}, {ops::group_norm(x, g.groups, wt, b)}, {{"groups", g.groups}, {"eps", 1e-5}},
              {.atol = dt == DType::BFloat16 ? 0.05 : -1});
      }
  Tensor xg = non_contiguous(rand_tensor({2, 4, 5}, DType::Float32, seed++));
  w.add("group_norm", {xg, Tensor(), Tensor()}, {ops::group_norm(xg, 2, {}, {}, 1e-3)}, {{"groups", int64_t{2}}, {"eps", 1e-3}});

  // rms_norm with PyTorch's default eps (machine epsilon of the dtype) and an explicit one.
  for (DType dt : kFloatTypes)
    for (const auto& [s, norm] : std::vector<std::pair<Shape, Shape>>{{{4, 10}, {10}}, {{2, 3, 40}, {3, 40}}, {{0, 5}, {5}}})
      for (int affine = 0; affine < 2; ++affine) {
        Tensor x = rand_tensor(s, dt, seed++);
        Tensor wt = affine ? rand_tensor(norm, dt, seed++) : Tensor();
        std::vector<int64_t> ns(norm.begin(), norm.end());
        w.add("rms_norm", {x, wt}, {ops::rms_norm(x, norm, wt)}, {{"shape", ns}});
        w.add("rms_norm", {x, wt}, {ops::rms_norm(x, norm, wt, 1e-2)}, {{"shape", ns}, {"eps", 1e-2}});
      }

  // batch_norm: training returns y and the updated running statistics (the inputs given to the
  // oracle are copies taken before the in-place update); inference uses the running stats.
  for (DType dt : kFloatTypes)
    for (const Shape& s : std::vector<Shape>{{4, 3}, {2, 3, 5}, {3, 2, 4, 4}, {2, 5, 70}})
      for (int affine = 0; affine < 2; ++affine) {
        const int64_t C = s[1];
        Tensor x = rand_tensor(s, dt, seed++) * 2 + 0.5;
        Tensor wt = affine ? rand_tensor({C}, dt, seed++) : Tensor();
        Tensor b = affine ? rand_tensor({C}, dt, seed++) : Tensor();
        Tensor rm = rand_tensor({C}, dt, seed++), rv = rand_tensor({C}, dt, seed++, Fill::Positive);
        Tensor rm0 = rm.clone(), rv0 = rv.clone();
        const uint64_t v0 = rm.version();
        Tensor y = ops::batch_norm(x, wt, b, rm, rv, true, 0.2, 1e-5);
        if (rm.version() == v0) throw Error("batch_norm did not bump the running_mean version");
        const CaseOptions opt{.atol = dt == DType::BFloat16 && affine ? 0.05 : -1};
        w.add("batch_norm_train", {x, wt, b, rm0, rv0}, {y, rm, rv}, {{"momentum", 0.2}, {"eps", 1e-5}}, opt);
        w.add("batch_norm_eval", {x, wt, b, rm0, rv0}, {ops::batch_norm(x, wt, b, rm0, rv0, false, 0.2, 1e-5)},
              {{"eps", 1e-5}}, opt);
      }
  Tensor xb = non_contiguous(rand_tensor({4, 3, 5}, DType::Float64, seed++));
  Tensor rm = non_contiguous(rand_tensor({3}, DType::Float64, seed++));
  Tensor rv = ops::ones({3}, {DType::Float64}), rm0 = rm.clone(), rv0 = rv.clone();
  Tensor yb = ops::batch_norm(xb, {}, {}, rm, rv, true);
  w.add("batch_norm_train", {xb, Tensor(), Tensor(), rm0, rv0}, {yb, rm, rv}, {{"momentum", 0.1}, {"eps", 1e-5}});
  Tensor yn = ops::batch_norm(xb, {}, {}, {}, {}, true);
  w.add("batch_norm_train", {xb, Tensor(), Tensor(), Tensor(), Tensor()}, {yn}, {{"momentum", 0.1}, {"eps", 1e-5}});
}

const char* red_name(Reduction r) { return r == Reduction::None ? "none" : r == Reduction::Sum ? "sum" : "mean"; }

void loss_cases(Writer& w, uint64_t& seed) {
  const std::vector<Shape> shapes = {{6, 5}, {3, 4, 7}, {2, 3, 2, 4}, {0, 4}, {5}};
  for (DType dt : kFloatTypes)
    for (const Shape& s : shapes)
      for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum})
        for (int variant = 0; variant < 3; ++variant) {  // plain, weight + ignore_index, label smoothing
          const int64_t C = s.size() == 1 ? s[0] : s[1];
          Shape ts;
          for (size_t i = 0; i < s.size(); ++i)
            if (i != (s.size() == 1 ? 0u : 1u)) ts.push_back(s[i]);
          Tensor logits = rand_tensor(s, dt, seed++) * 2;
          Tensor target = rand_index(ts, C, seed++);
          Tensor wt = variant == 1 ? rand_tensor({C}, dt, seed++, Fill::Positive) : Tensor();
          const int64_t ignore = variant == 1 ? 1 : -100;
          const double ls = variant == 2 ? 0.15 : 0.0;
          Attrs at = {{"reduction", std::string(red_name(r))}, {"ignore_index", ignore}, {"label_smoothing", ls}};
          Tensor lp = ops::log_softmax(logits, s.size() == 1 ? 0 : 1);
          if (variant < 2) w.add("nll_loss", {lp, target, wt}, {ops::nll_loss(lp, target, wt, ignore, r)}, at);
          w.add("cross_entropy", {logits, target, wt}, {ops::cross_entropy(logits, target, wt, ignore, r, ls)}, at);
          // Class probabilities (soft labels).
          Tensor probs = ops::softmax(rand_tensor(s, dt, seed++), s.size() == 1 ? 0 : 1);
          at[1].second = int64_t{-100};
          w.add("cross_entropy", {logits, probs, wt}, {ops::cross_entropy(logits, probs, wt, -100, r, ls)}, at);
        }
  // Every target ignored: mean is NaN as in PyTorch. Non-contiguous logits.
  Tensor lg = non_contiguous(rand_tensor({4, 3}, DType::Float32, seed++));
  Tensor all_ignored = ops::full({4}, 2, {DType::Int64});
  Attrs mean = {{"reduction", std::string("mean")}, {"ignore_index", int64_t{2}}, {"label_smoothing", 0.0}};
  w.add("cross_entropy", {lg, all_ignored, Tensor()}, {ops::cross_entropy(lg, all_ignored, {}, 2)}, mean);
  Tensor lp = ops::log_softmax(rand_tensor({5, 4, 3}, DType::Float64, seed++), 1).transpose(0, 2);  // (3, 4, 5)
  Tensor tt = rand_index({5, 3}, 4, seed++).transpose(0, 1);
  for (Reduction r : {Reduction::None, Reduction::Mean})
    w.add("nll_loss", {lp, tt, Tensor()}, {ops::nll_loss(lp, tt, {}, -100, r)},
          {{"reduction", std::string(red_name(r))}, {"ignore_index", int64_t{-100}}, {"label_smoothing", 0.0}});
  Tensor t32 = rand_index({4}, 3, seed++).to(DType::Int32);
  w.add("cross_entropy", {lg, t32.to(DType::Int64), Tensor()}, {ops::cross_entropy(lg, t32, {}, 2)}, mean);
}

void index_cases(Writer& w, uint64_t& seed) {
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64}) {
    Tensor table = rand_tensor({10, 6}, dt, seed++);
    for (const Shape& s : std::vector<Shape>{{4}, {3, 5}, {0}, {}}) {
      Tensor idx = rand_index(s, 10, seed++);
      w.add("embedding", {table, idx}, {ops::embedding(table, idx)});
    }
  }
  Tensor tnc = non_contiguous(rand_tensor({7, 3}, DType::Float32, seed++));
  Tensor i32 = rand_index({2, 4}, 7, seed++).to(DType::Int32);
  w.add("embedding", {tnc, i32.to(DType::Int64)}, {ops::embedding(tnc, i32)});

  using ops::InterpolateMode;
  const std::vector<std::pair<Shape, std::array<int64_t, 2>>> sizes = {
      {{1, 2, 4, 5}, {8, 10}}, {{2, 3, 5, 7}, {3, 4}}, {{1, 1, 3, 3}, {7, 5}}, {{1, 2, 6, 4}, {6, 9}},
      {{0, 2, 3, 3}, {4, 4}},  {{1, 1, 1, 1}, {3, 2}}, {{1, 2, 4, 4}, {1, 1}}};
  for (DType dt : kFloatTypes)
    for (const auto& [s, o] : sizes) {
      Tensor x = rand_tensor(s, dt, seed++);
      std::vector<int64_t> size = {o[0], o[1]};
      w.add("interpolate", {x}, {ops::interpolate(x, o)}, {{"size", size}, {"mode", std::string("nearest")}});
      // PyTorch 1.13 keeps bf16 weights and partial sums in bf16; Spore computes in float32 and
      // rounds once, so bf16 bilinear outputs are compared with an absolute bound.
      for (bool ac : {false, true})
        w.add("interpolate", {x}, {ops::interpolate(x, o, InterpolateMode::Bilinear, ac)},
              {{"size", size}, {"mode", std::string("bilinear")}, {"align_corners", ac}},
              {.atol = dt == DType::BFloat16 ? 0.05 : -1});
    }
  Tensor xi = non_contiguous(rand_tensor({1, 2, 3, 4}, DType::Float32, seed++));
  w.add("interpolate", {xi}, {ops::interpolate(xi, {5, 7}, InterpolateMode::Bilinear)},
        {{"size", std::vector<int64_t>{5, 7}}, {"mode", std::string("bilinear")}, {"align_corners", false}});
}

void attention_cases(Writer& w, uint64_t& seed) {
  for (DType dt : kFloatTypes)
    for (int variant = 0; variant < 5; ++variant) {  // plain, causal, bool mask, float mask, scale
      Tensor q = rand_tensor({2, 3, 5, 8}, dt, seed++), k = rand_tensor({2, 3, 7, 8}, dt, seed++);
      Tensor v = rand_tensor({2, 3, 7, 4}, dt, seed++);
      Tensor mask;
      if (variant == 2) {
        mask = rand_tensor({5, 7}, DType::Bool, seed++, Fill::Bool);
        mask = ops::logical_or(mask, ops::greater_equal(ops::unsqueeze(ops::arange(5), 1), ops::unsqueeze(ops::arange(7), 0)));
      }
      if (variant == 3) mask = rand_tensor({3, 5, 7}, dt, seed++);
      const bool causal = variant == 1;
      const double scale = variant == 4 ? 0.3 : -1;
      Tensor y = ops::scaled_dot_product_attention(q, k, v, mask, causal,
                                                   scale > 0 ? std::optional<double>(scale) : std::nullopt);
      w.add("attention", {q, k, v, mask}, {y}, {{"causal", causal}, {"scale", scale}},
            {.rtol = dt == DType::BFloat16 ? 0.05 : -1, .atol = dt == DType::BFloat16 ? 0.05 : -1});
    }
  Tensor q = non_contiguous(rand_tensor({4, 6}, DType::Float32, seed++));
  Tensor k = rand_tensor({6, 4}, DType::Float32, seed++).transpose(0, 1), v = rand_tensor({4, 3}, DType::Float32, seed++);
  w.add("attention", {q, k, v, Tensor()}, {ops::scaled_dot_product_attention(q, k, v, {}, true)},
        {{"causal", true}, {"scale", -1.0}});
}

}  // namespace

SPORE_ORACLE_FAMILY(nn) {
  uint64_t seed = 1000;
  softmax_cases(w, seed);
  layer_norm_cases(w, seed);
  norm_cases(w, seed);
  loss_cases(w, seed);
  index_cases(w, seed);
  attention_cases(w, seed);
}

}  // namespace spore::oracle
