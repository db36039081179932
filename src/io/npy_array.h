// SPDX-License-Identifier: Apache-2.0
#pragma once
// From a parsed .npy header and its data bytes to a Spore tensor: allocation bounded by the
// header (itself checked against the file), byte order and Fortran order undone.
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "io/npy_header.h"
#include "spore/tensor.h"

namespace spore::io {

/// Allocates the tensor `h` describes and fills its h.data_bytes bytes through `read(dst, n)`,
/// then swaps big-endian data, normalizes bools to 0/1 and transposes Fortran-order data to C order.
Tensor npy_to_tensor(const NpyHeader& h, const std::function<void(void*, size_t)>& read, const std::string& what);

/// Decodes a complete .npy file held in memory.
Tensor decode_npy(std::span<const uint8_t> bytes, const std::string& what);

}  // namespace spore::io
