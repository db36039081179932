// SPDX-License-Identifier: Apache-2.0
// embedding: a row gather. Indices are checked on the calling thread first (an error must not
// be thrown inside a parallel region), then rows are copied in parallel.
#include "prims/embedding.h"
#include "prims/elementwise_infer.h"

#include <cstring>

#include "prims/norm_util.h"

namespace spore::prims {
namespace {

void run_embedding(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const Buffer& w = in[0];
  const int64_t V = w.shape[0], D = w.shape[1], n = in[1].numel();
  nn::Contig cw(w), ci(in[1]);
  const int64_t* idx = ci.get<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    SPORE_CHECK(idx[i] >= 0 && idx[i] < V, "[embedding] index ", idx[i], " at flat position ", i,
                " is out of range for a table of ", V, " rows (weight shape (", V, ", ", D, ")); indices must be in [0, ",
                V, ")");
  const size_t row = static_cast<size_t>(D) * dtype_size(w.dtype);
  const char* src = cw.get<char>();
  char* dst = out[0].ptr<char>();
  runtime::parallel_for(n, nn::row_grain(D), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * row, src + idx[i] * row, row);
  });
}

const Primitive& embedding_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<NoAttrs> spec;
    spec.name = "embedding";
    spec.fusion = FusionClass::Injective;
    spec.num_inputs = 2;
    spec.residuals = {0b10u, 0u};  // the vjp scatters into the weight's shape by the indices
    spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) {
      SPORE_ASSERT(in[0].shape.size() == 2 && in[1].dtype == DType::Int64, "embedding inputs");
      Shape s = in[1].shape;
      s.push_back(in[0].shape[1]);
      out.add(in[0].dtype, s);
    };
    spec.cost = [](const NoAttrs&, std::span<const TensorType>, std::span<const TensorType> out) {
      const double n = cost_numel(out[0].shape);
      return Cost{0, 2 * n * dtype_size(out[0].dtype)};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = &run_embedding});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (embedding_def(), true);

}  // namespace

const Primitive& embedding_primitive() { return embedding_def(); }

}  // namespace spore::prims
