// SPDX-License-Identifier: Apache-2.0
#pragma once
// NumPy's .npy and .npz files for tensors: the inputs and outputs of `spore run`, test data and
// interchange with Python. Every dtype numpy shares with Spore round-trips bit for bit (bool,
// uint8, int8/16/32/64, float16/32/64); bfloat16 has no numpy dtype and is refused. Reading takes
// format versions 1.0-3.0, either byte order and C or Fortran order; files are untrusted input:
// every size is bounded and checked against the file before anything is allocated, and faults
// throw spore::Error naming the file and the problem. Writes are atomic (temporary file, then
// rename), so a crash never leaves a half-written file under the final name.
#include <string>
#include <utility>
#include <vector>

#include "spore/tensor.h"

namespace spore::io {

/// Writes `t` (any layout; a CPU tensor) as a little-endian, C-order .npy file, format 1.0.
void save_npy(const std::string& path, const Tensor& t);
/// Reads a .npy file into a new contiguous tensor.
Tensor load_npy(const std::string& path);

/// Writes named tensors as a .npz archive (as numpy.savez, or numpy.savez_compressed when
/// `compressed`): member "<name>.npy" per tensor. Names must be non-empty and unique.
void save_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
              bool compressed = false);
/// Reads every array of a .npz archive, in archive order, names without the ".npy" suffix.
std::vector<std::pair<std::string, Tensor>> load_npz(const std::string& path);

}  // namespace spore::io
