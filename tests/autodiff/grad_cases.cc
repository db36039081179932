// SPDX-License-Identifier: Apache-2.0
#include "autodiff/grad_cases.h"

#include <map>

namespace spore::gradcheck {
namespace {

std::map<std::string, std::function<void(std::vector<GradCase>&)>>& families() {
  static std::map<std::string, std::function<void(std::vector<GradCase>&)>> f;
  return f;
}

}  // namespace

bool register_cases(const char* family, std::function<void(std::vector<GradCase>&)> fn) {
  families()[family] = std::move(fn);
  return true;
}

const std::vector<GradCase>& all_cases() {
  static const std::vector<GradCase> cases = [] {
    std::vector<GradCase> out;
    for (auto& [name, fn] : families()) fn(out);
    return out;
  }();
  return cases;
}

}  // namespace spore::gradcheck
