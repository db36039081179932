// SPDX-License-Identifier: Apache-2.0
// softmax and log_softmax. The last axis (or any axis with nothing after it) runs multi-pass
// vectorized row kernels while a row sits in cache (norm_kernels' softmax_rows for float32 and
// float64, with non-temporal stores for large outputs; 16-bit rows are widened to float32 and
// use vec_kernels' softmax_f32). Other axes run a strided kernel that walks blocks of columns
// so every load is contiguous along the inner dims.
#include "prims/softmax.h"

#include <cmath>

#include "backends/cpu/norm_kernels.h"
#include "backends/cpu/vec_kernels.h"
#include "prims/elementwise_infer.h"
#include "prims/norm_decompositions.h"
#include "prims/norm_util.h"

namespace spore::prims {
namespace {

// Outputs above this size are written with non-temporal stores (they would not stay cached).
constexpr int64_t kStreamBytes = int64_t{8} << 20;

template <class T>
void softmax_last(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  const auto& vk = cpu::vec_kernels();
  const bool stream = rows * n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
  runtime::parallel_for(rows, nn::row_grain(n, 8), [&](int64_t b, int64_t e) {
    if constexpr (std::is_same_v<T, float>) {
      cpu::norm_kernels().f32.softmax_rows(x + b * n, y + b * n, e - b, n, log, stream);
    } else if constexpr (std::is_same_v<T, double>) {
      cpu::norm_kernels().f64.softmax_rows(x + b * n, y + b * n, e - b, n, log, stream);
    } else {
      std::vector<float> buf(static_cast<size_t>(n));
      for (int64_t r = b; r < e; ++r) {
        cpu::convert_n(x + r * n, buf.data(), n);
        vk.softmax_f32(buf.data(), buf.data(), n, log);
        cpu::convert_n(buf.data(), y + r * n, n);
      }
    }
  });
}

// Softmax over the middle dim of (outer, n, inner): columns are processed in blocks of kBlock,
// each reduced over n in a fixed order (the result does not depend on how blocks are split);
// exp runs through the vectorized unary loop on one block row at a time.
template <class T>
void softmax_strided(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  using C = compute_t<T>;
  constexpr int64_t kBlock = 256;
  const auto& vk = cpu::vec_kernels();
  const auto exp_loop = [&] {
    if constexpr (std::is_same_v<C, double>) return vk.unary_f64[static_cast<int>(cpu::UnaryOp::exp)];
    else return vk.unary_f32[static_cast<int>(cpu::UnaryOp::exp)];
  }();
  const cpu::UnaryParams up{};
  const int64_t nblocks = (inner + kBlock - 1) / kBlock;
  runtime::parallel_for(outer * nblocks, nn::row_grain(n * kBlock, 8), [&](int64_t b, int64_t e) {
    alignas(64) C mx[kBlock], sum[kBlock], t[kBlock];
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / nblocks, c0 = (item % nblocks) * kBlock;
      const int64_t m = std::min(kBlock, inner - c0);
      const T* xb = x + o * n * inner + c0;
      T* yb = y + o * n * inner + c0;
      for (int64_t j = 0; j < m; ++j) mx[j] = -INFINITY, sum[j] = 0;
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < m; ++j) {
          const C v = static_cast<C>(xb[k * inner + j]);
          mx[j] = (v > mx[j] || std::isnan(v)) ? v : mx[j];
        }
      // An all -inf column: exp gives 0s and the result is NaN, as in PyTorch.
      for (int64_t j = 0; j < m; ++j)
        if (std::isinf(mx[j]) && mx[j] < 0) mx[j] = 0;
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < m; ++j) t[j] = static_cast<C>(xb[k * inner + j]) - mx[j];
        exp_loop(t, t, m, up);
        for (int64_t j = 0; j < m; ++j) sum[j] += t[j];
        if constexpr (!nn::is_16bit<T>) {
          if (!log)  // kept in full precision for the scaling pass
            for (int64_t j = 0; j < m; ++j) yb[k * inner + j] = t[j];
        }
      }
      for (int64_t j = 0; j < m; ++j) sum[j] = log ? mx[j] + std::log(sum[j]) : C(1) / sum[j];
      for (int64_t k = 0; k < n; ++k) {
        T* yr = yb + k * inner;
        const T* xr = xb + k * inner;
        if (log) {
          for (int64_t j = 0; j < m; ++j) yr[j] = static_cast<T>(static_cast<C>(xr[j]) - sum[j]);
        } else if constexpr (nn::is_16bit<T>) {
          for (int64_t j = 0; j < m; ++j) t[j] = static_cast<C>(xr[j]) - mx[j];
          exp_loop(t, t, m, up);
          for (int64_t j = 0; j < m; ++j) yr[j] = static_cast<T>(t[j] * sum[j]);
        } else {
          for (int64_t j = 0; j < m; ++j) yr[j] = yr[j] * sum[j];
        }
      }
    }
  });
}

template <bool Log>
void run_softmax(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const SoftmaxAttrs*>(attrs);
  const Buffer& x = in[0];
  const int ax = static_cast<int>(a.axis);
  const int64_t outer = nn::prod(x, 0, ax), n = x.ndim == 0 ? 1 : x.shape[ax];
  const int64_t inner = nn::prod(x, ax + 1, x.ndim);
  if (outer * n * inner == 0) return;
  nn::Contig cx(x);
  nn::visit_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1) softmax_last<T>(cx.get<T>(), out[0].ptr<T>(), outer, n, Log);
    else softmax_strided<T>(cx.get<T>(), out[0].ptr<T>(), outer, n, inner, Log);
  });
}

const Primitive& define(const char* name, KernelRunFn run, Decomposition decomposition) {
  PrimitiveSpec<SoftmaxAttrs> spec;
  spec.name = name;
  spec.fusion = FusionClass::Reduction;
  spec.num_inputs = 1;
  spec.residuals = {0u, 1u};  // both vjps need only the output
  spec.infer = [](const SoftmaxAttrs& a, std::span<const TensorType> in, OutTypes& out) {
    SPORE_ASSERT(is_floating(in[0].dtype), "softmax on ", dtype_name(in[0].dtype));
    SPORE_ASSERT(a.axis >= 0 && (a.axis < static_cast<int64_t>(in[0].shape.size()) || (a.axis == 0 && in[0].shape.empty())),
                 "softmax axis ", a.axis);
    infer_same(in, out);
  };
  spec.cost = [](const SoftmaxAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    return elementwise_cost(in, out, 16);  // max, exp (~10), sum, scale
  };
  Primitive& p = define_primitive(spec);
  p.decomposition = decomposition;
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu_rows", .run = run});
  return p;
}

const Primitive& softmax_def() {
  static const Primitive& p = define("softmax", &run_softmax<false>, &decompose_softmax);
  return p;
}
const Primitive& log_softmax_def() {
  static const Primitive& p = define("log_softmax", &run_softmax<true>, &decompose_log_softmax);
  return p;
}

[[maybe_unused]] const bool registered = (softmax_def(), log_softmax_def(), true);

}  // namespace

const Primitive& softmax_primitive() { return softmax_def(); }
const Primitive& log_softmax_primitive() { return log_softmax_def(); }

}  // namespace spore::prims
