// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers for error tests: user errors are asserted by their message text.
#include <gtest/gtest.h>

#include <string>

#include "spore/error.h"

namespace spore {

/// The message of the spore::Error that `f` throws, or "(no error)".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// Expects `f` to throw a spore::Error whose message contains `text`.
template <class F>
void expect_error(F&& f, const std::string& text) {
  const std::string msg = error_of(f);
  EXPECT_NE(msg.find(text), std::string::npos) << "expected an error containing: " << text << "\n got: " << msg;
}

}  // namespace spore

/// EXPECT_ERROR(expression, "expected part of the message")
#define EXPECT_ERROR(stmt, text) ::spore::expect_error([&] { (void)(stmt); }, text)
