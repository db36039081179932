// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ops registered for the IR tests: the IR knows no primitives, so the tests bring their own
// (an elementwise add, a scaled op with a float attribute, a random op, an ordered print, and
// If/While-like nodes holding closed sub-graphs).
#include <memory>
#include <string>

#include "ir/error.h"

#include "ir/builder.h"

namespace spore::ir::test_ops {

/// Attributes of the test op "scale".
struct ScaleAttrs {
  double alpha = 1;
};

/// Registers the test ops once (idempotent).
void register_test_ops();

/// A tensor type.
inline Type tt(DType d, std::vector<Dim> shape, bool weak = false) { return TensorType{d, weak, std::move(shape), {}}; }
/// The message of the ir::Error that `f` throws, or "(no error)".
template <class F>
std::string ir_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// A graph using every feature of the text form: symbols, several dtypes, weak and layout types,
/// all roles, scopes, a float attribute, random and ordered ops, a state alias, If and While.
GraphPtr sample_graph();

/// Attributes for "scale".
inline std::shared_ptr<const void> scale(double a) { return std::make_shared<const ScaleAttrs>(ScaleAttrs{a}); }

}  // namespace spore::ir::test_ops

/// Expects `stmt` to throw an ir::Error whose message contains `text`.
#define EXPECT_IR_ERROR(stmt, text)                                                               \
  do {                                                                                            \
    const std::string msg_ = ::spore::ir::test_ops::ir_error([&] { (void)(stmt); });              \
    EXPECT_NE(msg_.find(text), std::string::npos) << "expected an error containing: " << (text) \
                                                  << "\n got: " << msg_;                          \
  } while (0)
