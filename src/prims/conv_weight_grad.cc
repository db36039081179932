// SPDX-License-Identifier: Apache-2.0
// conv_weight_grad: type inference and the plain C++ reference kernel. oneDNN kernel (its
// backward-weights primitive): src/backends/cpu/onednn_conv.cc.
#include "prims/conv_weight_grad.h"

#include <algorithm>

#include "runtime/parallel.h"

namespace spore::prims {
namespace {

void infer(const ConvWeightGradAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  SPORE_CHECK(in.size() == 2, "[conv_weight_grad] takes x and dy, got ", in.size(), " inputs");
  const Shape &x = in[0].shape, &dy = in[1].shape;
  SPORE_CHECK(x.size() >= 3 && x.size() <= 5 && dy.size() == x.size(), "[conv_weight_grad] needs x (N, C, *spatial) ",
              "and dy of the same rank with 1-3 spatial dims, got x ", shape_str(x), " and dy ", shape_str(dy));
  const size_t nsp = x.size() - 2;
  for (size_t s : {a.stride.size(), a.pad_l.size(), a.pad_r.size(), a.dilation.size(), a.kernel.size()})
    SPORE_CHECK(s == nsp, "[conv_weight_grad] attribute lists need ", nsp, " entries, got ", s);
  SPORE_CHECK(in[0].dtype == in[1].dtype && is_floating(in[0].dtype), "[conv_weight_grad] x and dy must share a ",
              "floating dtype, got ", dtype_name(in[0].dtype), " and ", dtype_name(in[1].dtype));
  SPORE_CHECK(a.groups >= 1 && x[1] % a.groups == 0 && dy[1] % a.groups == 0 && x[0] == dy[0],
              "[conv_weight_grad] x ", shape_str(x), " and dy ", shape_str(dy), " do not fit groups=", a.groups);
  for (size_t i = 0; i < nsp; ++i) {
    const Dim q = dim_add(dim_floordiv(dim_sub(dim_add(x[i + 2], a.pad_l[i] + a.pad_r[i]),
                                               a.dilation[i] * (a.kernel[i] - 1) + 1),
                                       a.stride[i]),
                          1);
    SPORE_CHECK(is_symbolic(q) || is_symbolic(dy[i + 2]) || q == dy[i + 2], "[conv_weight_grad] dy ", shape_str(dy),
                " is not the output of a conv of x ", shape_str(x), " with kernel size ", a.kernel[i]);
  }
  Shape s = {dy[1], x[1] / a.groups};
  for (int64_t k : a.kernel) s.push_back(k);
  out.add(in[0].dtype, std::move(s));
}

template <class T>
void typed(const ConvWeightGradAttrs& a, std::span<const Buffer> in, const Buffer& out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Buffer &x = in[0], &dy = in[1];
  const int nsp = x.ndim - 2, off = 3 - nsp;
  // Up to 3 spatial dims, padded to exactly 3 with leading 1s so one loop nest serves all.
  int64_t S[3] = {1, 1, 1}, Q[3] = {1, 1, 1}, K[3] = {1, 1, 1}, st[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int64_t xs[3] = {0, 0, 0}, ys[3] = {0, 0, 0}, ws[3] = {0, 0, 0};
  for (int i = 0; i < nsp; ++i) {
    S[off + i] = x.shape[i + 2], Q[off + i] = dy.shape[i + 2], K[off + i] = a.kernel[static_cast<size_t>(i)];
    st[off + i] = a.stride[static_cast<size_t>(i)], p[off + i] = a.pad_l[static_cast<size_t>(i)];
    d[off + i] = a.dilation[static_cast<size_t>(i)];
    xs[off + i] = x.strides[i + 2], ys[off + i] = dy.strides[i + 2], ws[off + i] = out.strides[i + 2];
  }
  const int64_t N = x.shape[0], Cg = x.shape[1] / a.groups, O = dy.shape[1], Og = O / a.groups;
  const T *X = x.ptr<T>(), *DY = dy.ptr<T>();
  T* W = out.ptr<T>();
  const int64_t per = N * Q[0] * Q[1] * Q[2] * K[0] * K[1] * K[2];
  runtime::parallel_items(O * Cg, per, [&](int64_t item) {
    const int64_t o = item / Cg, c = item % Cg, cx = (o / Og) * Cg + c;
    for (int64_t k0 = 0; k0 < K[0]; ++k0)
      for (int64_t k1 = 0; k1 < K[1]; ++k1)
        for (int64_t k2 = 0; k2 < K[2]; ++k2) {
          A acc = 0;
          for (int64_t n = 0; n < N; ++n) {
            const T* xp = X + n * x.strides[0] + cx * x.strides[1];
            const T* yp = DY + n * dy.strides[0] + o * dy.strides[1];
            for (int64_t q0 = 0; q0 < Q[0]; ++q0) {
              const int64_t i0 = q0 * st[0] + k0 * d[0] - p[0];
              if (i0 < 0 || i0 >= S[0]) continue;
              for (int64_t q1 = 0; q1 < Q[1]; ++q1) {
                const int64_t i1 = q1 * st[1] + k1 * d[1] - p[1];
                if (i1 < 0 || i1 >= S[1]) continue;
                for (int64_t q2 = 0; q2 < Q[2]; ++q2) {
                  const int64_t i2 = q2 * st[2] + k2 * d[2] - p[2];
                  if (i2 < 0 || i2 >= S[2]) continue;
                  acc += static_cast<A>(xp[i0 * xs[0] + i1 * xs[1] + i2 * xs[2]]) *
                         static_cast<A>(yp[q0 * ys[0] + q1 * ys[1] + q2 * ys[2]]);
                }
              }
            }
          }
          W[o * out.strides[0] + c * out.strides[1] + k0 * ws[0] + k1 * ws[1] + k2 * ws[2]] = static_cast<T>(acc);
        }
  });
}

const Primitive& conv_weight_grad_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<ConvWeightGradAttrs> spec;
    spec.name = "conv_weight_grad";
    spec.fusion = FusionClass::Conv;
    spec.num_inputs = 2;
    spec.residuals = {0b11u, 0u};
    spec.infer = &infer;
    spec.cost = [](const ConvWeightGradAttrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
      double bytes = 0;
      for (auto& t : in) bytes += static_cast<double>(numel_of(t.shape)) * dtype_size(t.dtype);
      bytes += static_cast<double>(numel_of(out[0].shape)) * dtype_size(out[0].dtype);
      double k = 1;
      for (int64_t v : a.kernel) k *= static_cast<double>(v);
      // As the forward conv: 2 flops per output element, input channel per group and kernel tap.
      return Cost{2 * static_cast<double>(numel_of(in[1].shape)) * static_cast<double>(out[0].shape[1]) * k, bytes};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void* at, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
                    conv_weight_grad_reference(*static_cast<const ConvWeightGradAttrs*>(at), in, out);
                  }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (conv_weight_grad_def(), true);

}  // namespace

void conv_weight_grad_reference(const ConvWeightGradAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out) {
  switch (in[0].dtype) {
    case DType::Float32: return typed<float>(a, in, out[0]);
    case DType::Float64: return typed<double>(a, in, out[0]);
    case DType::Float16: return typed<Half>(a, in, out[0]);
    case DType::BFloat16: return typed<BFloat16>(a, in, out[0]);
    default: SPORE_ASSERT(false, "conv_weight_grad kernel on ", dtype_name(in[0].dtype));
  }
}

const Primitive& conv_weight_grad_primitive() { return conv_weight_grad_def(); }

}  // namespace spore::prims
