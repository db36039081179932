// SPDX-License-Identifier: Apache-2.0
// nll_loss (class indices, optional label smoothing) and soft_nll_loss (class probabilities).
// Per-element terms are computed in float64; sums run over fixed chunks of elements combined in
// chunk order, so results do not depend on the thread count.
#include "prims/loss.h"
#include "prims/elementwise_infer.h"

#include <cmath>
#include <limits>

#include "prims/norm_util.h"

namespace spore::prims {
namespace {

constexpr int64_t kChunk = 2048;

// Geometry of (N, C, D) for an input (N, C, d...) or (C).
struct Geo {
  int64_t N = 1, C = 1, D = 1;
};
Geo geometry(const Buffer& lp) {
  if (lp.ndim == 1) return {1, lp.shape[0], 1};
  return {lp.shape[0], lp.shape[1], nn::prod(lp, 2, lp.ndim)};
}

// Sums per-chunk partial results in chunk order; `f(begin, end, part)` fills part[0..k).
template <int K, class F>
std::array<double, K> chunked_sum(int64_t n, int64_t cost, F&& f) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::array<double, K>> parts(static_cast<size_t>(chunks));
  runtime::parallel_items(chunks, kChunk * cost, [&](int64_t i) {
    parts[i].fill(0.0);
    f(i * kChunk, std::min(n, (i + 1) * kChunk), parts[i].data());
  });
  std::array<double, K> total{};
  for (const auto& p : parts)
    for (int k = 0; k < K; ++k) total[k] += p[k];
  return total;
}

template <class T>
void store_scalar(const Buffer& out, double v) {
  *out.ptr<T>() = static_cast<T>(static_cast<compute_t<T>>(v));
}

// Reads every log-probability once (and the targets), one multiply-add each.
Cost loss_cost(std::span<const TensorType> in, std::span<const TensorType> out) {
  const double n = cost_numel(in[0].shape);
  double bytes = n * dtype_size(in[0].dtype);
  for (size_t i = 1; i < in.size(); ++i) {
    const double m = cost_numel(in[i].shape);
    bytes += m * dtype_size(in[i].dtype);
  }
  return {2 * n, bytes + dtype_size(out[0].dtype)};
}

void run_nll(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const NllLossAttrs*>(attrs);
  const Geo g = geometry(in[0]);
  const int64_t n = g.N * g.D;
  nn::Contig clp(in[0]), ct(in[1]);
  const int64_t* tg = ct.get<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    SPORE_CHECK(tg[i] == a.ignore_index || (tg[i] >= 0 && tg[i] < g.C), "[",
                a.cross_entropy ? "cross_entropy" : "nll_loss", "] target ", tg[i],
                " at flat position ", i, " is out of range for ", g.C, " classes; targets must be in [0, ", g.C,
                ") or equal ignore_index (", a.ignore_index, ")");
  nn::visit_float(in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* lp = clp.get<T>();
    std::vector<double> w(static_cast<size_t>(g.C), 1.0);
    if (a.has_weight) {
      auto wv = nn::load_vector<T>(&in[2]);
      for (int64_t c = 0; c < g.C; ++c) w[c] = wv[c];
    }
    const double ls = a.label_smoothing;
    auto term = [&](int64_t i, double& wt) {
      const int64_t nn_ = i / g.D, d = i % g.D, t = tg[i];
      if (t == a.ignore_index) {
        wt = 0;
        return 0.0;
      }
      const T* base = lp + nn_ * g.C * g.D + d;
      wt = w[t];
      double loss = -wt * static_cast<double>(static_cast<compute_t<T>>(base[t * g.D]));
      if (ls > 0) {
        double smooth = 0;
        for (int64_t c = 0; c < g.C; ++c) smooth -= static_cast<double>(static_cast<compute_t<T>>(base[c * g.D])) * w[c];
        loss = (1 - ls) * loss + ls / static_cast<double>(g.C) * smooth;
      }
      return loss;
    };
    const int64_t cost = ls > 0 ? g.C : 1;
    if (a.reduction == LossReduction::None) {
      T* y = out[0].ptr<T>();
      runtime::parallel_for(n, nn::row_grain(cost), [&](int64_t b, int64_t e) {
        double wt;
        for (int64_t i = b; i < e; ++i) y[i] = static_cast<T>(static_cast<compute_t<T>>(term(i, wt)));
      });
      return;
    }
    auto tot = chunked_sum<2>(n, cost, [&](int64_t b, int64_t e, double* part) {
      for (int64_t i = b; i < e; ++i) {
        double wt;
        part[0] += term(i, wt);
        part[1] += wt;
      }
    });
    // Mean divides by the total weight of the counted targets (NaN when there are none).
    store_scalar<T>(out[0], a.reduction == LossReduction::Sum ? tot[0] : tot[0] / tot[1]);
  });
}

