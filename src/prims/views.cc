// SPDX-License-Identifier: Apache-2.0
#include "prims/views.h"

#include "prims/elementwise_infer.h"

namespace spore::prims {

std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& shape) {
  Strides out(shape.size(), 0);
  int64_t numel = 1;
  for (Dim d : old_shape) numel *= d;
  // Empty and one-element tensors (0-d included) view as anything of the same size.
  if (numel <= 1) return contiguous_strides(shape);
  // Walk chunks of old dims that are contiguous with each other; each chunk must map onto a run
  // of new dims with the same element count.
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_shape[tensor_d];
    if (tensor_d == 0 || (old_shape[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

namespace {

template <class Attrs>
const Primitive& define_view(const char* name, void (*infer)(const Attrs&, std::span<const TensorType>, OutTypes&),
                             ViewFn view) {
  PrimitiveSpec<Attrs> spec;
  spec.name = name;
  spec.fusion = FusionClass::Injective;
  spec.num_inputs = 1;
  spec.infer = infer;
  spec.view = view;
  spec.cost = [](const Attrs&, std::span<const TensorType>, std::span<const TensorType>) { return Cost{}; };
  return define_primitive(spec);
}

Tensor make_view(const Tensor& in, const Shape& shape, const Strides& strides, int64_t offset) {
  auto t = Tensor::view_of(in.storage(), shape, strides, offset, in.dtype());
  t.impl()->weak = in.weak();
  return t;
}

const Primitive& reshape_def() {
  static const Primitive& p = define_view<ReshapeAttrs>(
      "reshape",
      [](const ReshapeAttrs& a, std::span<const TensorType> in, OutTypes& out) {
        Dim n_in = numel_of(in[0].shape), n_out = numel_of(a.shape);
        // A size that a tensor's values give is checked when the call sees it bound.
        SPORE_CHECK(n_in == n_out || is_value_size(n_in) || is_value_size(n_out), "[reshape] cannot reshape ",
                    shape_str(in[0].shape), " (", dim_str(n_in),
                    " elements) to ", shape_str(a.shape), " (", dim_str(n_out), " elements)");
        out.add(in[0].dtype, a.shape).weak = in[0].weak;
      },
      [](const void* attrs, const Tensor& in, const TensorType& out) {
        auto st = view_strides(in.shape(), in.strides(), out.shape);
        if (!st.has_value()) {
          // The public ops decide view-or-copy from the strides they see (ops::view refuses,
          // ops::reshape copies first), so eagerly this never happens; a traced graph decided
          // against symbolic tensors, which are contiguous, and may meet a strided view when it
          // runs: copy then, as reshape does.
          Tensor c = in.contiguous();
          return make_view(c, out.shape, contiguous_strides(out.shape), c.offset());
        }
        return make_view(in, out.shape, *st, in.offset());
      });
  return p;
}

const Primitive& permute_def() {
  static const Primitive& p = define_view<PermuteAttrs>(
      "permute",
      [](const PermuteAttrs& a, std::span<const TensorType> in, OutTypes& out) {
        Shape s(a.axes.size(), 0);
        for (size_t i = 0; i < a.axes.size(); ++i) s[i] = in[0].shape[a.axes[i]];
        out.add(in[0].dtype, std::move(s)).weak = in[0].weak;
      },
      [](const void* attrs, const Tensor& in, const TensorType& out) {
        const auto& a = *static_cast<const PermuteAttrs*>(attrs);
        Strides st(a.axes.size(), 0);
        for (size_t i = 0; i < a.axes.size(); ++i) st[i] = in.strides()[a.axes[i]];
        return make_view(in, out.shape, st, in.offset());
      });
  return p;
}

const Primitive& slice_def() {
  static const Primitive& p = define_view<SliceAttrs>(
      "slice",
      [](const SliceAttrs& a, std::span<const TensorType> in, OutTypes& out) {
        Shape s = in[0].shape;
        for (size_t i = 0; i < s.size(); ++i) {
          if (is_symbolic(a.starts[i]) || is_symbolic(a.stops[i])) {
            // An axis of symbolic size (a traced batch) kept or sliced: a symbolic length.
            const Dim len = dim_sub(a.stops[i], a.starts[i]);
            s[i] = a.steps[i] == 1 ? len : dim_floordiv(dim_add(len, a.steps[i] - 1), a.steps[i]);
            continue;
          }
          int64_t len = a.stops[i] - a.starts[i];
          s[i] = len <= 0 ? 0 : (len + a.steps[i] - 1) / a.steps[i];
        }
        out.add(in[0].dtype, std::move(s)).weak = in[0].weak;
      },
      [](const void* attrs, const Tensor& in, const TensorType& out) {
        const auto& a = *static_cast<const SliceAttrs*>(attrs);
        Strides st = in.strides();
        int64_t off = in.offset();
        for (size_t i = 0; i < st.size(); ++i) {
          if (out.shape[i] > 0) off += a.starts[i] * st[i];
          st[i] *= a.steps[i];
        }
        return make_view(in, out.shape, st, off);
      });
  return p;
}

const Primitive& broadcast_def() {
  static const Primitive& p = define_view<BroadcastAttrs>(
      "broadcast_to",
      [](const BroadcastAttrs& a, std::span<const TensorType> in, OutTypes& out) {
        const Shape& s = in[0].shape;
        SPORE_CHECK(s.size() <= a.shape.size(), "[broadcast_to] cannot broadcast ", shape_str(s), " to ",
                    shape_str(a.shape), ": the target has fewer dimensions");
        size_t off = a.shape.size() - s.size();
        for (size_t i = 0; i < s.size(); ++i)
          SPORE_CHECK(s[i] == a.shape[i + off] || s[i] == 1 || is_value_size(a.shape[i + off]) || is_value_size(s[i]),
                      "[broadcast_to] cannot broadcast ", shape_str(s),
                      " to ", shape_str(a.shape), ": dimension ", i, " is ", dim_str(s[i]),
                      "; it must equal the target or be 1");
        // A broadcast view can name more elements than any kernel could index.
        int64_t n = 1;
        for (Dim d : a.shape)
          SPORE_CHECK(is_symbolic(d) || (d >= 0 && !__builtin_mul_overflow(n, d, &n)), "[broadcast_to] target shape ",
                      shape_str(a.shape), " has a negative size or more than 2^63 elements");
        out.add(in[0].dtype, a.shape).weak = in[0].weak;
      },
      [](const void*, const Tensor& in, const TensorType& out) {
        size_t off = out.shape.size() - in.shape().size();
        Strides st(out.shape.size(), 0);
        for (size_t i = 0; i < in.shape().size(); ++i)
          st[i + off] = (in.shape()[i] == 1 && out.shape[i + off] != 1) ? 0 : in.strides()[i];
        return make_view(in, out.shape, st, in.offset());
      });
  return p;
}

const Primitive& diagonal_def() {
  static const Primitive& p = define_view<DiagonalAttrs>(
      "diagonal",
      [](const DiagonalAttrs& a, std::span<const TensorType> in, OutTypes& out) {
        const Shape& s = in[0].shape;
        Shape o;
        for (size_t i = 0; i < s.size(); ++i)
          if (static_cast<int64_t>(i) != a.axis1 && static_cast<int64_t>(i) != a.axis2) o.push_back(s[i]);
        int64_t n1 = s[a.axis1], n2 = s[a.axis2];
        int64_t len = a.offset >= 0 ? std::min(n1, n2 - a.offset) : std::min(n1 + a.offset, n2);
        o.push_back(std::max<int64_t>(len, 0));
        out.add(in[0].dtype, std::move(o)).weak = in[0].weak;
      },
      [](const void* attrs, const Tensor& in, const TensorType& out) {
        const auto& a = *static_cast<const DiagonalAttrs*>(attrs);
        Strides st;
        for (size_t i = 0; i < in.strides().size(); ++i)
          if (static_cast<int64_t>(i) != a.axis1 && static_cast<int64_t>(i) != a.axis2) st.push_back(in.strides()[i]);
        st.push_back(in.strides()[a.axis1] + in.strides()[a.axis2]);
        int64_t off = in.offset();
        if (out.shape.back() > 0)
          off += a.offset >= 0 ? a.offset * in.strides()[a.axis2] : -a.offset * in.strides()[a.axis1];
        return make_view(in, out.shape, st, off);
      });
  return p;
}

// The identity that transforms treat as a constant: its jvp and vjp give zero. A view, so it
// costs nothing eagerly; under a trace it is a node, so the IR keeps where gradients stop.
const Primitive& stop_gradient_def() {
  static const Primitive& p = define_view<NoAttrs>(
      "stop_gradient",
      [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) {
        out.add(in[0].dtype, in[0].shape).weak = in[0].weak;
      },
      [](const void*, const Tensor& in, const TensorType&) {
        return make_view(in, in.shape(), in.strides(), in.offset());
      });
  return p;
}

[[maybe_unused]] const bool registered =
    (reshape_def(), permute_def(), slice_def(), broadcast_def(), diagonal_def(), stop_gradient_def(), true);

}  // namespace

const Primitive& reshape_primitive() { return reshape_def(); }
const Primitive& permute_primitive() { return permute_def(); }
const Primitive& slice_primitive() { return slice_def(); }
const Primitive& broadcast_to_primitive() { return broadcast_def(); }
const Primitive& diagonal_primitive() { return diagonal_def(); }
const Primitive& stop_gradient_primitive() { return stop_gradient_def(); }

}  // namespace spore::prims
