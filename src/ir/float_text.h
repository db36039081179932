// SPDX-License-Identifier: Apache-2.0
#pragma once
// Exact float text for attribute printers: the shortest decimal that reads back to the same
// double (std::to_chars), so attribute text round-trips bit for bit, inf and nan included.
#include <string>
#include <string_view>

namespace spore::ir {

/// The shortest text that parse_float reads back to exactly `v`.
std::string format_float(double v);
/// Parses the whole of `s` as a double; throws ir::Error if it is not one.
double parse_float(std::string_view s);

}  // namespace spore::ir
