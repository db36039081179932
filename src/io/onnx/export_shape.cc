// SPDX-License-Identifier: Apache-2.0
// Export of views, data movement and factories: reshape/permute/slice/broadcast, concat,
// gather/scatter/embedding, pad/flip/roll, triangles, masked_fill, one_hot, nonzero, and the
// factory primitives (computed now and written as constants). Shapes that ONNX takes as tensors
// are written as int64 constants; a symbolic batch dimension is kept through Reshape's 0 / -1
// and Expand's 1 where the input carries the same symbol.
#include <limits>

#include "io/onnx/export_context.h"
#include "prims/concat.h"
#include "prims/factories.h"
#include "prims/gather.h"
#include "prims/one_hot.h"
#include "prims/pad.h"
#include "prims/tri.h"
#include "prims/views.h"
#include "spore/ops.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"

namespace spore::io::onnx_detail {

namespace {

using ir::DType;

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();

void reshape(ExportContext& c) {
  const auto& in = c.in_type(0).shape;
  const auto& out = c.out_type(0).shape;
  std::vector<int64_t> s;
  bool inferred = false, copied = false, zero = false;
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k].is_const()) {
      s.push_back(out[k].value());
      zero = zero || out[k].value() == 0;
    } else if (k < in.size() && in[k] == out[k]) {
      s.push_back(0);  // copies the input's dimension k
      copied = true;
    } else if (!inferred) {
      s.push_back(-1);
      inferred = true;
    } else {
      c.fail("reshapes to " + ir::type_str(c.out_type(0)) +
             ", with more than one symbolic dimension ONNX cannot infer; export with a fixed example shape");
    }
  }
  if (zero && (copied || inferred)) c.fail("reshapes to a shape with both an empty and a symbolic dimension");
  auto& n = c.add("Reshape", {c.in(0), c.ints(s, "shape")}, {c.out(0)});
  if (zero) attr_i(n, "allowzero", 1);
}

void permute(ExportContext& c) {
  const auto& a = c.attrs<prims::PermuteAttrs>();
  attr_ints(c.add("Transpose", {c.in(0)}, {c.out(0)}), "perm", {a.axes.begin(), a.axes.end()});
}

void slice(ExportContext& c) {
  const auto& a = c.attrs<prims::SliceAttrs>();
  const auto& xs = c.in_type(0).shape;
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t k = 0; k < a.starts.size(); ++k) {
    const bool to_end = is_symbolic(a.stops[k]) || (xs[k].is_const() && a.stops[k] >= xs[k].value());
    if (a.starts[k] == 0 && to_end && a.steps[k] == 1) continue;  // the whole axis
    if (is_symbolic(a.starts[k])) c.fail("starts at a symbolic index on axis " + std::to_string(k));
    starts.push_back(a.starts[k]);
    ends.push_back(to_end ? kMaxI64 : a.stops[k]);
    axes.push_back(static_cast<int64_t>(k));
    steps.push_back(a.steps[k]);
  }
  if (axes.empty()) {
    c.add("Identity", {c.in(0)}, {c.out(0)});
    return;
  }
  std::vector<std::string> ins{c.in(0), c.ints(starts, "starts"), c.ints(ends, "ends"), c.ints(axes, "axes")};
  bool unit = true;
  for (int64_t s : steps) unit = unit && s == 1;
  if (!unit) ins.push_back(c.ints(steps, "steps"));
  c.add("Slice", ins, {c.out(0)});
}

void broadcast_to(ExportContext& c) {
  const auto& in = c.in_type(0).shape;
  const auto& out = c.out_type(0).shape;
  const size_t lead = out.size() - in.size();
  std::vector<int64_t> s;
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k].is_const()) s.push_back(out[k].value());
    else if (k >= lead && in[k - lead] == out[k]) s.push_back(1);  // Expand keeps the input's dimension
    else c.fail("broadcasts to the symbolic dimension '" + out[k].str() + "' that the input does not have");
  }
  c.add("Expand", {c.in(0), c.ints(s, "shape")}, {c.out(0)});
}

void concat(ExportContext& c) {
  std::vector<std::string> ins;
  for (size_t i = 0; i < c.num_inputs(); ++i) ins.push_back(c.in(i));
  attr_i(c.add("Concat", ins, {c.out(0)}), "axis", c.attrs<prims::ConcatAttrs>().axis);
}

void gather(ExportContext& c) {
  attr_i(c.add("GatherElements", {c.in(0), c.in(1)}, {c.out(0)}), "axis", c.attrs<prims::GatherAttrs>().axis);
}
void scatter(ExportContext& c) {
  const auto& a = c.attrs<prims::ScatterAttrs>();
  auto& n = c.add("ScatterElements", {c.in(0), c.in(1), c.in(2)}, {c.out(0)});
  attr_i(n, "axis", a.axis);
  if (a.add) attr_s(n, "reduction", "add");
}
void embedding(ExportContext& c) { c.add("Gather", {c.in(0), c.in(1)}, {c.out(0)}); }

bool is_float(DType d) { return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16; }

void pad(ExportContext& c) {
  const auto& a = c.attrs<prims::PadAttrs>();
  std::vector<int64_t> pads(a.before.begin(), a.before.end());
  pads.insert(pads.end(), a.after.begin(), a.after.end());
  const DType dt = c.in_type(0).dtype;
  std::vector<std::string> ins{c.in(0), c.ints(pads, "pads")};
  const char* mode = a.mode == prims::PadKind::Reflect ? "reflect" : a.mode == prims::PadKind::Replicate ? "edge" : "constant";
  if (a.mode == prims::PadKind::Constant) {
    const double v = is_float(dt) || dt == DType::Bool ? a.value : static_cast<double>(a.int_value);
    if (v != 0) ins.push_back(c.scalar(v, dt, "value"));
  }
  auto& n = c.add("Pad", ins, {c.out(0)});
  if (a.mode != prims::PadKind::Constant) attr_s(n, "mode", mode);
}

