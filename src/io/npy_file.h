// SPDX-License-Identifier: Apache-2.0
#pragma once
// Atomic replacement of a file, shared by the .npy and .npz writers: write a temporary file in
// the target's directory, fsync it, rename it over the target, fsync the directory.
#include <string>

namespace spore::io {

/// A fresh temporary name in the directory of `path` (so the final rename stays on one file system).
std::string temp_path_for(const std::string& path);
/// Makes the finished temporary file `tmp` durable and renames it onto `path`; removes `tmp` and
/// throws spore::Error (prefixed by `what`) when that fails.
void commit_temp(const std::string& tmp, const std::string& path, const std::string& what);

}  // namespace spore::io
