// SPDX-License-Identifier: Apache-2.0
#include "spore/io/compare.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "spore/error.h"

namespace spore::io {
namespace {

std::string shape_of(const Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

bool same_shape(const Tensor& a, const Tensor& b) { return a.shape() == b.shape(); }

// Errors are measured in float64 so that the comparison itself adds no rounding.
void measure(const Tensor& a, const Tensor& b, double threshold, LayerDiff& d) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double max_abs = 0, scale = 0, dot = 0, nx = 0, ny = 0;
  bool nonfinite_mismatch = false;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool fx = std::isfinite(x[i]), fy = std::isfinite(y[i]);
    if (!fx || !fy) {
      // inf == inf and nan-for-nan agree; anything else is a divergence.
      nonfinite_mismatch |= !(std::isnan(x[i]) && std::isnan(y[i])) && x[i] != y[i];
      continue;
    }
    max_abs = std::max(max_abs, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(x[i]));
    dot += x[i] * y[i];
    nx += x[i] * x[i];
    ny += y[i] * y[i];
  }
  d.max_abs = max_abs;
  d.max_rel = scale > 0 ? max_abs / scale : (max_abs > 0 ? INFINITY : 0);
  d.cosine = nx == 0 && ny == 0 ? 1.0 : (nx == 0 || ny == 0 ? 0.0 : dot / std::sqrt(nx * ny));
  d.diverged = nonfinite_mismatch || d.max_rel > threshold;
}

std::string json_number(double v) {
  if (std::isnan(v)) return "null";
  if (std::isinf(v)) return v > 0 ? "1e309" : "-1e309";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

CompareReport compare_layers(std::span<const LayerValue> a, std::span<const LayerValue> b, double threshold) {
  SPORE_CHECK(threshold >= 0 && std::isfinite(threshold), "[compare] the threshold must be a finite number >= 0, got ",
              threshold);
  CompareReport r;
  r.threshold = threshold;
  std::vector<int> match(a.size(), -1);
  std::vector<bool> used(b.size(), false);
  std::vector<std::string> how(a.size());
  // 1. By name (the first unused layer of B with that name and the same shape).
  std::multimap<std::string, size_t> by_name;
  for (size_t j = 0; j < b.size(); ++j) by_name.emplace(b[j].layer, j);
  for (size_t i = 0; i < a.size(); ++i) {
    auto [lo, hi] = by_name.equal_range(a[i].layer);
    for (auto it = lo; it != hi; ++it) {
      if (!used[it->second] && same_shape(a[i].value, b[it->second].value)) {
        match[i] = static_cast<int>(it->second);
        used[it->second] = true;
        how[i] = "name";
        break;
      }
    }
  }
  // 2. The rest by position: in order, the next unused layer of B of the same shape after the
  //    last matched one, so that matches never cross.
  size_t pos = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (match[i] >= 0) {
      pos = static_cast<size_t>(match[i]) + 1;
      continue;
    }
    for (size_t j = pos; j < b.size(); ++j) {
      if (!used[j] && same_shape(a[i].value, b[j].value)) {
        match[i] = static_cast<int>(j);
        used[j] = true;
        how[i] = "position";
        pos = j + 1;
        break;
      }
    }
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (match[i] < 0) {
      r.unmatched_a.push_back(a[i].layer);
      continue;
    }
    const LayerValue& lb = b[static_cast<size_t>(match[i])];
    LayerDiff d;
    d.layer_a = a[i].layer;
    d.layer_b = lb.layer;
    d.op = a[i].op;
    d.shape = shape_of(a[i].value);
    d.matched_by = how[i];
    measure(a[i].value, lb.value, threshold, d);
    if (d.diverged && r.first_diverging < 0) r.first_diverging = static_cast<int>(r.layers.size());
    r.layers.push_back(std::move(d));
  }
  for (size_t j = 0; j < b.size(); ++j)
    if (!used[j]) r.unmatched_b.push_back(b[j].layer);
  return r;
}

std::string format_report(const CompareReport& r) {
  size_t wa = 5, wb = 5;
  for (const LayerDiff& d : r.layers) {
    wa = std::max(wa, d.layer_a.size());
    wb = std::max(wb, d.layer_b.size());
  }
  wa = std::min<size_t>(wa, 48);
  wb = std::min<size_t>(wb, 48);
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "  %-*s  %-*s  %-18s  %10s  %10s  %9s\n", static_cast<int>(wa), "layer A",
                static_cast<int>(wb), "layer B", "shape", "max abs", "max rel", "cosine");
  os << line;
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerDiff& d = r.layers[i];
    std::snprintf(line, sizeof line, "%c %-*.*s  %-*.*s  %-18.18s  %10.3e  %10.3e  %9.6f%s\n",
                  static_cast<int>(i) == r.first_diverging ? '>' : ' ', static_cast<int>(wa), static_cast<int>(wa),
                  d.layer_a.c_str(), static_cast<int>(wb), static_cast<int>(wb), d.layer_b.c_str(), d.shape.c_str(),
                  d.max_abs, d.max_rel, d.cosine, d.diverged ? "  DIVERGED" : "");
    os << line;
  }
  if (r.first_diverging >= 0) {
    const LayerDiff& d = r.layers[static_cast<size_t>(r.first_diverging)];
    os << "first diverging layer: " << d.layer_a << " (B: " << d.layer_b << ", op " << d.op << "): max rel "
       << d.max_rel << " > threshold " << r.threshold << "\n";
  } else {
    os << "no layer diverges (threshold " << r.threshold << ", " << r.layers.size() << " layers matched)\n";
  }
  if (!r.unmatched_a.empty() || !r.unmatched_b.empty())
    os << "unmatched: " << r.unmatched_a.size() << " layer(s) of A, " << r.unmatched_b.size() << " of B\n";
  return os.str();
}

std::string report_json(const CompareReport& r) {
  std::ostringstream os;
  os << "{\"threshold\": " << json_number(r.threshold) << ", \"first_diverging\": ";
  if (r.first_diverging >= 0) {
    os << json_string(r.layers[static_cast<size_t>(r.first_diverging)].layer_a);
  } else {
    os << "null";
  }
  os << ", \"layers\": [";
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerDiff& d = r.layers[i];
    os << (i ? ", " : "") << "{\"layer_a\": " << json_string(d.layer_a) << ", \"layer_b\": " << json_string(d.layer_b)
       << ", \"op\": " << json_string(d.op) << ", \"shape\": " << json_string(d.shape)
       << ", \"matched_by\": " << json_string(d.matched_by) << ", \"max_abs\": " << json_number(d.max_abs)
       << ", \"max_rel\": " << json_number(d.max_rel) << ", \"cosine\": " << json_number(d.cosine)
       << ", \"diverged\": " << (d.diverged ? "true" : "false") << "}";
  }
  os << "], \"unmatched_a\": " << r.unmatched_a.size() << ", \"unmatched_b\": " << r.unmatched_b.size() << "}";
  return os.str();
}

}  // namespace spore::io
