// SPDX-License-Identifier: Apache-2.0
#include "spore/nn/attention.h"

#include <cmath>

#include "spore/nn/init.h"
#include "spore/ops.h"

namespace spore::nn {

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout, bool bias, bool batch_first)
    : Cell("MultiheadAttention"),
      embed_dim_(embed_dim),
      num_heads_(num_heads),
      dropout_(dropout),
      batch_first_(batch_first) {
  SPORE_CHECK(embed_dim > 0 && num_heads > 0 && embed_dim % num_heads == 0, "[MultiheadAttention] embed_dim ",
              embed_dim, " must be a positive multiple of num_heads ", num_heads);
  SPORE_CHECK(dropout >= 0 && dropout < 1, "[MultiheadAttention] dropout must be in [0, 1), got ", dropout);
  in_proj_weight = init::xavier_uniform({3 * embed_dim, embed_dim});
  register_parameter("in_proj_weight", &in_proj_weight);
  if (bias) {
    in_proj_bias = init::zeros({3 * embed_dim});
    register_parameter("in_proj_bias", &in_proj_bias);
  }
  out_proj = std::make_unique<Dense>(embed_dim, embed_dim, bias);
  if (bias) out_proj->bias = init::zeros({embed_dim});  // PyTorch zeroes it; the slot keeps its address
  register_cell("out_proj", out_proj.get());
}

// The constructor's order: in_proj's draw, then out_proj's own two (its bias's drawn and
// then zeroed), so the generator ends where it ended after construction.
void MultiheadAttention::reset_own() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) init::zeros_(in_proj_bias);
  reset_child(*out_proj);
  if (out_proj->bias.defined()) init::zeros_(out_proj->bias);
}

namespace {

// An additive float mask (or a bool mask, true = masked out) as a float mask broadcastable to
// (N, H, L, S); -inf where masked.
Tensor additive(const Tensor& m, DType dtype) {
  if (m.dtype() == DType::Bool) return ops::masked_fill(ops::zeros(m.shape(), {dtype}), m, -INFINITY);
  SPORE_CHECK(is_floating(m.dtype()), "[MultiheadAttention] masks must be bool or floating, got ", dtype_name(m.dtype()));
  return m.to(dtype);
}

}  // namespace

Tensor MultiheadAttention::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const Tensor& attn_mask, const Tensor& key_padding_mask, bool is_causal) {
  const int64_t E = embed_dim_, H = num_heads_, D = E / H;
  SPORE_CHECK(query.dim() == key.dim() && key.dim() == value.dim() && (query.dim() == 2 || query.dim() == 3),
              "[MultiheadAttention] query, key and value must all be 3-D (batched) or 2-D (unbatched), got ",
              shape_str(query.shape()), ", ", shape_str(key.shape()), ", ", shape_str(value.shape()));
  for (const Tensor* t : {&query, &key, &value})
    SPORE_CHECK(t->size(-1) == E, "[MultiheadAttention] inputs need embed_dim ", E, " on the last axis, got ",
                shape_str(t->shape()));
  const bool unbatched = query.dim() == 2;
  // Work batch-first: (N, L, E).
  auto bf = [&](const Tensor& t) { return unbatched ? t.unsqueeze(0) : batch_first_ ? t : t.transpose(0, 1); };
  const Tensor q = bf(query), k = bf(key), v = bf(value);
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  SPORE_CHECK(k.size(0) == N && v.size(0) == N && v.size(1) == S, "[MultiheadAttention] key and value must share the "
              "query's batch and each other's length");
  const auto w = ops::split(in_proj_weight, {E, E, E}, 0);
  std::vector<Tensor> b(3);
  if (in_proj_bias.defined()) b = ops::split(in_proj_bias, {E, E, E}, 0);
  auto proj = [&](const Tensor& x, int i, int64_t len) {
    Tensor y = ops::matmul(x, w[i].transpose(0, 1));
    if (b[i].defined()) y = y + b[i];
    return y.reshape({N, len, H, D}).transpose(1, 2);  // (N, H, len, D)
  };
  const Tensor qh = proj(q, 0, L), kh = proj(k, 1, S), vh = proj(v, 2, S);

  Tensor mask;
  if (attn_mask.defined()) {
    SPORE_CHECK((attn_mask.dim() == 2 && attn_mask.size(0) == L && attn_mask.size(1) == S) ||
                    (attn_mask.dim() == 3 && attn_mask.size(0) == N * H && attn_mask.size(1) == L && attn_mask.size(2) == S),
                "[MultiheadAttention] attn_mask has shape ", shape_str(attn_mask.shape()), "; expected (", L, ", ", S,
                ") or (", N * H, ", ", L, ", ", S, ")");
    mask = additive(attn_mask, qh.dtype());
    if (mask.dim() == 3) mask = mask.reshape({N, H, L, S});
  }
  if (key_padding_mask.defined()) {
    const Tensor kpm = unbatched ? key_padding_mask.unsqueeze(0) : key_padding_mask;
    SPORE_CHECK(kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == S, "[MultiheadAttention] key_padding_mask has shape ",
                shape_str(key_padding_mask.shape()), "; expected (", N, ", ", S, ")");
    const Tensor m = additive(kpm, qh.dtype()).reshape({N, 1, 1, S});
    mask = mask.defined() ? mask + m : m;
  }
  Tensor out;
  if (is_training() && dropout_ > 0) {
    // Dropout on the attention weights needs them explicitly.
    Tensor s = ops::matmul(qh, kh.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(D)));
    if (is_causal) s = ops::masked_fill(s, ops::logical_not(ops::tril(ops::ones({L, S}, {DType::Bool}))), -INFINITY);
    if (mask.defined()) s = s + mask;
    out = ops::matmul(ops::dropout(ops::softmax(s, -1), dropout_, true), vh);
  } else {
    out = ops::scaled_dot_product_attention(qh, kh, vh, mask, is_causal);
  }
  out = (*out_proj)(out.transpose(1, 2).reshape({N, L, E}));
  return unbatched ? out.squeeze(0) : batch_first_ ? out : out.transpose(0, 1);
}

}  // namespace spore::nn
