// SPDX-License-Identifier: Apache-2.0
// Printing in PyTorch's style: one number format for the whole tensor (integers "1.", fixed
// "1.2500" or scientific "1.2500e+08"), columns padded to a common width, and summarized with
// "..." when the tensor has more than 1000 elements (3 items kept at each end of every axis).
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "spore/tensor.h"

namespace spore {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdge = 3;

struct Format {
  enum Kind { Int, IntFloat, Fixed, Sci, Bool } kind = Int;
  int width = 1;
};

std::string fmt_one(double v, Format::Kind k) {
  char buf[64];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  switch (k) {
    case Format::Bool: return v != 0 ? "True" : "False";
    case Format::Int: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v)); break;
    case Format::IntFloat: std::snprintf(buf, sizeof buf, "%.0f.", v); break;
    case Format::Fixed: std::snprintf(buf, sizeof buf, "%.4f", v); break;
    case Format::Sci: std::snprintf(buf, sizeof buf, "%.4e", v); break;
  }
  return buf;
}

// Which indices of an axis of size n are shown (all, or kEdge at each end with a gap marker -1).
std::vector<int64_t> shown(int64_t n, bool summarize) {
  std::vector<int64_t> idx;
  if (!summarize || n <= 2 * kEdge) {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < kEdge; ++i) idx.push_back(i);
    idx.push_back(-1);
    for (int64_t i = n - kEdge; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

class Printer {
 public:
  Printer(const Tensor& t, std::vector<double> values, Format f, bool summarize)
      : t_(t), v_(std::move(values)), f_(f), summarize_(summarize) {}

  void print(std::ostream& os, int axis, int64_t flat, int indent) const {
    const auto& shape = t_.shape();
    if (axis == t_.dim()) {
      std::string s = fmt_one(v_[static_cast<size_t>(flat)], f_.kind);
      os << std::string(static_cast<size_t>(std::max<int>(0, f_.width - static_cast<int>(s.size()))), ' ') << s;
      return;
    }
    int64_t stride = 1;
    for (int64_t d = axis + 1; d < t_.dim(); ++d) stride *= shape[d];
    os << '[';
    auto idx = shown(shape[axis], summarize_);
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k) {
        os << ',';
        if (axis == t_.dim() - 1) {
          os << ' ';
        } else {
          os << std::string(static_cast<size_t>(t_.dim() - 1 - axis), '\n') << std::string(static_cast<size_t>(indent + axis + 1), ' ');
        }
      }
      if (idx[k] < 0) {
        if (axis == t_.dim() - 1) os << ' ';  // PyTorch prints " ..." in a row
        os << "...";
        continue;
      }
      print(os, axis + 1, flat + idx[k] * stride, indent);
    }
    os << ']';
  }

 private:
  const Tensor& t_;
  std::vector<double> v_;
  Format f_;
  bool summarize_;
};

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::ostringstream os;
  const bool meta = device().type == DeviceType::Meta;
  std::string suffix;
  if (dtype() != DType::Float32 && dtype() != DType::Int64 && dtype() != DType::Bool)
    suffix += std::string(", dtype=") + std::string(dtype_name(dtype()));
  if (meta) {
    os << "tensor(..., device='meta', size=" << shape_str(shape()) << suffix << ")";
    return os.str();
  }
  std::vector<double> v = to_vector<double>();
  Format f;
  if (dtype() == DType::Bool) {
    f.kind = Format::Bool;
  } else if (is_floating(dtype())) {
    double amax = 0, amin = INFINITY;
    bool all_int = true;
    for (double x : v) {
      if (!std::isfinite(x)) continue;
      amax = std::max(amax, std::fabs(x));
      if (x != 0) amin = std::min(amin, std::fabs(x));
      all_int = all_int && x == std::floor(x);
    }
    if (all_int && amax < 1e8) f.kind = Format::IntFloat;
    else if (amax >= 1e8 || (amin < 1e-4 && amin > 0) || (amin != INFINITY && amax / amin > 1000)) f.kind = Format::Sci;
    else f.kind = Format::Fixed;
  }
  const bool summarize = numel() > kThreshold;
  // Like PyTorch, the column width comes from the finite values; nan/inf print unpadded.
  bool any_finite = false;
  for (double x : v) any_finite = any_finite || std::isfinite(x);
  for (double x : v)
    if (std::isfinite(x) || !any_finite) f.width = std::max<int>(f.width, static_cast<int>(fmt_one(x, f.kind).size()));
  os << "tensor(";
  if (numel() == 0 && dim() > 0) {
    os << "[]";
    if (dim() > 1) os << ", size=" << shape_str(shape());
  } else {
    Printer(*this, std::move(v), f, summarize).print(os, 0, 0, 7);
  }
  os << suffix << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace spore
