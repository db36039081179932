// SPDX-License-Identifier: Apache-2.0
// Export of reductions, arg-reductions, cumulative sums and sorting. Opset 17 takes ReduceSum's
// axes as an input and the other reductions' as an attribute. ONNX reductions keep the input
// dtype, where ours widen integer sums and products to int64 (and all/any give bool), so the
// input is cast first to the dtype we produce.
#include "io/onnx/export_context.h"
#include "prims/reduce.h"
#include "prims/scan.h"
#include "prims/sort.h"

namespace spore::io::onnx_detail {

namespace {

using ir::DType;

std::string cast_to(ExportContext& c, const std::string& x, DType from, DType to, const std::string& what) {
  if (from == to) return x;
  auto& n = c.add("Cast", {x}, {c.tmp(what)});
  attr_i(n, "to", onnx_dtype(to));
  return n.output(0);
}

// One ONNX reduction of `x` over the node's axes; writes `out` when given, else a temporary.
std::string reduce_op(ExportContext& c, const char* op, const std::string& x, bool keepdims, const std::string& out = {}) {
  const auto& a = c.attrs<prims::ReduceAttrs>();
  const std::vector<int64_t> axes(a.axes.begin(), a.axes.end());
  const bool sum = std::string(op) == "ReduceSum";
  std::vector<std::string> ins{x};
  if (sum) ins.push_back(c.ints(axes, "axes"));
  auto& n = c.add(op, ins, {out.empty() ? c.tmp(op) : out});
  if (!sum) attr_ints(n, "axes", axes);
  attr_i(n, "keepdims", keepdims ? 1 : 0);
  return n.output(0);
}

// Reductions that are one ONNX op after casting the input to the output dtype.
void reduce(ExportContext& c, const char* op) {
  const auto& a = c.attrs<prims::ReduceAttrs>();
  const DType in = c.in_type(0).dtype, out = c.out_type(0).dtype;
  std::string x = cast_to(c, c.in(0), in, out, "widened");
  if (a.axes.empty()) {
    c.add("Identity", {x}, {c.out(0)});
    return;
  }
  reduce_op(c, op, x, a.keepdims, c.out(0));
}
void reduce_sum(ExportContext& c) { reduce(c, "ReduceSum"); }
void reduce_mean(ExportContext& c) { reduce(c, "ReduceMean"); }
void reduce_prod(ExportContext& c) { reduce(c, "ReduceProd"); }
void reduce_max(ExportContext& c) { reduce(c, "ReduceMax"); }
void reduce_min(ExportContext& c) { reduce(c, "ReduceMin"); }
void reduce_norm1(ExportContext& c) { reduce(c, "ReduceL1"); }
void reduce_norm2(ExportContext& c) { reduce(c, "ReduceL2"); }
void logsumexp(ExportContext& c) { reduce(c, "ReduceLogSumExp"); }
void reduce_norm_inf(ExportContext& c) {
  const auto& a = c.attrs<prims::ReduceAttrs>();
  std::string ab = c.op("Abs", {c.in(0)}, "abs");
  if (a.axes.empty()) c.add("Identity", {ab}, {c.out(0)});
  else reduce_op(c, "ReduceMax", ab, a.keepdims, c.out(0));
}

// all/any: the truth values as int32, reduced with min/max (ONNX reductions take no bool).
void all_any(ExportContext& c, const char* op) {
  const auto& a = c.attrs<prims::ReduceAttrs>();
  std::string b = cast_to(c, c.in(0), c.in_type(0).dtype, DType::Bool, "truth");
  std::string i = cast_to(c, b, DType::Bool, DType::Int32, "as_int");
  std::string r = a.axes.empty() ? i : reduce_op(c, op, i, a.keepdims);
  attr_i(c.add("Cast", {r}, {c.out(0)}), "to", onnx::TensorProto::BOOL);
}
void reduce_all(ExportContext& c) { all_any(c, "ReduceMin"); }
void reduce_any(ExportContext& c) { all_any(c, "ReduceMax"); }

// var/std: mean-centered sum of squares over max(0, n - correction).
void var_std(ExportContext& c, bool std_dev) {
  const auto& a = c.attrs<prims::ReduceAttrs>();
  const auto& xt = c.in_type(0);
  int64_t n = 1;
  for (int64_t ax : a.axes) {
    const auto& d = xt.shape.at(static_cast<size_t>(ax));
    if (!d.is_const()) c.fail("reduces the symbolic dimension '" + d.str() + "'; ONNX export needs its size fixed here");
    n *= d.value();
  }
  const std::string x = c.in(0);
  std::string m = reduce_op(c, "ReduceMean", x, true);
  std::string d = c.op("Sub", {x, m}, "centered");
  std::string ss = reduce_op(c, "ReduceSum", c.op("Mul", {d, d}, "sq"), a.keepdims);
  const double denom = static_cast<double>(std::max<int64_t>(0, n - a.correction));
  std::string div = c.scalar(denom, xt.dtype, "count");
  if (std_dev) c.add("Sqrt", {c.op("Div", {ss, div}, "var")}, {c.out(0)});
  else c.add("Div", {ss, div}, {c.out(0)});
}
void var(ExportContext& c) { var_std(c, false); }
void std_dev(ExportContext& c) { var_std(c, true); }

void arg_reduce(ExportContext& c, const char* op) {
  const auto& a = c.attrs<prims::ArgReduceAttrs>();
  auto& n = c.add(op, {c.in(0)}, {c.out(0)});
  attr_i(n, "axis", a.axis);
  attr_i(n, "keepdims", a.keepdims ? 1 : 0);
}
void argmax(ExportContext& c) { arg_reduce(c, "ArgMax"); }
void argmin(ExportContext& c) { arg_reduce(c, "ArgMin"); }

void cumsum(ExportContext& c) {
  std::string x = cast_to(c, c.in(0), c.in_type(0).dtype, c.out_type(0).dtype, "widened");
  c.add("CumSum", {x, c.scalar(static_cast<double>(c.attrs<prims::ScanAttrs>().axis), DType::Int64, "axis")}, {c.out(0)});
}

void top_k(ExportContext& c, int64_t k, int64_t axis, bool largest) {
  auto& n = c.add("TopK", {c.in(0), c.ints({k}, "k")}, {c.out(0), c.out(1)});
  attr_i(n, "axis", axis);
  attr_i(n, "largest", largest ? 1 : 0);
  attr_i(n, "sorted", 1);
}
void topk(ExportContext& c) {
  const auto& a = c.attrs<prims::TopkAttrs>();
  top_k(c, a.k, a.axis, a.largest);
}
void sort(ExportContext& c) {
  const auto& a = c.attrs<prims::SortAttrs>();
  const auto& xs = c.in_type(0).shape;
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(xs.size()) : a.axis;
  const auto& d = xs.at(static_cast<size_t>(axis));
  if (!d.is_const()) c.fail("sorts along the symbolic dimension '" + d.str() + "'; ONNX export needs its size fixed");
  top_k(c, d.value(), axis, a.descending);
}

}  // namespace

void add_reduce_exports(ExportTable& t) {
  const ExportTable rows = {
      {"reduce_sum", reduce_sum},   {"reduce_mean", reduce_mean}, {"reduce_prod", reduce_prod},
      {"reduce_max", reduce_max},   {"reduce_min", reduce_min},   {"reduce_all", reduce_all},
      {"reduce_any", reduce_any},   {"reduce_norm1", reduce_norm1}, {"reduce_norm2", reduce_norm2},
      {"reduce_norm_inf", reduce_norm_inf}, {"logsumexp", logsumexp}, {"var", var},
      {"std", std_dev},             {"argmax", argmax},           {"argmin", argmin},
      {"cumsum", cumsum},           {"topk", topk},               {"sort", sort},
  };
  t.insert(rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
