// SPDX-License-Identifier: Apache-2.0
#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "spore/error.h"

namespace spore::io {

namespace fs = std::filesystem;

std::string temp_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Appended piecewise: GCC 12 misreports `"." + std::string` as an overlapping memcpy (-Wrestrict).
  std::string name(1, '.');
  name += target.filename().string();
  name += ".tmp.";
  name += std::to_string(::getpid());
  name += '.';
  name += std::to_string(counter.fetch_add(1));
  return (dir / name).string();
}

void commit_temp(const std::string& tmp, const std::string& path, const std::string& what) {
  std::error_code ec;
  Fd f{::open(tmp.c_str(), O_RDONLY | O_CLOEXEC)};
  const bool synced = f.fd >= 0 && ::fsync(f.fd) == 0;
  const int sync_errno = errno;
  if (synced) fs::rename(tmp, path, ec);
  if (!synced || ec) {
    fs::remove(tmp, ec);
    SPORE_CHECK(false, what, ": cannot replace ", path, ": ", synced ? ec.message() : std::strerror(sync_errno),
                "; check that the directory is writable");
  }
  // The rename is durable only once the directory entry is on disk.
  const fs::path target(path);
  Fd d{::open((target.has_parent_path() ? target.parent_path() : fs::path(".")).c_str(),
              O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0) ::fsync(d.fd);
}

}  // namespace spore::io
