// SPDX-License-Identifier: Apache-2.0
#include "autodiff/grad_cases.h"

#include <cctype>
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

const std::vector<std::string>& case_test_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    std::map<std::string, int> seen;
    for (const auto& c : all_cases()) {
      std::string name;
      for (char ch : c.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      if (int n = seen[name]++; n > 0) name.append("_").append(std::to_string(n + 1));
      out.push_back(std::move(name));
    }
    return out;
  }();
  return names;
}

}  // namespace spore::gradcheck
