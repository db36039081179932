// SPDX-License-Identifier: Apache-2.0
// Oracle cases for reductions: every op x dtypes x axes patterns (all, one, several, negative,
// keepdims) x layouts (contiguous, strided, transposed, broadcast) x edge cases (0-d, zero-size,
// NaN/Inf), plus sizes long enough to cross the engine's chunks and its outer-reduction path.
#include "oracle.h"

#include <cmath>

namespace spore::oracle {
namespace {

using ReduceFn = Tensor (*)(const Tensor&, const ops::Axes&, bool);

struct Row {
  const char* name;
  ReduceFn fn;
  bool ints;      // defined on integer and bool tensors
  bool identity;  // defined on a zero-size extent
  Fill fill;
};

const std::vector<Row>& rows() {
  using namespace ops;
  static const std::vector<Row> r = {
      {"sum", [](const Tensor& x, const Axes& a, bool k) { return sum(x, a, k); }, true, true, Fill::Edge},
      {"mean", [](const Tensor& x, const Axes& a, bool k) { return mean(x, a, k); }, false, true, Fill::Edge},
      {"prod", [](const Tensor& x, const Axes& a, bool k) { return prod(x, a, k); }, true, true, Fill::Positive},
      {"amax", [](const Tensor& x, const Axes& a, bool k) { return amax(x, a, k); }, true, false, Fill::Edge},
      {"amin", [](const Tensor& x, const Axes& a, bool k) { return amin(x, a, k); }, true, false, Fill::Edge},
      {"all", [](const Tensor& x, const Axes& a, bool k) { return all(x, a, k); }, true, true, Fill::Int},
      {"any", [](const Tensor& x, const Axes& a, bool k) { return any(x, a, k); }, true, true, Fill::Int},
      {"var", [](const Tensor& x, const Axes& a, bool k) { return var(x, a, 1, k); }, false, true, Fill::Normal},
      {"std", [](const Tensor& x, const Axes& a, bool k) { return ops::std(x, a, 1, k); }, false, true, Fill::Normal},
      {"logsumexp", [](const Tensor& x, const Axes& a, bool k) { return logsumexp(x, a, k); }, false, true, Fill::Edge},
  };
  return r;
}

struct Pattern {
  Shape shape;
  ops::Axes axes;
  bool keepdims;
};

Attrs attrs_of(const ops::Axes& axes, bool keepdims) {
  Attrs a = {{"axes", std::vector<int64_t>(axes.begin(), axes.end())}, {"keepdims", keepdims}};
  return a;
}

void add_reduce(Writer& w, const Row& row, const Tensor& x, const ops::Axes& axes, bool keepdims,
                Attrs extra = {}, CaseOptions opt = {}) {
  Attrs a = attrs_of(axes, keepdims);
  a.insert(a.end(), extra.begin(), extra.end());
  if (std::string(row.name) == "var" || std::string(row.name) == "std") a.push_back({"correction", int64_t{1}});
  w.add(row.name, {x}, {row.fn(x, axes, keepdims)}, a, opt);
}

bool has_zero_extent(const Shape& s, const ops::Axes& axes) {
  for (size_t d = 0; d < s.size(); ++d) {
    bool r = axes.empty();
    for (int64_t a : axes) r |= (a < 0 ? a + static_cast<int64_t>(s.size()) : a) == static_cast<int64_t>(d);
    if (r && s[d] == 0) return true;
  }
  return false;
}

}  // namespace

static void index_and_scan_cases(Writer& w);

SPORE_ORACLE_FAMILY(reduction) {
  index_and_scan_cases(w);
  uint64_t seed = 1000;
  const std::vector<Pattern> patterns = {
      {{}, {}, false},          {{}, {0}, true},         {{7}, {}, false},         {{7}, {-1}, true},
      {{3, 33}, {}, true},      {{3, 33}, {0}, false},   {{3, 33}, {1}, false},    {{3, 33}, {-1, 0}, false},
      {{4, 5, 130}, {2}, false}, {{4, 5, 130}, {0}, true}, {{4, 5, 130}, {1}, false}, {{4, 5, 130}, {0, 2}, false},
      {{4, 5, 130}, {-1, -3}, true}, {{64, 70}, {0}, false}, {{2, 0, 3}, {1}, false}, {{2, 0, 3}, {0}, true},
      {{2, 0, 3}, {}, false},
  };
  for (const Row& row : rows()) {
    for (DType dt : kFloatTypes)
      for (const Pattern& p : patterns) {
        // amax/amin over an empty extent are errors (tested in reduction_test.cc).
        if (!row.identity && has_zero_extent(p.shape, p.axes)) continue;
        add_reduce(w, row, rand_tensor(p.shape, dt, seed++, row.fill), p.axes, p.keepdims);
        // Edge fills put a NaN in most long runs: check finite values too.
        if (row.fill == Fill::Edge && dt == DType::Float32)
          add_reduce(w, row, rand_tensor(p.shape, dt, seed++, Fill::Normal), p.axes, p.keepdims);
      }
    // Layouts: strided, transposed, broadcast (stride 0).
    for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
      Tensor nc = non_contiguous(rand_tensor({6, 9}, dt, seed++, row.fill));
      for (const ops::Axes& ax : {ops::Axes{}, ops::Axes{0}, ops::Axes{1}}) add_reduce(w, row, nc, ax, false);
      Tensor tr = rand_tensor({5, 7, 3}, dt, seed++, row.fill).transpose(0, 2);
      for (const ops::Axes& ax : {ops::Axes{}, ops::Axes{0}, ops::Axes{2}, ops::Axes{1, 2}}) add_reduce(w, row, tr, ax, true);
      Tensor bc = rand_tensor({1, 8}, dt, seed++, row.fill).expand({6, 8});
      for (const ops::Axes& ax : {ops::Axes{}, ops::Axes{0}, ops::Axes{1}}) add_reduce(w, row, bc, ax, false);
    }
    // Long extents: several chunks on the inner path, several row chunks on the outer path.
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
      const Fill fill = std::string(row.name) == "prod" ? Fill::Positive : Fill::Normal;
      if (std::string(row.name) == "prod") continue;  // long products overflow: checked on short runs
      const CaseOptions opt;  // the per-dtype defaults hold even over 20000-element sums
      Tensor a = rand_tensor({3, 20000}, dt, seed++, fill);
      add_reduce(w, row, a, {1}, false, {}, opt);
      add_reduce(w, row, a, {}, false, {}, opt);
      // Several reduced dims that do not coalesce, with chunk boundaries inside a run.
      Tensor c3 = rand_tensor({40, 3, 300}, dt, seed++, fill);
      add_reduce(w, row, c3, {0, 2}, false, {}, opt);
      Tensor s3 = rand_tensor({30, 21, 64}, dt, seed++, fill).slice(1, 0, 21, 2);
      add_reduce(w, row, s3, {0, 1}, true, {}, opt);
      Tensor b = rand_tensor({3000, 40}, dt, seed++, fill);
      add_reduce(w, row, b, {0}, false, {}, opt);
      add_reduce(w, row, b.transpose(0, 1), {1}, true, {}, opt);
    }
    if (row.ints)
      for (DType dt : {DType::Int64, DType::Int32, DType::Int8, DType::UInt8, DType::Int16, DType::Bool}) {
        const Fill f = dt == DType::Bool ? Fill::Bool : Fill::Int;
        for (const Pattern& p : {Pattern{{}, {}, false}, Pattern{{3, 33}, {1}, false}, Pattern{{4, 5, 6}, {0, 2}, true},
                                 Pattern{{64, 70}, {0}, false}, Pattern{{2, 0, 3}, {1}, false}}) {
          if (!row.identity && has_zero_extent(p.shape, p.axes)) continue;
          add_reduce(w, row, rand_tensor(p.shape, dt, seed++, f), p.axes, p.keepdims);
        }
        add_reduce(w, row, non_contiguous(rand_tensor({6, 9}, dt, seed++, f)), {0}, false);
      }
  }
  // var / std corrections.
  for (const char* name : {"var", "std"})
    for (int64_t c : {0, 2, 5})
      for (DType dt : {DType::Float32, DType::Float64}) {
        Tensor x = rand_tensor({4, 5}, dt, seed++);
        Tensor y = std::string(name) == "var" ? ops::var(x, {1}, c, false) : ops::std(x, {1}, c, false);
        w.add(name, {x}, {y}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}, {"correction", c}});
      }
  // norms
  for (double p : {1.0, 2.0, double(INFINITY)})
    for (DType dt : kFloatTypes)
      for (const Pattern& pt : {Pattern{{}, {}, false}, Pattern{{7}, {}, false}, Pattern{{3, 33}, {1}, true},
                                Pattern{{4, 5, 130}, {0, 2}, false}, Pattern{{64, 70}, {0}, false},
                                Pattern{{2, 0, 3}, {0}, false}}) {
        if (std::isinf(p) && numel_of(pt.shape) == 0) continue;
        Tensor x = rand_tensor(pt.shape, dt, seed++, Fill::Edge);
        Attrs a = attrs_of(pt.axes, pt.keepdims);
        a.push_back({"p", p});
        w.add("norm", {x}, {ops::norm(x, p, pt.axes, pt.keepdims)}, a);
        Tensor nc = non_contiguous(rand_tensor({6, 9}, dt, seed++, Fill::Normal));
        a = attrs_of({0}, false);
        a.push_back({"p", p});
        w.add("norm", {nc}, {ops::norm(nc, p, {0}, false)}, a);
      }
}


