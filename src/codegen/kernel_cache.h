// SPDX-License-Identifier: Apache-2.0
#pragma once
// The disk cache of compiled kernels (issue 4): `$SPORE_KERNEL_CACHE`, else
// `$XDG_CACHE_HOME/spore/kernels`, else `$HOME/.cache/spore/kernels`, created 0700.
//
// Trust: the directory and every ancestor must be owned by this user or root, the ancestors not
// writable by group or others unless sticky, the directory itself not at all (else one warning,
// and kernels are compiled but not cached): another user could plant code we would run. The
// directory is checked and opened once, walking from `/` with O_NOFOLLOW, and every later
// operation is relative to that descriptor, so the path is never resolved again.
//
// An entry is `<key>.so`, mode 0600: the shared object, then the unit's full key material (the
// hash only names the file; a different unit under the same name is a miss, never loaded), then
// a 40-byte trailer (magic, key, object size, material size, FNV-1a of object and material).
// The dynamic loader ignores bytes past the object's segments, so the verified descriptor is
// dlopen'ed in place through /proc/self/fd. Entries are written to a randomly named temporary
// file (O_EXCL), fsync'ed, renamed, and the directory fsync'ed.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace spore::codegen {

/// FNV-1a 64 over `bytes`, continuing from `h` (names entries and checks for torn writes; not a
/// defence against a malicious writer: the directory check and the key material are).
uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull);

/// An owned file descriptor, closed when destroyed.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  /// Gives up ownership (the descriptor stays open).
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// An opened, checked cache directory; `path` only names it in messages.
struct CacheDir {
  std::string path;
  Fd fd;
  explicit operator bool() const { return static_cast<bool>(fd); }
};

/// The configured cache path (see above), or empty when no variable names one. Reads the
/// environment: call it on the thread that requests compiles, never on the background worker.
std::string kernel_cache_path();

/// Checks `dir` and its ancestors and opens it, creating missing components 0700 when `create`;
/// on refusal an invalid CacheDir with `why` set.
CacheDir open_cache_dir(const std::string& dir, bool create, std::string* why);

/// open_cache_dir(dir, create=true), warning once per directory on stderr when it is refused.
CacheDir open_kernel_cache(const std::string& dir);

/// Why `dir` may not be used (empty when it may); creates nothing.
std::string cache_dir_problem(const std::string& dir);

/// A descriptor of the verified entry for `key` whose stored key material equals `material`
/// byte for byte, or an invalid Fd on a miss. A corrupt entry (a symbolic link, not a private
/// regular file, a bad trailer or checksum) is deleted, counted and reported on stderr; one
/// holding other key material (a hash collision) is a miss, replaced by the next store.
Fd cache_lookup(const CacheDir& dir, uint64_t key, std::string_view material);

/// Stores the shared object read from `so_fd` as the entry for `key` and `material`
/// (atomically, mode 0600); returns a read-only descriptor of the new entry, or an invalid Fd
/// with `error` set.
Fd cache_store(const CacheDir& dir, uint64_t key, std::string_view material, int so_fd, std::string* error);

/// `key` as the 16 hex digits of its entry's name.
std::string key_hex(uint64_t key);

/// Process-wide counters, for tests and benchmarks.
struct KernelCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t corrupt = 0;     // entries that failed verification (deleted, rebuilt)
  int64_t collisions = 0;  // entries under the right name holding other key material (replaced)
  int64_t stores = 0;
};
KernelCacheStats kernel_cache_stats();

}  // namespace spore::codegen
