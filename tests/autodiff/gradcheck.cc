// SPDX-License-Identifier: Apache-2.0
#include "autodiff/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <sstream>

#include "autodiff/tape.h"

namespace spore::gradcheck {
namespace {

using namespace ops;

template <class... Args>
std::string msg(const Args&... args) {
  std::ostringstream os;
  os.precision(12);
  (os << ... << args);
  return os.str();
}

// Runs a check body, turning an exception (a missing rule, a dtype assertion) into a failure.
std::vector<std::string> guarded(const GradCase& c, const std::function<void(std::vector<std::string>&)>& body) {
  std::vector<std::string> fails;
  try {
    body(fails);
  } catch (const std::exception& e) {
    fails.push_back(msg("case ", c.name, " threw: ", e.what()));
  }
  return fails;
}

std::vector<TensorTree> trees(const std::vector<Tensor>& xs) { return {xs.begin(), xs.end()}; }
std::vector<Tensor> tensors(const std::vector<TensorTree>& a) {
  std::vector<Tensor> xs;
  for (const auto& t : a) xs.push_back(t.is_tensor() ? t.tensor() : Tensor());
  return xs;
}
autodiff::TreeFn tree_fn(const GradCase& c) {
  return [&c](const std::vector<TensorTree>& a) { return TensorTree(c.fn(tensors(a))); };
}

// sum(a * b) and sum |a * b| in double, outside any frame.
double dot(const Tensor& a, const Tensor& b, double* abs_sum = nullptr) {
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double s = 0, t = 0;
  for (size_t j = 0; j < x.size(); ++j) {
    s += x[j] * y[j];
    t += std::abs(x[j] * y[j]);
  }
  if (abs_sum) *abs_sum += t;
  return s;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.to_vector<double>()) m = std::max(m, std::abs(v));
  return m;
}

// The inputs with positions `pos` moved by s * dirs[k].
std::vector<Tensor> moved(const std::vector<Tensor>& xs, const std::vector<int>& pos, const std::vector<Tensor>& dirs,
                          double s) {
  auto out = xs;
  for (size_t k = 0; k < pos.size(); ++k) out[pos[k]] = xs[pos[k]] + dirs[k] * s;
  return out;
}

double step(double base, const std::vector<Tensor>& xs, const std::vector<int>& pos) {
  double m = 1;
  for (int i : pos) m = std::max(m, max_abs(xs[i]));
  return base * m;
}

// One random tensor per position, shaped like the input.
std::vector<Tensor> randoms(const std::vector<Tensor>& xs, const std::vector<int>& pos, uint64_t seed) {
  std::vector<Tensor> r;
  for (int i : pos) r.push_back(oracle::rand_tensor(xs[i].shape(), xs[i].dtype(), seed + static_cast<uint64_t>(i)));
  return r;
}

struct Fd {
  double value = 0;  // Richardson extrapolation of the central differences
  double err = 0;    // |D(h) - D(2h)| / 3: the error of D(h), more than the reference's
  double scale = 0;  // sum |w * (F(x+hd) - F(x-hd)) / 2h|
  double floor = 0;  // kUlps * eps * sum |w * F(x+hd)| / h: the rounding of D(h)
};

// Differences along s of <w, F(s)> for a function of several tensors (the gradient, per
// position) or one (the output).
Fd central_fd(const std::function<std::vector<Tensor>(double)>& F, const std::vector<Tensor>& w, double h) {
  double size = 0;
  auto D = [&](double s, double* scale) {
    auto p = F(s), m = F(-s);
    double v = 0;
    for (size_t k = 0; k < w.size(); ++k) {
      v += dot((p[k] - m[k]) * (1.0 / (2 * s)), w[k], scale);
      if (scale) dot(p[k], w[k], &size);
    }
    return v;
  };
  Fd r;
  const double d1 = D(h, &r.scale), d2 = D(2 * h, nullptr);
  r.floor = kUlps * std::numeric_limits<double>::epsilon() * size / h;
  r.value = (4 * d1 - d2) / 3;
  r.err = std::abs(d1 - d2) / 3;
  return r;
}

void expect_fd(std::vector<std::string>& fails, double got, const Fd& fd, double rtol, const std::string& what) {
  const double tol = rtol * fd.scale + fd.floor;
  if (fd.err > tol) {
    fails.push_back(msg(what, ": finite differences are unreliable here: D(h) and D(2h) differ by ", 3 * fd.err,
                        " (error of D(h) ", fd.err, " over fd_rtol * scale + rounding = ", tol, "; scale ", fd.scale,
                        "); the sample is near a kink or the kernel is not float64-accurate: move the inputs, "
                        "raise fd_rtol or lower the case's order"));
    return;
  }
  if (!(std::abs(got - fd.value) <= tol + fd.err))
    fails.push_back(msg(what, ": ", got, " but finite differences give ", fd.value, " (|diff| ",
                        std::abs(got - fd.value), " > tolerance ", tol + fd.err, "; scale ", fd.scale, ")"));
}

// `scale`: the larger sum of |terms| of the two inner products; `size`: sum |w * F(x)| of the
// function differentiated, whose rounding bounds what cancels in a derivative that is zero.
void expect_agree(std::vector<std::string>& fails, double a, double b, double scale, double size,
                  const std::string& what) {
  const double tol = kAgreeRtol * (scale + size);
  if (!(std::abs(a - b) <= tol))
    fails.push_back(msg(what, ": ", a, " vs ", b, " (|diff| ", std::abs(a - b), " > ", tol, ")"));
}

// Cotangents of positions `pos` for the output cotangent w.
std::vector<Tensor> pullback(const GradCase& c, const std::vector<Tensor>& xs, const std::vector<int>& pos,
                             const Tensor& w) {
  auto r = autodiff::vjp("gradcheck", tree_fn(c), trees(xs), pos, false, false);
  std::vector<Tensor> g;
  for (const auto& t : r.pullback(TensorTree(w))) g.push_back(t.tensor());
  return g;
}

// The output's tangent for tangents `dirs` of positions `pos` (the others constant).
Tensor pushforward(const GradCase& c, const std::vector<Tensor>& xs, const std::vector<int>& pos,
                   const std::vector<Tensor>& dirs) {
  std::vector<TensorTree> tangents(xs.size());
  for (size_t k = 0; k < pos.size(); ++k) tangents[pos[k]] = TensorTree(dirs[k]);
  return autodiff::jvp("gradcheck", tree_fn(c), trees(xs), tangents).second.tensor();
}

// The output cotangent of a case: random, the output's type. `size`: sum |w * fn(x)|.
Tensor output_weight(const GradCase& c, double* size = nullptr) {
  Tensor y = c.fn(c.inputs);
  if (!is_floating(y.dtype()))
    throw Error(msg("the function returns ", dtype_name(y.dtype()), "; a gradient case must return a floating tensor"));
  Tensor w = oracle::rand_tensor(y.shape(), y.dtype(), 99);
  if (size) dot(y, w, size);
  return w;
}

void require_float64(const GradCase& c, const std::vector<int>& pos) {
  for (int i : pos)
    if (c.inputs[i].dtype() != DType::Float64)
      throw Error(msg("input ", i, " is ", dtype_name(c.inputs[i].dtype()),
                      "; finite differences need float64 inputs (build them with DType::Float64)"));
}

// sum_k sum(a[k] * b[k]) as a tensor, for the outer transform to differentiate.
Tensor contract(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  Tensor s;
  for (size_t k = 0; k < a.size(); ++k) {
    Tensor t = sum(a[k] * b[k]);
    s = s.defined() ? s + t : t;
  }
  return s;
}

std::vector<Tensor> leaves_of(const std::vector<TensorTree>& g) {
  std::vector<Tensor> out;
  for (const auto& t : g) out.push_back(t.tensor());
  return out;
}

}  // namespace

