// SPDX-License-Identifier: Apache-2.0
#pragma once
// Atomic replacement of a file, shared by every writer in src/io (.npy, .npz, MindIR, ONNX
// export): write a temporary file in the target's directory, fsync it, rename it over the
// target, fsync the directory. A crash or an error leaves the previous file as it was.
#include <unistd.h>

#include <string>

namespace spore::io {

/// Closes a POSIX descriptor when it goes out of scope (the writers and readers of src/io).
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

/// A fresh temporary name in the directory of `path` (so the final rename stays on one file
/// system), unique per process and call.
std::string temp_path_for(const std::string& path);
/// Makes the finished temporary file `tmp` durable and renames it onto `path`; removes `tmp` and
/// throws spore::Error (prefixed by `what`) when that fails.
void commit_temp(const std::string& tmp, const std::string& path, const std::string& what);

}  // namespace spore::io
