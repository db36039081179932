// SPDX-License-Identifier: Apache-2.0
#include "ir/float_text.h"

#include <charconv>

#include "ir/error.h"

namespace spore::ir {

std::string format_float(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  internal_check(r.ec == std::errc(), "format_float: buffer too small");
  return std::string(buf, r.ptr);
}

double parse_float(std::string_view s) {
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty())
    throw Error(cat("'", s, "' is not a floating-point number"));
  return v;
}

}  // namespace spore::ir