std::vector<int> positions(const GradCase& c) {
  if (!c.wrt.empty()) return c.wrt;
  std::vector<int> p;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (is_floating(c.inputs[i].dtype())) p.push_back(static_cast<int>(i));
  return p;
}

std::set<std::string> recorded_primitives(const GradCase& c) {
  autodiff::Tape tape;
  std::vector<Tensor> xs = c.inputs;
  {
    autodiff::FrameGuard open(&tape);
    for (int i : positions(c)) xs[i] = tape.track(xs[i]);
    c.fn(xs);
  }
  auto names = tape.recorded_primitives();
  return {names.begin(), names.end()};
}

std::vector<std::string> check_coverage(const GradCase& c) {
  return guarded(c, [&](std::vector<std::string>& fails) {
    if (c.prims.empty()) fails.push_back("the case names no primitive (GradCase::prims)");
    const auto rec = recorded_primitives(c);
    for (const auto& p : c.prims) {
      if (rec.count(p)) continue;
      std::string seen;
      for (const auto& r : rec) seen += (seen.empty() ? "" : ", ") + r;
      fails.push_back(msg("primitive '", p, "' is not recorded on the tape (recorded: ", seen.empty() ? "none" : seen,
                          "); the function must apply it to a differentiated input"));
    }
  });
}

std::vector<std::string> check_first_order(const GradCase& c) {
  if (c.order < 1) return {};
  return guarded(c, [&](std::vector<std::string>& fails) {
    const auto pos = positions(c);
    require_float64(c, pos);
    const Tensor w = output_weight(c);
    const auto dirs = randoms(c.inputs, pos, 7);
    for (size_t k = 0; k < pos.size(); ++k) {
      const int i = pos[k];
      const std::vector<int> one{i};
      const std::vector<Tensor> d{dirs[k]};
      const Fd fd = central_fd([&](double s) { return std::vector<Tensor>{c.fn(moved(c.inputs, one, d, s))}; }, {w},
                               step(kStep1, c.inputs, one));
      const Tensor g = pullback(c, c.inputs, one, w)[0];
      expect_fd(fails, dot(g, dirs[k]), fd, c.fd_rtol, msg("reverse mode (vjp), input ", i, ": <J^T w, d>"));
      const Tensor t = pushforward(c, c.inputs, one, d);
      expect_fd(fails, dot(t, w), fd, c.fd_rtol, msg("forward mode (jvp), input ", i, ": <w, J d>"));
    }
  });
}

