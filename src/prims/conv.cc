// SPDX-License-Identifier: Apache-2.0
// The conv and conv_transpose primitives: type inference and the plain C++ reference kernels
// (any float dtype, any input strides). oneDNN kernels: src/backends/cpu/onednn_conv.cc.
#include "prims/conv.h"

#include <algorithm>
#include <vector>

#include "runtime/parallel.h"

namespace spore::prims {
namespace {

void check_common(const char* name, std::span<const TensorType> in, size_t nsp, std::initializer_list<size_t> sizes) {
  SPORE_CHECK(in.size() == 2 || in.size() == 3, "[", name, "] takes x, w and an optional bias, got ", in.size(),
              " inputs");
  const Shape &x = in[0].shape, &w = in[1].shape;
  SPORE_CHECK(x.size() >= 3 && x.size() <= 5 && w.size() == x.size(), "[", name, "] needs x (N, C, *spatial) and ",
              "w of the same rank with 1-3 spatial dims, got x ", shape_str(x), " and w ", shape_str(w));
  for (size_t s : sizes)
    SPORE_CHECK(s == nsp, "[", name, "] attribute lists need ", nsp, " entries (one per spatial dim), got ", s);
  for (auto& t : in) {
    SPORE_CHECK(t.dtype == in[0].dtype, "[", name, "] inputs have different dtypes: ", dtype_name(in[0].dtype),
                " and ", dtype_name(t.dtype), "; promote them first");
  }
  SPORE_CHECK(is_floating(in[0].dtype), "[", name, "] needs floating tensors, got ", dtype_name(in[0].dtype));
}

void infer_conv(const ConvAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  const Shape &x = in[0].shape, &w = in[1].shape;
  const size_t nsp = x.size() - 2;
  check_common("conv", in, nsp, {a.stride.size(), a.pad_l.size(), a.pad_r.size(), a.dilation.size()});
  SPORE_CHECK(a.groups >= 1 && w[0] % a.groups == 0 && x[1] == w[1] * a.groups, "[conv] input has ", x[1],
              " channels but weight ", shape_str(w), " with groups=", a.groups, " expects ", w[1] * a.groups,
              " (and out channels divisible by groups); x is ", shape_str(x));
  if (in.size() == 3)
    SPORE_CHECK(in[2].shape.size() == 1 && in[2].shape[0] == w[0], "[conv] bias must have shape (", w[0], "), got ",
                shape_str(in[2].shape));
  Shape s = {x[0], w[0]};
  for (size_t i = 0; i < nsp; ++i) {
    int64_t span = a.dilation[i] * (w[i + 2] - 1) + 1;
    Dim o = dim_add(dim_floordiv(dim_sub(dim_add(x[i + 2], a.pad_l[i] + a.pad_r[i]), span), a.stride[i]), 1);
    SPORE_CHECK(is_symbolic(o) || (o > 0 && x[i + 2] + a.pad_l[i] + a.pad_r[i] >= span), "[conv] input ",
                shape_str(x), " is too small for kernel ", shape_str(w), " with this padding and dilation");
    s.push_back(o);
  }
  out.add(in[0].dtype, std::move(s));
}

void infer_conv_transpose(const ConvTransposeAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  const Shape &x = in[0].shape, &w = in[1].shape;
  const size_t nsp = x.size() - 2;
  check_common("conv_transpose", in, nsp, {a.stride.size(), a.padding.size(), a.output_padding.size(), a.dilation.size()});
  SPORE_CHECK(a.groups >= 1 && x[1] == w[0] && w[0] % a.groups == 0, "[conv_transpose] input has ", x[1],
              " channels but weight ", shape_str(w), " (in, out/groups, *k) with groups=", a.groups, " expects ", w[0],
              "; x is ", shape_str(x));
  const Dim o = w[1] * a.groups;
  if (in.size() == 3)
    SPORE_CHECK(in[2].shape.size() == 1 && in[2].shape[0] == o, "[conv_transpose] bias must have shape (", o,
                "), got ", shape_str(in[2].shape));
  Shape s = {x[0], o};
  for (size_t i = 0; i < nsp; ++i) {
    SPORE_CHECK(a.output_padding[i] < std::max(a.stride[i], a.dilation[i]), "[conv_transpose] output_padding ",
                a.output_padding[i], " must be smaller than stride or dilation");
    Dim d = dim_add(dim_mul(dim_sub(x[i + 2], 1), a.stride[i]),
                    a.dilation[i] * (w[i + 2] - 1) + a.output_padding[i] + 1 - 2 * a.padding[i]);
    SPORE_CHECK(is_symbolic(d) || d > 0, "[conv_transpose] output size ", d, " is not positive for x ", shape_str(x));
    s.push_back(d);
  }
  out.add(in[0].dtype, std::move(s));
}

Cost conv_cost(std::span<const TensorType> in, std::span<const TensorType> out, double per_out) {
  double bytes = 0;
  for (auto& t : in) bytes += static_cast<double>(numel_of(t.shape)) * dtype_size(t.dtype);
  bytes += static_cast<double>(numel_of(out[0].shape)) * dtype_size(out[0].dtype);
  return {2 * static_cast<double>(numel_of(out[0].shape)) * per_out, bytes};
}

// Up to 3 spatial dims, padded to exactly 3 with leading 1s so one loop nest serves all.
struct Geo {
  int64_t N, C, O, G;
  int64_t in[3], k[3], out[3], s[3], p[3], d[3];
  int64_t xs[5], ws[5], os[5], bs = 0;
};

Geo geometry(std::span<const Buffer> in, const Buffer& out, const IntList& st, const IntList& pad,
             const IntList& dil, int64_t groups) {
  Geo g{};
  const Buffer &x = in[0], &w = in[1];
  int nsp = x.ndim - 2, off = 3 - nsp;
  g.N = x.shape[0], g.C = x.shape[1], g.O = out.shape[1], g.G = groups;
  g.xs[0] = x.strides[0], g.xs[1] = x.strides[1], g.ws[0] = w.strides[0], g.ws[1] = w.strides[1];
  g.os[0] = out.strides[0], g.os[1] = out.strides[1];
  for (int i = 0; i < 3; ++i) {
    g.in[i] = g.k[i] = g.out[i] = g.s[i] = g.d[i] = 1;
    g.p[i] = 0, g.xs[i + 2] = g.ws[i + 2] = g.os[i + 2] = 0;
  }
  for (int i = 0; i < nsp; ++i) {
    g.in[off + i] = x.shape[i + 2], g.k[off + i] = w.shape[i + 2], g.out[off + i] = out.shape[i + 2];
    g.s[off + i] = st[i], g.p[off + i] = pad[i], g.d[off + i] = dil[i];
    g.xs[off + i + 2] = x.strides[i + 2], g.ws[off + i + 2] = w.strides[i + 2], g.os[off + i + 2] = out.strides[i + 2];
  }
  if (in.size() == 3) g.bs = in[2].strides[0];
  return g;
}

template <class T>
void conv_typed(const Geo& g, std::span<const Buffer> in, const Buffer& out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T *X = in[0].ptr<T>(), *W = in[1].ptr<T>(), *B = in.size() == 3 ? in[2].ptr<T>() : nullptr;
  T* Y = out.ptr<T>();
  const int64_t Cg = g.C / g.G, Og = g.O / g.G;
  const int64_t per = g.out[0] * g.out[1] * g.out[2] * Cg * g.k[0] * g.k[1] * g.k[2];
  runtime::parallel_items(g.N * g.O, per, [&](int64_t item) {
    const int64_t n = item / g.O, o = item % g.O, c0 = (o / Og) * Cg;
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          A acc = B ? static_cast<A>(B[o * g.bs]) : A(0);
          for (int64_t c = 0; c < Cg; ++c) {
            const T* xp = X + n * g.xs[0] + (c0 + c) * g.xs[1];
            const T* wp = W + o * g.ws[0] + c * g.ws[1];
            for (int64_t kd = 0; kd < g.k[0]; ++kd) {
              int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
              if (id < 0 || id >= g.in[0]) continue;
              for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
                if (ih < 0 || ih >= g.in[1]) continue;
                for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                  int64_t iw = ow * g.s[2] - g.p[2] + kw * g.d[2];
                  if (iw < 0 || iw >= g.in[2]) continue;
                  acc += static_cast<A>(xp[id * g.xs[2] + ih * g.xs[3] + iw * g.xs[4]]) *
                         static_cast<A>(wp[kd * g.ws[2] + kh * g.ws[3] + kw * g.ws[4]]);
                }
              }
            }
          }
          Y[n * g.os[0] + o * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]] = static_cast<T>(acc);
        }
  });
}

