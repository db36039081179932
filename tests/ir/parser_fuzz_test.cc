// SPDX-License-Identifier: Apache-2.0
// Truncated or garbled text must end in ir::Error, never a crash or another exception type.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "ir/parser.h"
#include "ir/printer.h"
#include "test_ops.h"

namespace spore::ir {
namespace {

// Parses `text`; a failure must be an ir::Error (anything else escapes and fails the test).
bool parses(const std::string& text) {
  try {
    parse_graph(text);
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(IrParser, EveryPrefixOfAValidTextFailsCleanly) {
  const std::string text = print_graph(*test_ops::sample_graph());
  // Only the whole text (and the text without its final newline) is a graph.
  for (size_t n = 0; n + 1 < text.size(); ++n) EXPECT_FALSE(parses(text.substr(0, n))) << "prefix of length " << n;
  EXPECT_TRUE(parses(text));
}

TEST(IrParser, GarbledTextFailsCleanly) {
  const std::string text = print_graph(*test_ops::sample_graph());
  const std::string junk = "%@{}()[]<>~,:=+-*/\"\n 0123456789azAZ_";
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 3000; ++trial) {
    // Edited as a vector: GCC 12 warns falsely (-Wrestrict) on std::string::insert here.
    std::vector<char> t(text.begin(), text.end());
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      size_t at = rng() % t.size();
      char c = junk[rng() % junk.size()];
      switch (rng() % 3) {
        case 0: t[at] = c; break;
        case 1: t.erase(t.begin() + at, t.begin() + std::min(t.size(), at + 1 + rng() % 8)); break;
        default: t.insert(t.begin() + at, c); break;
      }
    }
    parses(std::string(t.begin(), t.end()));  // may succeed (e.g. a renamed symbol); must not crash or throw anything else
  }
}

TEST(IrParser, HostileInputsAreBounded) {
  test_ops::register_test_ops();
  std::string deep = "graph @f(%x: data float32[";
  deep.append(10000, '(');
  deep += "]) {\n return %x }";
  EXPECT_IR_ERROR(parse_graph(deep), "dimension expression nests too deeply");
  EXPECT_IR_ERROR(parse_graph("graph @f(%x: data float32[99999999999999999999]) {\n return %x }"), "out of range");
  EXPECT_IR_ERROR(parse_graph(""), "line 1: expected 'graph'");
}

}  // namespace
}  // namespace spore::ir
