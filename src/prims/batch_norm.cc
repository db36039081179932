// SPDX-License-Identifier: Apache-2.0
// Batch norm over x (N, C, *): training reduces each channel over N rows of HW contiguous
// values (row sums in the compute type, combined across rows in float64 in row order, so the
// result is independent of threads); then every (n, c) row is (x - mean) * a + bias with a = rstd * w.
// Inference with channels-last x and y (plans) runs batch_norm_channels_last.cc.
#include "prims/batch_norm.h"

#include <cmath>

#include "backends/cpu/norm_kernels.h"
#include "prims/batch_norm_channels_last.h"
#include "prims/elementwise_infer.h"
#include "prims/norm_decompositions.h"
#include "prims/layer_norm.h"
#include "prims/norm_util.h"

namespace spore::prims {
namespace {

// Per-channel mean and biased variance of the batch (two passes).
template <class T>
void batch_stats(const T* x, int64_t N, int64_t C, int64_t HW, compute_t<T>* mean, compute_t<T>* var) {
  using Cm = compute_t<T>;
  const auto& nk = cpu::norm_rows<Cm>();
  const double count = static_cast<double>(N * HW);
  runtime::parallel_for(C, nn::row_grain(N * HW, 4), [&](int64_t cb, int64_t ce) {
    std::vector<Cm> buf(nn::is_16bit<T> ? static_cast<size_t>(HW) : 0);
    auto row = [&](int64_t n, int64_t c) { return nn::compute_row(x + (n * C + c) * HW, HW, buf); };
    for (int64_t c = cb; c < ce; ++c) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n) s += nk.sum(row(n, c), HW);
      const Cm mu = static_cast<Cm>(s / count);
      double m2 = 0;
      for (int64_t n = 0; n < N; ++n) m2 += nk.sum_sq_dev(row(n, c), HW, mu);
      mean[c] = mu;
      var[c] = static_cast<Cm>(m2 / count);
    }
  });
}

template <class T>
void batch_norm_typed(const BatchNormAttrs& a, std::span<const Buffer> in, const T* x, T* y, int64_t N, int64_t C,
                      int64_t HW, compute_t<T>* mean, compute_t<T>* var) {
  using Cm = compute_t<T>;
  int k = 1;
  const Buffer* wb = a.has_weight ? &in[k++] : nullptr;
  const Buffer* bb = a.has_bias ? &in[k++] : nullptr;
  const std::vector<Cm> w = nn::load_vector<T>(wb), b = nn::load_vector<T>(bb);
  if (a.training) {
    batch_stats<T>(x, N, C, HW, mean, var);
  } else {
    const std::vector<Cm> rm = nn::load_vector<T>(&in[k]), rv = nn::load_vector<T>(&in[k + 1]);
    std::copy(rm.begin(), rm.end(), mean);
    std::copy(rv.begin(), rv.end(), var);
  }
  std::vector<Cm> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    const Cm invstd = Cm(1) / std::sqrt(var[c] + static_cast<Cm>(a.eps));
    scale[c] = invstd * (w.empty() ? Cm(1) : w[c]);
    shift[c] = b.empty() ? Cm(0) : b[c];
  }
  const auto& nk = cpu::norm_rows<Cm>();
  runtime::parallel_for(N * C, nn::row_grain(HW, 2), [&](int64_t rb, int64_t re) {
    std::vector<Cm> buf(nn::is_16bit<T> ? static_cast<size_t>(HW) : 0);
    for (int64_t r = rb; r < re; ++r) {
      const int64_t c = r % C;
      if constexpr (nn::is_16bit<T>) {
        cpu::convert_n(x + r * HW, buf.data(), HW);
        nk.scale_shift(buf.data(), buf.data(), HW, mean[c], scale[c], shift[c]);
        cpu::convert_n(buf.data(), y + r * HW, HW);
      } else {
        nk.scale_shift(x + r * HW, y + r * HW, HW, mean[c], scale[c], shift[c]);
      }
    }
  });
}

void run_batch_norm(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const BatchNormAttrs*>(attrs);
  const Buffer& x = in[0];
  if (!a.training && (x.dtype == DType::Float32 || x.dtype == DType::Float64) && stored_channels_last(x) &&
      stored_channels_last(out[0]))
    return batch_norm_channels_last(a, in, out);
  const int64_t N = x.shape[0], C = x.shape[1], HW = nn::prod(x, 2, x.ndim);
  nn::Contig cx(x);
  // A plan may hand a strided result (a channels-last y of a plain x): computed in a block, copied.
  std::vector<char> tmp(out[0].contiguous() ? 0 : static_cast<size_t>(out[0].numel()) * dtype_size(x.dtype));
  void* y = out[0].contiguous() ? out[0].data : tmp.data();
  nn::visit_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Cm = compute_t<T>;
    batch_norm_typed<T>(a, in, cx.get<T>(), static_cast<T*>(y), N, C, HW, out[1].ptr<Cm>(), out[2].ptr<Cm>());
  });
  if (!tmp.empty()) nn::copy_into(tmp.data(), out[0]);
}

// Inference (the running statistics: one pass, y = (x - mean) * a + b per channel) with x and y
// channels-last, float32/float64: a plan's conv chain at level 1, where no pass folds the batch
// norm into the conv, stays channels-last through it. Training keeps NCHW: there its per-plane
// reductions are faster than rows of channels, and oneDNN's backward-weights kernels here are
// faster on blocked NCHW than on nhwc (15 vs 13 ms for ResNet-18's 64-channel layers), which
// outweighs the reorders a channels-last training step saves (bench/RESULTS.md).
bool takes_channels_last(const void* attrs, std::span<const TensorType> in, int input) {
  return !static_cast<const BatchNormAttrs*>(attrs)->training &&
         (in[0].dtype == DType::Float32 || in[0].dtype == DType::Float64) && in[0].shape.size() >= 3 && input <= 0;
}

const Primitive& batch_norm_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<BatchNormAttrs> spec;
    spec.name = "batch_norm";
    spec.fusion = FusionClass::Reduction;
    spec.residuals = {0b111u, 0b110u};
    spec.infer = [](const BatchNormAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      const Shape& s = in[0].shape;
      SPORE_ASSERT(s.size() >= 2, "batch_norm rank ", s.size());
      SPORE_ASSERT(in.size() == 1u + a.has_weight + a.has_bias + 2 * a.has_running, "batch_norm inputs");
      SPORE_ASSERT(a.training || a.has_running, "batch_norm inference without running statistics");
      out.add(in[0].dtype, s);
      out.add(stats_dtype(in[0].dtype), Shape{s[1]});
      out.add(stats_dtype(in[0].dtype), Shape{s[1]});
    };
    spec.cost = [](const BatchNormAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return elementwise_cost(in.first(1), out.first(1), 6);
    };
    Primitive& q = define_primitive(spec);
    q.decomposition = &decompose_batch_norm;
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu_rows", .run = &run_batch_norm,
                  .takes_channels_last = &takes_channels_last});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (batch_norm_def(), true);

}  // namespace

const Primitive& batch_norm_primitive() { return batch_norm_def(); }

}  // namespace spore::prims
