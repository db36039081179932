// SPDX-License-Identifier: Apache-2.0
// vmap rules of the nn primitives. Where a primitive already has a batch-like dimension the vmap
// batch is folded into it: into M of a matmul with a shared right operand (one GEMM), into N of
// conv, pools and interpolate, into the groups of a conv whose weight is batched, into the
// channels of batch_norm (each lane keeps its own statistics), into N of the losses (reduced per
// lane afterwards). So per-example work runs as a few big ops, not a loop.
#include "prims/batch_norm.h"
#include "prims/batch_norm_grad.h"
#include "prims/conv_weight_grad.h"
#include "prims/conv.h"
#include "prims/group_norm.h"
#include "prims/layer_norm.h"
#include "prims/loss.h"
#include "prims/matmul.h"
#include "prims/rms_norm.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {
namespace {

// (B, d0, d1, rest...) <-> (d0, B, d1, rest...) : the vmap batch next to a channel axis.
Tensor swap01(const Tensor& t) { return ops::transpose(t, 0, 1); }
// (B, N, C, rest...) -> (N, B * C, rest...) and back.
Tensor into_channels(const Tensor& t) {
  Tensor s = swap01(t);
  Shape sh{s.shape()[0], s.shape()[1] * s.shape()[2]};
  for (int64_t i = 3; i < s.dim(); ++i) sh.push_back(s.shape()[i]);
  return ops::reshape(s, sh);
}
Tensor from_channels(const Tensor& t, int64_t batch) {
  Shape sh{t.shape()[0], batch, t.shape()[1] / batch};
  for (int64_t i = 2; i < t.dim(); ++i) sh.push_back(t.shape()[i]);
  return swap01(ops::reshape(t, sh));
}
// A per-channel vector (C) or (B, C) as one (B * C) vector.
Tensor per_channel(const Tensor& t, int axis, int64_t batch) { return ops::reshape(batched(t, axis, batch), {-1}); }

// ---- matmul -----------------------------------------------------------------------------------

bool bias_is_row(const Tensor& bias) {
  for (int64_t i = 0; i + 1 < bias.dim(); ++i)
    if (bias.shape()[i] != 1) return false;
  return true;
}

void matmul(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
            std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const auto& a = *static_cast<const prims::MatmulAttrs*>(attrs);
  const bool has_bias = in.size() == 3;
  // A batched left operand against a shared matrix: every lane's rows are rows of one GEMM.
  if (in_axes[0] >= 0 && in_axes[1] < 0 && in[1].dim() == 2 && !a.trans_a &&
      (!has_bias || (in_axes[2] < 0 && bias_is_row(in[2])))) {
    const Tensor& x = in[0];
    const int64_t K = x.shape()[x.dim() - 1];
    std::vector<Tensor> args{ops::reshape(x, {-1, K}), in[1]};
    if (has_bias) args.push_back(in[2]);
    Tensor y = call(p, attrs, args)[0];
    Shape s = x.shape();
    s[s.size() - 1] = y.shape()[1];
    out = {ops::reshape(y, s)};
    all_batched(out, out_axes);
    return;
  }
  // Otherwise the primitive's own batch dims: align every batched operand's batch axis in front
  // of the broadcast batch dims.
  int64_t rank = 0;
  for (size_t i = 0; i < in.size(); ++i) rank = std::max(rank, example_rank(in[i], in_axes[i]));
  std::vector<Tensor> args(in.begin(), in.end());
  for (size_t i = 0; i < in.size(); ++i)
    if (in_axes[i] >= 0) args[i] = lift(in[i], rank);
  // The output's batch dims come from a and b alone (the bias must broadcast into them): a
  // batched bias with shared a and b gives a a stride-0 batch axis.
  if (in_axes[0] < 0 && in_axes[1] < 0) args[0] = lift(batched(in[0], kNotBatched, batch_size(in, in_axes)), rank);
  out = call(p, attrs, args);
  all_batched(out, out_axes);
}

// ---- conv ---------------------------------------------------------------------------------

// conv (x (N, C, *S), w (O, C/g, *K), bias (O)) and conv_transpose (x, w (C, O/g, *K), bias):
// a shared weight folds the batch into N; a batched weight folds it into the groups:
// x (N, B*C, *S) with weight (B*O, ...) and B*g groups computes every lane's conv at once.
template <class Attrs>
void conv(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
          std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  bool shared = in_axes[1] < 0;
  for (size_t i = 2; i < in.size(); ++i) shared = shared && in_axes[i] < 0;
  if (shared) {
    std::vector<Tensor> args(in.begin(), in.end());
    args[0] = fold(in[0]);
    out = {unfold(call(p, attrs, args)[0], batch)};
    all_batched(out, out_axes);
    return;
  }
  Attrs a = *static_cast<const Attrs*>(attrs);
  a.groups *= batch;
  std::vector<Tensor> args{into_channels(batched(in[0], in_axes[0], batch)), fold(batched(in[1], in_axes[1], batch))};
  if (in.size() == 3) args.push_back(per_channel(in[2], in_axes[2], batch));
  out = {from_channels(call(p, &a, args)[0], batch)};
  all_batched(out, out_axes);
}

// pool2d (1 or 2 outputs), adaptive_avg_pool2d, interpolate: x (N, C, H, W) only.
void fold_into_n(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                 std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = in[0].shape()[0];
  out = call(p, attrs, std::vector<Tensor>{fold(in[0])});
  for (Tensor& t : out) t = unfold(t, batch);
  all_batched(out, out_axes);
}

// ---- norms ----------------------------------------------------------------------------------

// batch_norm (x (N, C, *), weight, bias, running mean, running var): the batch joins the
// channels, so each lane is normalized with its own statistics; outputs 1 and 2 are (B, C).
void batch_norm(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  std::vector<Tensor> args{into_channels(batched(in[0], in_axes[0], batch))};
  for (size_t i = 1; i < in.size(); ++i) args.push_back(per_channel(in[i], in_axes[i], batch));
  out = call(p, attrs, args);
  out[0] = from_channels(out[0], batch);
  for (size_t j = 1; j < out.size(); ++j) out[j] = ops::reshape(out[j], {batch, -1});
  all_batched(out, out_axes);
}

// conv_weight_grad: lanes become groups. x (B, N, C, *S) -> (N, B*C, *S) and dy likewise, with
// B times the groups, gives (B*O, C/groups, *K): lane b's channels form groups of their own.
void conv_weight_grad(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                      std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  prims::ConvWeightGradAttrs a = *static_cast<const prims::ConvWeightGradAttrs*>(attrs);
  a.groups *= batch;
  const Tensor x = into_channels(batched(in[0], in_axes[0], batch)), dy = into_channels(batched(in[1], in_axes[1], batch));
  Tensor w = runtime::call(p, a, {x, dy});
  Shape s{batch, w.shape()[0] / batch};
  for (int64_t i = 1; i < w.dim(); ++i) s.push_back(w.shape()[i]);
  out = {ops::reshape(w, s)};
  all_batched(out, out_axes);
}

// batch_norm_grad as batch_norm: dy and x with the batch folded into the channels, the
// statistics and the weight per (lane, channel).
void batch_norm_grad(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                     std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  std::vector<Tensor> args{into_channels(batched(in[0], in_axes[0], batch)), into_channels(batched(in[1], in_axes[1], batch))};
  for (size_t i = 2; i < in.size(); ++i) args.push_back(per_channel(in[i], in_axes[i], batch));
  out = call(p, attrs, args);
  out[0] = from_channels(out[0], batch);
  for (size_t j = 1; j < out.size(); ++j) out[j] = ops::reshape(out[j], {batch, -1});
  all_batched(out, out_axes);
}

// y * weight + bias for a batched weight or bias, each lifted to y's per-example rank.
Tensor affine(Tensor y, const Tensor& w, int w_axis, const Tensor& b, int b_axis) {
  const int64_t rank = y.dim() - 1;
  if (w.defined()) y = y * (w_axis >= 0 ? lift(w, rank) : w);
  if (b.defined()) y = y + (b_axis >= 0 ? lift(b, rank) : b);
  return y;
}

// layer_norm and rms_norm normalize the trailing dims from `axis`: the batch goes in front. A
// batched weight or bias is applied after normalizing without it.
template <class Attrs>
void trailing_norm(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                   std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  Attrs a = *static_cast<const Attrs*>(attrs);
  a.axis += 1;
  const Tensor x = batched(in[0], in_axes[0], batch);
  bool params_batched = false;
  for (size_t i = 1; i < in.size(); ++i) params_batched = params_batched || in_axes[i] >= 0;
  if (!params_batched) {
    std::vector<Tensor> args(in.begin(), in.end());
    args[0] = x;
    out = call(p, &a, args);
    all_batched(out, out_axes);
    return;
  }
  Tensor w, b;
  int wa = kNotBatched, ba = kNotBatched;
  size_t k = 1;
  if (a.has_weight) wa = in_axes[k], w = in[k++];
  if constexpr (requires(Attrs t) { t.has_bias; }) {
    if (a.has_bias) ba = in_axes[k], b = in[k++];
    a.has_bias = false;
  }
  a.has_weight = false;
  out = call(p, &a, std::vector<Tensor>{x});
  out[0] = affine(out[0], w, wa, b, ba);
  all_batched(out, out_axes);
}

// group_norm (x (N, C, *), weight, bias (C)): per-sample statistics, so the batch folds into N.
void group_norm(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const int64_t batch = batch_size(in, in_axes);
  prims::GroupNormAttrs a = *static_cast<const prims::GroupNormAttrs*>(attrs);
  const Tensor x = batched(in[0], in_axes[0], batch);
  bool params_batched = false;
  for (size_t i = 1; i < in.size(); ++i) params_batched = params_batched || in_axes[i] >= 0;
  std::vector<Tensor> args{fold(x)};
  if (!params_batched) {
    for (size_t i = 1; i < in.size(); ++i) args.push_back(in[i]);
    out = call(p, &a, args);
    for (Tensor& t : out) t = unfold(t, batch);
    all_batched(out, out_axes);
    return;
  }
  // A per-channel parameter as (B or 1, 1, C, 1, ...) against y (B, N, C, *).
  auto channel = [&](const Tensor& t, int axis) {
    Shape s{axis >= 0 ? batch : 1, 1, x.shape()[2]};
    for (int64_t i = 3; i < x.dim(); ++i) s.push_back(1);
    return ops::reshape(t, s);
  };
  size_t k = 1;
  Tensor w, b;
  if (a.has_weight) w = channel(in[k], in_axes[k]), ++k;
  if (a.has_bias) b = channel(in[k], in_axes[k]), ++k;
  a.has_weight = a.has_bias = false;
  out = call(p, &a, args);
  for (Tensor& t : out) t = unfold(t, batch);
  if (w.defined()) out[0] = out[0] * w;
  if (b.defined()) out[0] = out[0] + b;
  all_batched(out, out_axes);
}

// ---- losses ---------------------------------------------------------------------------------

// nll_loss (lp (N, C, d...) or (C), target (N, d...) or (), weight (C)) and soft_nll_loss (lp,
// target probabilities of lp's shape, weight): the batch folds into N (a (C) lane becomes a row
// of (B, C)), the primitive gives per-element losses, and each lane is reduced on its own. Every
// per-element term is linear in w[c] * lp[c], so a per-lane class weight (B, C) is multiplied
// into lp and the primitive runs unweighted.
template <class Attrs, bool kSoft>
void loss(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
          std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const Attrs& at = *static_cast<const Attrs*>(attrs);
  const int64_t batch = batch_size(in, in_axes);
  Tensor lp = batched(in[0], in_axes[0], batch);
  const Tensor target = batched(in[1], in_axes[1], batch);
  const bool vector_lane = lp.dim() == 2;  // each lane is one (C) row
  const Dim C = lp.shape()[vector_lane ? 1 : 2];
  Attrs a = at;
  a.reduction = prims::LossReduction::None;
  const bool lane_weight = at.has_weight && in_axes[2] >= 0;
  if (lane_weight) {
    Shape ws = vector_lane ? Shape{batch, C} : Shape{batch, 1, C};
    for (int64_t d = 3; d < lp.dim(); ++d) ws.push_back(1);
    lp = lp * ops::reshape(in[2], ws);
    a.has_weight = false;
  }
  std::vector<Tensor> args{vector_lane ? lp : fold(lp), vector_lane ? target : fold(target)};
  if (a.has_weight) args.push_back(in[2]);
  Tensor l = call(p, &a, args)[0];
  if (!vector_lane) l = unfold(l, batch);
  if (at.reduction == prims::LossReduction::None) {
    out = {l};
    all_batched(out, out_axes);
    return;
  }
  ops::Axes lane_axes;
  for (int64_t d = 1; d < l.dim(); ++d) lane_axes.push_back(d);
  auto lane_sum = [&](const Tensor& t) { return lane_axes.empty() ? t : ops::sum(t, lane_axes); };
  Tensor total = lane_sum(l);
  if (at.reduction == prims::LossReduction::Mean) {
    if constexpr (kSoft) {
      // soft_nll_loss's mean divides by the number of per-element terms.
      int64_t n = 1;
      for (int64_t d = 1; d < l.dim(); ++d) n *= l.shape()[d];
      total = total / static_cast<double>(n);
    } else {
      // nll_loss's mean divides by the total class weight of the targets it counts.
      const Tensor keep = ops::not_equal(target, ops::scalar_tensor(at.ignore_index, DType::Int64));
      Tensor wt = keep.to(l.dtype());
      if (at.has_weight) {
        const Tensor safe = ops::where(keep, target, ops::zeros_like(target));
        Tensor picked;
        if (lane_weight) {
          // w[b, t] as rows of one (B * C, 1) table, lane b's targets offset by b * C.
          Shape lane{batch};
          for (int64_t d = 1; d < safe.dim(); ++d) lane.push_back(1);
          const Tensor offset = ops::reshape(ops::arange(0, batch * C, C), lane);
          picked = ops::embedding(ops::reshape(in[2], {batch * C, 1}), safe + offset);
        } else {
          picked = ops::index_select(in[2], 0, ops::reshape(safe, {-1}));
        }
        wt = wt * ops::reshape(picked, safe.shape()).to(l.dtype());
      }
      total = total / lane_sum(wt);
    }
  }
  out = {total};
  all_batched(out, out_axes);
}

}  // namespace

void install_nn_vmap_rules() {
  def_vmap(prims::matmul_primitive(), &matmul);
  def_vmap(prims::conv_primitive(), &conv<prims::ConvAttrs>);
  def_vmap(prims::conv_transpose_primitive(), &conv<prims::ConvTransposeAttrs>);
  for (const char* name : {"pool2d", "adaptive_avg_pool2d", "interpolate"}) def_vmap(name, &fold_into_n);
  def_vmap(prims::batch_norm_primitive(), &batch_norm);
  def_vmap(prims::batch_norm_grad_primitive(), &batch_norm_grad);
  def_vmap(prims::conv_weight_grad_primitive(), &conv_weight_grad);
  def_vmap(prims::layer_norm_primitive(), &trailing_norm<prims::LayerNormAttrs>);
  def_vmap(prims::rms_norm_primitive(), &trailing_norm<prims::RmsNormAttrs>);
  def_vmap(prims::group_norm_primitive(), &group_norm);
  def_vmap(prims::nll_loss_primitive(), &loss<prims::NllLossAttrs, false>);
  def_vmap(prims::soft_nll_loss_primitive(), &loss<prims::SoftNllLossAttrs, true>);
}

}  // namespace spore::transforms::vmap_rules