// argmax/argmin and cumsum/cumprod (part of the reduction family).
static void index_and_scan_cases(Writer& w) {
  uint64_t seed = 5000;
  // argmax / argmin: one axis (incl. negative, keepdims), flattened, 0-d, NaN, ties, strided.
  struct ArgCase {
    Shape shape;
    int64_t axis;
    bool keepdims;
  };
  const std::vector<ArgCase> arg_cases = {{{}, 0, false}, {{7}, 0, false}, {{3, 33}, 1, true}, {{3, 33}, 0, false},
                                          {{4, 5, 130}, -2, false}, {{64, 70}, 0, false}, {{2, 0, 3}, 0, false}};
  for (bool is_max : {true, false}) {
    const char* name = is_max ? "argmax" : "argmin";
    auto axis_fn = is_max ? static_cast<Tensor (*)(const Tensor&, int64_t, bool)>(ops::argmax)
                          : static_cast<Tensor (*)(const Tensor&, int64_t, bool)>(ops::argmin);
    auto flat_fn = is_max ? static_cast<Tensor (*)(const Tensor&)>(ops::argmax)
                          : static_cast<Tensor (*)(const Tensor&)>(ops::argmin);
    std::vector<DType> dts = kFloatTypes;
    dts.insert(dts.end(), kIntTypes.begin(), kIntTypes.end());
    for (DType dt : dts)
      for (Fill f : {Fill::Edge, Fill::Int}) {
        if (f == Fill::Edge && !is_floating(dt)) continue;
        for (const ArgCase& c : arg_cases) {
          Tensor x = rand_tensor(c.shape, dt, seed++, f);
          w.add(name, {x}, {axis_fn(x, c.axis, c.keepdims)}, {{"axis", c.axis}, {"keepdims", c.keepdims}});
          if (x.numel() > 0) w.add(name, {x}, {flat_fn(x)}, {{"flat", true}});
        }
        Tensor nc = non_contiguous(rand_tensor({6, 9}, dt, seed++, f));
        w.add(name, {nc}, {axis_fn(nc, 0, false)}, {{"axis", int64_t{0}}, {"keepdims", false}});
        w.add(name, {nc}, {flat_fn(nc)}, {{"flat", true}});
        Tensor tr = rand_tensor({5, 7}, dt, seed++, f).transpose(0, 1);
        w.add(name, {tr}, {axis_fn(tr, 1, true)}, {{"axis", int64_t{1}}, {"keepdims", true}});
      }
  }
  // cumsum / cumprod
  for (bool is_prod : {false, true}) {
    const char* name = is_prod ? "cumprod" : "cumsum";
    auto fn = is_prod ? ops::cumprod : ops::cumsum;
    struct ScanCase {
      Shape shape;
      int64_t axis;
    };
    const std::vector<ScanCase> cases = {{{}, 0}, {{7}, 0}, {{3, 33}, 1}, {{3, 33}, 0}, {{4, 5, 6}, -2},
                                         {{2, 0, 3}, 2}, {{2, 0, 3}, 1}};
    std::vector<DType> dts = kFloatTypes;
    dts.insert(dts.end(), kIntTypes.begin(), kIntTypes.end());
    dts.push_back(DType::Bool);
    for (DType dt : dts) {
      const Fill f = dt == DType::Bool ? Fill::Bool : !is_floating(dt) ? Fill::Int : is_prod ? Fill::Positive : Fill::Edge;
      for (const ScanCase& c : cases) {
        Tensor x = rand_tensor(c.shape, dt, seed++, f);
        w.add(name, {x}, {fn(x, c.axis)}, {{"axis", c.axis}});
      }
      Tensor nc = non_contiguous(rand_tensor({6, 9}, dt, seed++, f));
      w.add(name, {nc}, {fn(nc, 0)}, {{"axis", int64_t{0}}});
      Tensor tr = rand_tensor({5, 7, 2}, dt, seed++, f).transpose(0, 2);
      w.add(name, {tr}, {fn(tr, 1)}, {{"axis", int64_t{1}}});
      Tensor bc = rand_tensor({1, 8}, dt, seed++, f).expand({6, 8});
      w.add(name, {bc}, {fn(bc, 0)}, {{"axis", int64_t{0}}});
    }
    Tensor big = rand_tensor({3, 5000}, DType::Float32, seed++, Fill::Normal);
    if (!is_prod) w.add(name, {big}, {fn(big, 1)}, {{"axis", int64_t{1}}});
  }
}

}  // namespace spore::oracle
