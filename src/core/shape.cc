// SPDX-License-Identifier: Apache-2.0
#include "spore/shape.h"

#include <string>

#include "spore/error.h"

namespace spore {

Dim numel_of(const Shape& s) {
  Dim n = 1;
  for (Dim d : s) n = dim_mul(n, d);
  return n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size(), 0);
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i] < 0 ? 1 : std::max<int64_t>(s[i], 1);
  }
  return st;
}

Strides channels_last_strides(const Shape& s) {
  if (s.size() < 3) return contiguous_strides(s);
  auto size = [](Dim d) { return d < 0 ? int64_t{1} : std::max<int64_t>(d, 1); };
  Strides st(s.size(), 0);
  int64_t acc = 1;
  st[1] = acc;
  acc *= size(s[1]);
  for (size_t i = s.size(); i-- > 2;) {
    st[i] = acc;
    acc *= size(s[i]);
  }
  st[0] = acc;
  return st;
}

std::string shape_str(std::span<const Dim> s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += dim_str(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

int normalize_axis(int64_t axis, int64_t rank, const char* op) {
  int64_t r = rank == 0 ? 1 : rank;  // scalars accept axis 0 / -1 like PyTorch
  SPORE_CHECK(axis >= -r && axis < r, "[", op, "] axis ", axis, " is out of range for a tensor of rank ",
              rank, "; use an axis in [", -r, ", ", r - 1, "]");
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    Dim da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    Dim db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      throw Error(detail::cat("[", op, "] shapes ", shape_str(a), " and ", shape_str(b),
                              " cannot broadcast: dimension ", i, " is ", dim_str(da), " vs ", dim_str(db),
                              "; make them equal or 1"));
    }
  }
  return out;
}

}  // namespace spore
