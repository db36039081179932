// SPDX-License-Identifier: Apache-2.0
#pragma once
// The IR's two kinds of failure (STYLE.md, "Errors"): ir::Error is a user error (a malformed
// graph, bad text) and names what was wrong; internal_check guards our own invariants.
#include <sstream>
#include <stdexcept>
#include <string>

namespace spore::ir {

/// A user error in IR construction, verification or parsing; the message starts with "[ir]".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error("[ir] " + what) {}
};

/// Concatenates streamable parts into one message.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// Fails with "internal error" when an IR invariant that callers cannot break does not hold.
inline void internal_check(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("[ir] internal error: ") + what);
}

}  // namespace spore::ir
