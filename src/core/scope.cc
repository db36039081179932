// SPDX-License-Identifier: Apache-2.0
#include "spore/scope.h"

namespace spore {
namespace {
thread_local std::string path;
}  // namespace

NameScope::NameScope(std::string_view name) {
  if (name.empty()) return;
  restore_ = path.size();
  opened_ = true;
  if (!path.empty()) path += '/';
  for (char c : name) path += c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '_' : c;
}

NameScope::~NameScope() {
  if (opened_) path.resize(restore_);
}

const std::string& current_scope() { return path; }

}  // namespace spore
