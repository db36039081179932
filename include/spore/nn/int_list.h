// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace spore::nn {

/// A size option given as one number (used for every spatial dim) or one per dim:
/// `Conv2d(3, 8, 5)` and `Conv2d(3, 8, {5, 3})`. Empty means "the default" where a layer says so.
struct IntList {
  IntList() = default;
  IntList(int64_t v) : values{v} {}                                   // NOLINT: one value for every dim
  IntList(std::initializer_list<int64_t> v) : values(v) {}            // NOLINT
  IntList(std::vector<int64_t> v) : values(std::move(v)) {}           // NOLINT
  std::vector<int64_t> values;
};

}  // namespace spore::nn
