// SPDX-License-Identifier: Apache-2.0
#pragma once
// The disk cache of compiled kernels (issue 4): `$SPORE_KERNEL_CACHE`, else
// `$XDG_CACHE_HOME/spore/kernels`, else `$HOME/.cache/spore/kernels`, created 0700. An entry is
// `<key>.so`: the shared object followed by a 32-byte trailer (magic, key, size, FNV-1a of the
// object's bytes; the dynamic loader ignores bytes past the object's segments, so the entry is
// dlopen'ed in place). Entries are written to a temporary file in the same directory, fsync'ed
// and renamed; a lookup verifies the trailer and checksum and deletes an entry that fails. A
// directory not owned by the user, or writable by group or others, is refused (one warning;
// kernels are then compiled but not cached): another user could plant code we would run.
#include <cstdint>
#include <string>
#include <string_view>

namespace spore::codegen {

/// FNV-1a 64 over `bytes`, continuing from `h` (a cache key and checksum, not a defence against
/// a malicious writer: the directory check is that).
uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull);

/// The cache directory, created if missing, or empty when none is usable (warned once).
std::string kernel_cache_dir();

/// Why `dir` may not be used (empty when it may): not a directory, not ours, group/world-writable.
std::string cache_dir_problem(const std::string& dir);

/// The path of the verified entry for `key` in `dir`, or empty when there is none. A corrupt
/// entry is deleted, counted and reported on stderr.
std::string cache_lookup(const std::string& dir, uint64_t key);

/// Stores the shared object at `so_path` as the entry for `key` (atomically); returns the
/// entry's path, or empty with `error` set.
std::string cache_store(const std::string& dir, uint64_t key, const std::string& so_path, std::string* error);

/// Process-wide counters, for tests and benchmarks.
struct KernelCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t corrupt = 0;  // entries that failed verification (deleted, rebuilt)
  int64_t stores = 0;
};
KernelCacheStats kernel_cache_stats();

}  // namespace spore::codegen
