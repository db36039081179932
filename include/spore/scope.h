// SPDX-License-Identifier: Apache-2.0
#pragma once
// Name scopes: every node a trace records carries the scope path open at that moment, e.g.
// "features/3/conv" (shared/ARCHITECTURE.md: "each node carries its scope, the Cell path").
// Cells open one per call under the name their parent registered them with; model importers open
// one per file node (the ONNX node name). Passes keep scopes; the IR text shows them; `spore
// compare` names layers by them. Scopes cost one string append per Cell call in PyNative.
#include <string>
#include <string_view>

namespace spore {

/// Opens `name` under the current scope for this object's lifetime (this thread). An empty name
/// opens nothing. Characters the IR text cannot hold in a scope (quotes, backslashes, control
/// characters) become '_'.
class NameScope {
 public:
  explicit NameScope(std::string_view name);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

 private:
  size_t restore_ = 0;
  bool opened_ = false;
};

/// The scope path open in this thread ("" at top level).
const std::string& current_scope();

}  // namespace spore