// Transposed conv as a scatter: each (n, o) plane is written by one work item only.
template <class T>
void conv_transpose_typed(const Geo& g, std::span<const Buffer> in, const Buffer& out) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T *X = in[0].ptr<T>(), *W = in[1].ptr<T>(), *B = in.size() == 3 ? in[2].ptr<T>() : nullptr;
  T* Y = out.ptr<T>();
  const int64_t Cg = g.C / g.G, Og = g.O / g.G;
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t per = g.in[0] * g.in[1] * g.in[2] * Cg * g.k[0] * g.k[1] * g.k[2];
  runtime::parallel_items(g.N * g.O, per, [&](int64_t item) {
    const int64_t n = item / g.O, o = item % g.O, c0 = (o / Og) * Cg, ol = o % Og;
    std::vector<A> acc(static_cast<size_t>(plane), B ? static_cast<A>(B[o * g.bs]) : A(0));
    for (int64_t c = 0; c < Cg; ++c) {
      const T* xp = X + n * g.xs[0] + (c0 + c) * g.xs[1];
      const T* wp = W + (c0 + c) * g.ws[0] + ol * g.ws[1];
      for (int64_t id = 0; id < g.in[0]; ++id)
        for (int64_t ih = 0; ih < g.in[1]; ++ih)
          for (int64_t iw = 0; iw < g.in[2]; ++iw) {
            const A xv = static_cast<A>(xp[id * g.xs[2] + ih * g.xs[3] + iw * g.xs[4]]);
            for (int64_t kd = 0; kd < g.k[0]; ++kd) {
              int64_t od = id * g.s[0] - g.p[0] + kd * g.d[0];
              if (od < 0 || od >= g.out[0]) continue;
              for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                int64_t oh = ih * g.s[1] - g.p[1] + kh * g.d[1];
                if (oh < 0 || oh >= g.out[1]) continue;
                for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                  int64_t ow = iw * g.s[2] - g.p[2] + kw * g.d[2];
                  if (ow < 0 || ow >= g.out[2]) continue;
                  acc[(od * g.out[1] + oh) * g.out[2] + ow] +=
                      xv * static_cast<A>(wp[kd * g.ws[2] + kh * g.ws[3] + kw * g.ws[4]]);
                }
              }
            }
          }
    }
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow)
          Y[n * g.os[0] + o * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]] =
              static_cast<T>(acc[(od * g.out[1] + oh) * g.out[2] + ow]);
  });
}

