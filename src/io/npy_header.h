// SPDX-License-Identifier: Apache-2.0
#pragma once
// The .npy header: magic "\x93NUMPY", version, header length and a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }. The parser accepts exactly that
// grammar (no eval, no escapes, bounded sizes), so hostile headers fail cleanly.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spore/dtype.h"

namespace spore::io {

/// The longest header we read (numpy writes ~128 bytes; 32 dimensions fit in well under 1 KiB).
inline constexpr uint64_t kNpyMaxHeader = 1 << 16;
/// The most dimensions a header may list (numpy's own NPY_MAXDIMS).
inline constexpr size_t kNpyMaxDims = 32;

struct NpyHeader {
  DType dtype = DType::Float32;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  /// Bytes before the data: magic, version, length field and header text.
  uint64_t data_offset = 0;
  /// Bytes of data the header implies (numel * itemsize), equal to what the file holds.
  uint64_t data_bytes = 0;
};

/// Parses the header at the start of a .npy file of `total_size` bytes, of which `head` holds
/// the first min(total_size, 12 + kNpyMaxHeader). Checks that the data the header implies is
/// exactly what follows it. `what` names the file in errors ("[load_npy] x.npy: ...").
NpyHeader parse_npy_header(std::span<const uint8_t> head, uint64_t total_size, const std::string& what);

/// The bytes before the data of a little-endian C-order array: version 1.0 (2.0 when the header
/// is too long for 1.0), padded so the data starts 64-byte aligned, as numpy writes it.
std::string format_npy_header(DType dtype, const std::vector<int64_t>& shape, const std::string& what);

}  // namespace spore::io
