// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the IR text parser (src/ir/parser.cc, lexer.cc, verifier.cc), which reads
// graphs printed by print_graph (golden files, `spore info --ir`). ir::Error is the clean
// failure; anything else (an internal error, a crash) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/error.h"
#include "ir/parser.h"
#include "spore/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    spore::ir::parse_graph(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const spore::ir::Error&) {
  } catch (const spore::Error&) {
  }
  return 0;
}