template <class F>
void visit_float(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BFloat16{});
    default: SPORE_ASSERT(false, "conv kernel on ", dtype_name(t));
  }
}

const Primitive& conv_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<ConvAttrs> spec;
    spec.name = "conv";
    spec.fusion = FusionClass::Conv;
    spec.infer = infer_conv;
    spec.cost = [](const ConvAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return conv_cost(in, out, static_cast<double>(numel_of(in[1].shape) / in[1].shape[0]));
    };
    spec.residuals = {.inputs = 0b011};
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void* a, std::span<const Buffer> in, std::span<const Buffer> out,
                            const KernelContext&) { conv_reference(*static_cast<const ConvAttrs*>(a), in, out); }});
    return q;
  }();
  return p;
}

const Primitive& conv_transpose_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<ConvTransposeAttrs> spec;
    spec.name = "conv_transpose";
    spec.fusion = FusionClass::Conv;
    spec.infer = infer_conv_transpose;
    spec.cost = [](const ConvTransposeAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return conv_cost(in, out, static_cast<double>(numel_of(in[1].shape) / in[1].shape[1]));
    };
    spec.residuals = {.inputs = 0b011};
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void* a, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
                    conv_transpose_reference(*static_cast<const ConvTransposeAttrs*>(a), in, out);
                  }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (conv_def(), conv_transpose_def(), true);

}  // namespace

void conv_reference(const ConvAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out) {
  if (out[0].numel() == 0) return;
  Geo g = geometry(in, out[0], a.stride, a.pad_l, a.dilation, a.groups);
  visit_float(in[0].dtype, [&](auto tag) { conv_typed<decltype(tag)>(g, in, out[0]); });
}

void conv_transpose_reference(const ConvTransposeAttrs& a, std::span<const Buffer> in, std::span<const Buffer> out) {
  if (out[0].numel() == 0) return;
  Geo g = geometry(in, out[0], a.stride, a.padding, a.dilation, a.groups);
  visit_float(in[0].dtype, [&](auto tag) { conv_transpose_typed<decltype(tag)>(g, in, out[0]); });
}

const Primitive& conv_primitive() { return conv_def(); }

bool conv_is_weight_gradient_shaped(const Shape& x, const Shape& w, const Shape& y) {
  int64_t kernel = 1, outer = 1;
  for (size_t i = 2; i < w.size() && i < y.size() && i < x.size(); ++i) {
    if (is_symbolic(w[i]) || is_symbolic(y[i]) || is_symbolic(x[i])) return false;
    // A kernel wider than the image (a 3x3 kernel over a 1x1 image with padding 1: ResNet's last
    // stage at 32x32 inputs) is a forward conv of a tiny image, mostly padding: its weights are
    // a parameter the forward kernels reorder once and keep, where run as backward-weights it
    // reordered all 512x512x3x3 weights on every call (15 ms, against 0.4 ms for the conv). A
    // weight gradient's kernel (the output gradient) is never wider than its image (the input)
    // but for paddings wider than the original kernel.
    if (w[i] > x[i]) return false;
    kernel *= w[i], outer *= y[i];
  }
  return kernel > outer;
}
const Primitive& conv_transpose_primitive() { return conv_transpose_def(); }

}  // namespace spore::prims
