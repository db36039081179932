// SPDX-License-Identifier: Apache-2.0
// The matmul primitive: type inference and the plain C++ reference kernel. The oneDNN kernel
// (src/backends/cpu/onednn_matmul.cc) registers on top with a higher priority.
#include "prims/matmul.h"

#include <algorithm>
#include <vector>

#include "runtime/parallel.h"

namespace spore::prims {
namespace {

// Rows and columns of one operand after its transpose flag.
std::pair<Dim, Dim> rows_cols(const Shape& s, bool trans) {
  Dim r = s[s.size() - 2], c = s[s.size() - 1];
  return trans ? std::pair{c, r} : std::pair{r, c};
}

void infer_matmul(const MatmulAttrs& at, std::span<const TensorType> in, OutTypes& out) {
  SPORE_CHECK(in.size() == 2 || in.size() == 3, "[matmul] takes a, b and an optional bias, got ", in.size(),
              " inputs");
  const Shape &a = in[0].shape, &b = in[1].shape;
  SPORE_CHECK(a.size() >= 2 && b.size() >= 2, "[matmul] primitive needs inputs of rank >= 2, got a ", shape_str(a),
              " and b ", shape_str(b), "; use ops::matmul, which handles 1-D operands");
  for (size_t i = 1; i < in.size(); ++i)
    SPORE_CHECK(in[i].dtype == in[0].dtype, "[matmul] inputs have different dtypes: ", dtype_name(in[0].dtype),
                " and ", dtype_name(in[i].dtype), "; promote them first");
  SPORE_CHECK(in[0].dtype != DType::Bool, "[matmul] is not defined for bool tensors; cast to a number dtype");
  auto [m, k] = rows_cols(a, at.trans_a);
  auto [kb, n] = rows_cols(b, at.trans_b);
  SPORE_CHECK(k == kb, "[matmul] inner dimensions differ: a is ", shape_str(a), at.trans_a ? " (transposed)" : "",
              ", b is ", shape_str(b), at.trans_b ? " (transposed)" : "", "; transpose b or fix its shape");
  Shape ba(std::span<const Dim>(a.data(), a.size() - 2)), bb(std::span<const Dim>(b.data(), b.size() - 2));
  Shape s = broadcast_shapes(ba, bb, "matmul");
  s.push_back(m);
  s.push_back(n);
  if (in.size() == 3) {
    const Shape& c = in[2].shape;
    bool ok = c.size() <= s.size();
    for (size_t i = 0; ok && i < c.size(); ++i) ok = c[i] == 1 || c[i] == s[s.size() - c.size() + i];
    SPORE_CHECK(ok, "[matmul] bias of shape ", shape_str(c), " does not broadcast to the output ", shape_str(s));
  }
  out.add(in[0].dtype, std::move(s));
}

Cost cost_matmul(const MatmulAttrs& at, std::span<const TensorType> in, std::span<const TensorType> out) {
  const Shape& a = in[0].shape;
  double k = static_cast<double>(rows_cols(a, at.trans_a).second);
  double outn = static_cast<double>(numel_of(out[0].shape)), bytes = 0;
  for (auto& t : in) bytes += static_cast<double>(numel_of(t.shape)) * dtype_size(t.dtype);
  bytes += outn * dtype_size(out[0].dtype);
  return {2 * outn * k, bytes};
}

// Stride of input `b` for output batch dim i (0 where it broadcasts or is missing).
Strides batch_strides(const Buffer& x, int keep_tail, const Buffer& out) {
  int ob = out.ndim - 2, xb = x.ndim - keep_tail;
  Strides s(static_cast<size_t>(ob), 0);
  for (int i = 0; i < ob; ++i) {
    int j = i - (ob - xb);
    if (j >= 0 && x.shape[j] != 1) s[i] = x.strides[j];
  }
  return s;
}

template <class T>
struct Accum { using type = typename ComputeType<T>::type; };
template <class T> requires std::is_integral_v<T>
struct Accum<T> { using type = uint64_t; };  // wraps like PyTorch's integer GEMM, without UB

template <class T>
void run_typed(const MatmulAttrs& at, const MatmulGeometry& g, std::span<const Buffer> in, const Buffer& out) {
  using Acc = typename Accum<T>::type;
  using C = typename ComputeType<T>::type;
  const T* A = in[0].ptr<T>();
  const T* B = in[1].ptr<T>();
  const T* Bias = g.has_bias ? in[2].ptr<T>() : nullptr;
  T* Cp = out.ptr<T>();
  const bool use_bias = g.has_bias && at.beta != 0;
  const bool scaled = at.alpha != 1 || at.beta != 1;
  int64_t nbatch = 1;
  for (Dim d : g.batch) nbatch *= d;
  const int64_t rows = nbatch * g.M;
  const int64_t work = std::max<int64_t>(1, g.N * std::max<int64_t>(g.K, 1));
  runtime::parallel_for(rows, std::max<int64_t>(1, runtime::kParallelGrain / work), [&](int64_t r0, int64_t r1) {
    std::vector<Acc> acc(static_cast<size_t>(g.N));
    for (int64_t r = r0; r < r1; ++r) {
      int64_t bi = r / g.M, m = r % g.M;
      int64_t oa = 0, ob = 0, oc = 0, obias = 0;
      for (int i = static_cast<int>(g.batch.size()) - 1; i >= 0; --i) {
        int64_t idx = bi % g.batch[i];
        bi /= g.batch[i];
        oa += idx * g.a_batch[i], ob += idx * g.b_batch[i], oc += idx * g.c_batch[i];
        if (g.has_bias) obias += idx * g.bias_batch[i];
      }
      std::fill(acc.begin(), acc.end(), Acc{});
      const T* arow = A + oa + m * g.a_m;
      for (int64_t k = 0; k < g.K; ++k) {
        const Acc av = static_cast<Acc>(static_cast<C>(arow[k * g.a_k]));
        const T* brow = B + ob + k * g.b_k;
        if (g.b_n == 1) {
          for (int64_t n = 0; n < g.N; ++n) acc[n] += av * static_cast<Acc>(static_cast<C>(brow[n]));
        } else {
          for (int64_t n = 0; n < g.N; ++n) acc[n] += av * static_cast<Acc>(static_cast<C>(brow[n * g.b_n]));
        }
      }
      T* crow = Cp + oc + m * g.N;
      const T* brow = Bias ? Bias + obias + m * g.bias_m : nullptr;
      for (int64_t n = 0; n < g.N; ++n) {
        if constexpr (std::is_integral_v<T>) {
          int64_t v = static_cast<int64_t>(acc[n]);
          if (scaled) v = static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(int64_t(at.alpha)));
          if (use_bias) {
            int64_t bv = static_cast<int64_t>(brow[n * g.bias_n]);
            v = static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(bv) * static_cast<uint64_t>(int64_t(at.beta)));
          }
          crow[n] = static_cast<T>(v);
        } else {
          C v = acc[n];
          if (scaled) v *= static_cast<C>(at.alpha);
          if (use_bias) v += static_cast<C>(at.beta) * static_cast<C>(brow[n * g.bias_n]);
          crow[n] = static_cast<T>(v);
        }
      }
    }
  });
}

