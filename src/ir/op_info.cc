// SPDX-License-Identifier: Apache-2.0
#include "ir/op_info.h"

#include <map>

#include "ir/error.h"

namespace spore::ir {
namespace {
// std::less<> lets lookups take a string_view without building a string.
std::map<std::string, OpInfo, std::less<>>& registry() {
  static std::map<std::string, OpInfo, std::less<>> r;
  return r;
}
}  // namespace

void register_op(const std::string& name, OpInfo info) {
  if (!is_identifier(name)) throw Error(cat("op name '", name, "' is not an identifier"));
  bool partial = !info.print_attrs != !info.parse_attrs || !info.print_attrs != !info.equal_attrs;
  if (partial)
    throw Error(cat("op '", name, "' registers only some of print_attrs/parse_attrs/equal_attrs; give all three or none"));
  registry()[name] = std::move(info);
}

const OpInfo* find_op(std::string_view name) {
  auto& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

}  // namespace spore::ir
