// SPDX-License-Identifier: Apache-2.0
#pragma once
// .npz archives read from memory (the fuzz target's entry; `spore::io::load_npz` reads files).
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "spore/tensor.h"

namespace spore::io {

/// Reads every array of a .npz archive held in memory; `what` names it in errors.
std::vector<std::pair<std::string, Tensor>> load_npz_from_memory(std::span<const uint8_t> bytes,
                                                                 const std::string& what);

}  // namespace spore::io
