// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace spore {

/// A user error: bad input. The message names the op, the values seen and the fix.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The allocator refused a request (cap reached or the system is out of memory).
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

/// Our own bug: an invariant that should hold did not.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace spore

/// User check: `SPORE_CHECK(cond, "[op] what was wrong: ", value, "; what to do")`.
#define SPORE_CHECK(cond, ...) \
  do {                         \
    if (!(cond)) [[unlikely]]  \
      throw ::spore::Error(::spore::detail::cat(__VA_ARGS__)); \
  } while (0)

/// Internal invariant: failing means a bug in Spore, never bad user input.
#define SPORE_ASSERT(cond, ...)                                                          \
  do {                                                                                   \
    if (!(cond)) [[unlikely]]                                                            \
      throw ::spore::InternalError(::spore::detail::cat(                                  \
          "internal error at ", __FILE__, ":", __LINE__, ": " #cond " ", ##__VA_ARGS__)); \
  } while (0)