void run_soft_nll(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const SoftNllLossAttrs*>(attrs);
  const Geo g = geometry(in[0]);
  const int64_t n = g.N * g.D;
  nn::Contig clp(in[0]), ct(in[1]);
  nn::visit_float(in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* lp = clp.get<T>();
    const T* tp = ct.get<T>();
    std::vector<double> w(static_cast<size_t>(g.C), 1.0);
    if (a.has_weight) {
      auto wv = nn::load_vector<T>(&in[2]);
      for (int64_t c = 0; c < g.C; ++c) w[c] = wv[c];
    }
    const double ls = a.label_smoothing, share = ls / static_cast<double>(g.C);
    auto term = [&](int64_t i) {
      const int64_t off = (i / g.D) * g.C * g.D + i % g.D;
      double s = 0;
      for (int64_t c = 0; c < g.C; ++c) {
        const double t = static_cast<double>(static_cast<compute_t<T>>(tp[off + c * g.D])) * (1 - ls) + share;
        s -= static_cast<double>(static_cast<compute_t<T>>(lp[off + c * g.D])) * t * w[c];
      }
      return s;
    };
    if (a.reduction == LossReduction::None) {
      T* y = out[0].ptr<T>();
      runtime::parallel_for(n, nn::row_grain(g.C), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = static_cast<T>(static_cast<compute_t<T>>(term(i)));
      });
      return;
    }
    auto tot = chunked_sum<1>(n, g.C, [&](int64_t b, int64_t e, double* part) {
      for (int64_t i = b; i < e; ++i) part[0] += term(i);
    });
    const double v = a.reduction == LossReduction::Sum ? tot[0]
                     : n == 0 ? std::numeric_limits<double>::quiet_NaN()
                              : tot[0] / static_cast<double>(n);
    store_scalar<T>(out[0], v);
  });
}

// Output of both losses: the target's batch shape (None) or a 0-d tensor.
void infer_loss(LossReduction r, std::span<const TensorType> in, OutTypes& out) {
  if (r != LossReduction::None) {
    out.add(in[0].dtype, Shape{});
    return;
  }
  const Shape& s = in[0].shape;
  Shape o;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != (s.size() == 1 ? 0u : 1u)) o.push_back(s[i]);
  out.add(in[0].dtype, o);
}

const Primitive& nll_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<NllLossAttrs> spec;
    spec.name = "nll_loss";
    spec.residuals = {0b111u, 0u};
    spec.infer = [](const NllLossAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      SPORE_ASSERT(in.size() == 2u + a.has_weight && in[1].dtype == DType::Int64, "nll_loss inputs");
      infer_loss(a.reduction, in, out);
    };
    spec.cost = [](const NllLossAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return loss_cost(in, out);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run_nll});
    return q;
  }();
  return p;
}

const Primitive& soft_nll_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<SoftNllLossAttrs> spec;
    spec.name = "soft_nll_loss";
    spec.residuals = {0b111u, 0u};
    spec.infer = [](const SoftNllLossAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      SPORE_ASSERT(in.size() == 2u + a.has_weight && in[0].shape == in[1].shape, "soft_nll_loss inputs");
      infer_loss(a.reduction, in, out);
    };
    spec.cost = [](const SoftNllLossAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return loss_cost(in, out);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run_soft_nll});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (nll_def(), soft_nll_def(), true);

}  // namespace

const Primitive& nll_loss_primitive() { return nll_def(); }
const Primitive& soft_nll_loss_primitive() { return soft_nll_def(); }

}  // namespace spore::prims