std::vector<std::string> check_jvp_vjp_agree(const GradCase& c) {
  return guarded(c, [&](std::vector<std::string>& fails) {
    const auto pos = positions(c);
    double size = 0;
    const Tensor w = output_weight(c, &size);
    const auto dirs = randoms(c.inputs, pos, 7);
    const auto g = pullback(c, c.inputs, pos, w);
    const Tensor t = pushforward(c, c.inputs, pos, dirs);
    double sv = 0, sj = 0, rev = 0;
    for (size_t k = 0; k < pos.size(); ++k) rev += dot(g[k], dirs[k], &sv);
    const double fwd = dot(t, w, &sj);
    expect_agree(fails, fwd, rev, std::max(sv, sj), size, "jvp <w, J d> against vjp <J^T w, d> (all inputs at once)");
  });
}

std::vector<std::string> check_second_order(const GradCase& c) {
  if (c.order < 2) return {};
  return guarded(c, [&](std::vector<std::string>& fails) {
    const auto pos = positions(c);
    require_float64(c, pos);
    const Tensor w = output_weight(c);
    const auto d = randoms(c.inputs, pos, 7);
    const auto v = randoms(c.inputs, pos, 31);
    const auto args = trees(c.inputs);
    // G(x) = grad <w, fn(x)>; every product below is v^T H d with H its Jacobian.
    auto G = [&](const std::vector<Tensor>& xs) { return pullback(c, xs, pos, w); };
    const Fd fd = central_fd([&](double s) { return G(moved(c.inputs, pos, d, s)); }, v, step(kStep2, c.inputs, pos));

    // Reverse over reverse: grad of x -> <G(x), v>, along d.
    auto ror_fn = [&](const std::vector<TensorTree>& a) { return TensorTree(contract(G(tensors(a)), v)); };
    auto ror = autodiff::vjp("gradcheck", ror_fn, args, pos, false, false);
    const auto hv = leaves_of(ror.pullback(TensorTree(ones_like(ror.out.tensor()))));
    // Forward over reverse: jvp of G along d, against v.
    std::vector<TensorTree> tangents(c.inputs.size());
    for (size_t k = 0; k < pos.size(); ++k) tangents[pos[k]] = TensorTree(d[k]);
    auto gfn = [&](const std::vector<TensorTree>& a) { return TensorTree(G(tensors(a))); };
    const auto hd = autodiff::jvp("gradcheck", gfn, args, tangents).second.leaves();
    // Reverse over forward: grad of x -> <w, J(x) v>, along d.
    auto rof_fn = [&](const std::vector<TensorTree>& a) { return TensorTree(sum(pushforward(c, tensors(a), pos, v) * w)); };
    auto rof = autodiff::vjp("gradcheck", rof_fn, args, pos, false, false);
    const auto hv2 = leaves_of(rof.pullback(TensorTree(ones_like(rof.out.tensor()))));
    // Forward over forward: jvp along d of x -> <w, J(x) v>.
    const double x_fof = autodiff::jvp("gradcheck", rof_fn, args, tangents).second.tensor().item<double>();

    double s_ror = 0, s_for = 0, s_rof = 0, x_ror = 0, x_for = 0, x_rof = 0, size = 0;
    const auto g = G(c.inputs);
    for (size_t k = 0; k < pos.size(); ++k) {
      dot(g[k], v[k], &size);
      x_ror += dot(hv[k], d[k], &s_ror);
      x_for += dot(hd[k], v[k], &s_for);
      x_rof += dot(hv2[k], d[k], &s_rof);
    }
    expect_fd(fails, x_ror, fd, c.fd_rtol, "reverse-over-reverse d^T H v");
    expect_fd(fails, x_for, fd, c.fd_rtol, "forward-over-reverse v^T H d");
    expect_fd(fails, x_rof, fd, c.fd_rtol, "reverse-over-forward d^T H v");
    expect_fd(fails, x_fof, fd, c.fd_rtol, "forward-over-forward d^T H v");
    expect_agree(fails, x_for, x_ror, std::max(s_for, s_ror), size, "forward-over-reverse against reverse-over-reverse");
    expect_agree(fails, x_rof, x_ror, std::max(s_rof, s_ror), size, "reverse-over-forward against reverse-over-reverse");
    expect_agree(fails, x_fof, x_ror, std::max(s_rof, s_ror), size, "forward-over-forward against reverse-over-reverse");
  });
}

}  // namespace spore::gradcheck