const Primitive& matmul_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<MatmulAttrs> spec;
    spec.name = "matmul";
    spec.fusion = FusionClass::Matmul;
    spec.infer = infer_matmul;
    spec.cost = cost_matmul;
    spec.residuals = {.inputs = 0b011};
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void* a, std::span<const Buffer> in, std::span<const Buffer> out,
                            const KernelContext&) { matmul_reference(*static_cast<const MatmulAttrs*>(a), in, out); }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (matmul_def(), true);

}  // namespace

MatmulGeometry matmul_geometry(const MatmulAttrs& at, std::span<const Buffer> in, const Buffer& out) {
  MatmulGeometry g;
  const Buffer &a = in[0], &b = in[1];
  g.batch = Shape(std::span<const Dim>(out.shape, static_cast<size_t>(out.ndim - 2)));
  g.M = out.shape[out.ndim - 2];
  g.N = out.shape[out.ndim - 1];
  int64_t as0 = a.strides[a.ndim - 2], as1 = a.strides[a.ndim - 1];
  int64_t bs0 = b.strides[b.ndim - 2], bs1 = b.strides[b.ndim - 1];
  g.K = at.trans_a ? a.shape[a.ndim - 2] : a.shape[a.ndim - 1];
  g.a_m = at.trans_a ? as1 : as0, g.a_k = at.trans_a ? as0 : as1;
  g.b_k = at.trans_b ? bs1 : bs0, g.b_n = at.trans_b ? bs0 : bs1;
  g.a_batch = batch_strides(a, 2, out);
  g.b_batch = batch_strides(b, 2, out);
  g.c_batch = Strides(std::span<const int64_t>(out.strides, static_cast<size_t>(out.ndim - 2)));
  if (in.size() == 3) {
    const Buffer& c = in[2];
    g.has_bias = true;
    // The bias aligns to the output from the right; its last two dims may be missing or 1.
    Strides full(static_cast<size_t>(out.ndim), 0);
    for (int i = 0; i < out.ndim; ++i) {
      int j = i - (out.ndim - c.ndim);
      if (j >= 0 && c.shape[j] != 1) full[i] = c.strides[j];
    }
    g.bias_batch = Strides(std::span<const int64_t>(full.data(), static_cast<size_t>(out.ndim - 2)));
    g.bias_m = full[out.ndim - 2];
    g.bias_n = full[out.ndim - 1];
  }
  return g;
}

void matmul_reference(const MatmulAttrs& at, std::span<const Buffer> in, std::span<const Buffer> out) {
  if (out[0].numel() == 0) return;
  MatmulGeometry g = matmul_geometry(at, in, out[0]);
  visit_dtype(in[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) SPORE_ASSERT(false, "matmul on bool");
    else run_typed<T>(at, g, in, out[0]);
  });
}

const Primitive& matmul_primitive() { return matmul_def(); }

}  // namespace spore::prims
