// SPDX-License-Identifier: Apache-2.0
#include "prims/bind_sizes.h"

#include "spore/error.h"

namespace spore::prims {

namespace {

// The sizes come from a graph's input values, so they are checked here, before anything is
// allocated from them.
void read_sizes(const void* attrs, std::span<const Tensor> in, std::vector<std::pair<Dim, int64_t>>& out) {
  const auto& a = *static_cast<const BindSizesAttrs*>(attrs);
  const Tensor& s = in[1];
  // Undefined under vmap when the sizes are batched (vmap_interpreter.cc): one size per graph.
  SPORE_CHECK(s.defined(), "[bind_sizes] under vmap the sizes differ per lane (they are batched), and a size is one "
              "per graph; pass them unbatched, or loop over the batch");
  SPORE_CHECK(s.numel() == static_cast<int64_t>(a.sizes.size()), "[bind_sizes] the sizes input has ", s.numel(),
              " values for ", a.sizes.size(), " sizes (shape ", shape_str(s.shape()), ")");
  const std::vector<int64_t> v = s.to(DType::Int64).to_vector<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 && !a.what.empty()) throw Error(a.what + " (checked when the graph runs)");
    SPORE_CHECK(v[i] >= 0, "[bind_sizes] size ", i, " (", dim_str(a.sizes[i]), ") is ", v[i],
                " when the graph runs; a size must be >= 0");
    out.emplace_back(a.sizes[i], v[i]);
  }
}

const Primitive& bind_sizes_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<BindSizesAttrs> spec;
    spec.name = "bind_sizes";
    spec.num_inputs = 2;
    spec.infer = [](const BindSizesAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      SPORE_CHECK(is_integral(in[1].dtype) && in[1].shape.size() <= 1, "[bind_sizes] sizes must be a 0-d or 1-D integer tensor, got ",
                  dtype_name(in[1].dtype), shape_str(in[1].shape));
      SPORE_CHECK(numel_of(in[1].shape) == static_cast<Dim>(a.sizes.size()), "[bind_sizes] ", a.sizes.size(),
                  " symbols for a sizes input of shape ", shape_str(in[1].shape));
      // Value symbols as traced; sizes once the interpreter has bound them for a call.
      for (int64_t d : a.sizes)
        SPORE_CHECK(is_value_size(d) || d >= 0, "[bind_sizes] ", dim_str(d), " is neither a value symbol nor a size");
      out.add(in[0].dtype, in[0].shape).weak = in[0].weak;
    };
    spec.cost = [](const BindSizesAttrs&, std::span<const TensorType>, std::span<const TensorType>) { return Cost{}; };
    // A view of x: the node costs nothing when it runs but the binding.
    spec.view = [](const void*, const Tensor& in, const TensorType&) {
      auto t = Tensor::view_of(in.storage(), in.shape(), in.strides(), in.offset(), in.dtype());
      t.impl()->weak = in.weak();
      return t;
    };
    Primitive& q = define_primitive(spec);
    q.value_sizes = read_sizes;
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (bind_sizes_def(), true);

}  // namespace

const Primitive& bind_sizes_primitive() { return bind_sizes_def(); }

}  // namespace spore::prims