void flip(ExportContext& c) {
  const auto& a = c.attrs<prims::FlipAttrs>();
  const size_t n = a.axes.size();
  if (n == 0) {
    c.add("Identity", {c.in(0)}, {c.out(0)});
    return;
  }
  c.add("Slice",
        {c.in(0), c.ints(std::vector<int64_t>(n, -1), "starts"), c.ints(std::vector<int64_t>(n, kMinI64), "ends"),
         c.ints({a.axes.begin(), a.axes.end()}, "axes"), c.ints(std::vector<int64_t>(n, -1), "steps")},
        {c.out(0)});
}

void roll(ExportContext& c) {
  const auto& a = c.attrs<prims::RollAttrs>();
  std::string y = c.in(0);
  const auto& xs = c.in_type(0).shape;
  for (size_t k = 0; k < a.shifts.size(); ++k) {
    if (a.shifts[k] == 0) continue;
    if (!xs[k].is_const()) c.fail("rolls the symbolic dimension '" + xs[k].str() + "'");
    const int64_t n = xs[k].value();
    const int64_t s = n == 0 ? 0 : ((a.shifts[k] % n) + n) % n;
    if (s == 0) continue;
    // out = concat(x[n-s:], x[:n-s]) along k.
    const std::string ax = c.ints({static_cast<int64_t>(k)}, "axis");
    std::string tail = c.op("Slice", {y, c.ints({n - s}, "tail_start"), c.ints({n}, "tail_end"), ax}, "tail");
    std::string head = c.op("Slice", {y, c.ints({0}, "head_start"), c.ints({n - s}, "head_end"), ax}, "head");
    auto& cat = c.add("Concat", {tail, head}, {c.tmp("rolled")});
    attr_i(cat, "axis", static_cast<int64_t>(k));
    y = cat.output(0);
  }
  c.add("Identity", {y}, {c.out(0)});
}

void tri(ExportContext& c) {
  const auto& a = c.attrs<prims::TriAttrs>();
  auto& n = c.add("Trilu", {c.in(0), c.scalar(static_cast<double>(a.diagonal), DType::Int64, "k")}, {c.out(0)});
  attr_i(n, "upper", a.upper ? 1 : 0);
}

void masked_fill(ExportContext& c) {
  const auto& a = c.attrs<prims::MaskedFillAttrs>();
  const DType dt = c.in_type(0).dtype;
  const double v = is_float(dt) || dt == DType::Bool ? a.value : static_cast<double>(a.int_value);
  c.add("Where", {c.in(1), c.scalar(v, dt, "value"), c.in(0)}, {c.out(0)});
}

void one_hot(ExportContext& c) {
  const auto& a = c.attrs<prims::OneHotAttrs>();
  std::string values = c.tensor(ops::from_vector(std::vector<int64_t>{0, 1}, {2}, spore::DType::Int64), "values");
  auto& n = c.add("OneHot", {c.in(0), c.scalar(static_cast<double>(a.num_classes), DType::Int64, "depth"), values}, {c.out(0)});
  attr_i(n, "axis", -1);
}

void nonzero(ExportContext& c) {
  // ONNX gives (rank, count); ours is (count, rank).
  attr_ints(c.add("Transpose", {c.op("NonZero", {c.in(0)}, "nonzero")}, {c.out(0)}), "perm", {1, 0});
}

// Factories have no inputs: run the node now and write its value.
void factory(ExportContext& c) {
  for (const auto& d : c.out_type(0).shape)
    if (!d.is_const()) c.fail("creates a tensor of symbolic shape " + ir::type_str(c.out_type(0)) + "; export with a fixed example shape");
  ir::Graph g("fold", {}, {std::make_shared<ir::Node>(c.node())}, {ir::Output{ir::ValueRef{0, 0}}});
  const std::vector<Tensor> v = transforms::interpret(g, {});
  auto& n = c.add("Constant", {}, {c.out(0)});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  tensor_to_proto(v.at(0), *a->mutable_t());
}

void fill(ExportContext& c) {
  const auto& a = c.attrs<prims::FillAttrs>();
  const auto shape = c.static_shape(c.out_type(0), "the filled tensor");
  const DType dt = c.out_type(0).dtype;
  const double v = is_float(dt) || dt == DType::Bool ? a.value : static_cast<double>(a.int_value);
  // ConstantOfShape keeps a large zeros/ones tensor out of the file.
  Tensor value = ops::full({1}, v, {transforms::from_ir(dt)});
  auto& n = c.add("ConstantOfShape", {c.ints(shape, "shape")}, {c.out(0)});
  auto* at = n.add_attribute();
  at->set_name("value");
  at->set_type(onnx::AttributeProto::TENSOR);
  tensor_to_proto(value, *at->mutable_t());
}

}  // namespace

void add_shape_exports(ExportTable& t) {
  const ExportTable rows = {
      {"reshape", reshape},   {"permute", permute},   {"slice", slice},
      {"broadcast_to", broadcast_to}, {"concat", concat}, {"gather", gather},
      {"scatter", scatter},   {"embedding", embedding}, {"pad", pad},
      {"flip", flip},         {"roll", roll},         {"tri", tri},
      {"masked_fill", masked_fill}, {"one_hot", one_hot}, {"nonzero", nonzero},
      {"fill", fill},         {"arange", factory},    {"linspace", factory},
  };
  t.insert(rows.begin(), rows.end());
}

}  // namespace spore::io::onnx_detail
