// SPDX-License-Identifier: Apache-2.0
#include "codegen/kernel_cache.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace spore::codegen {
namespace {

constexpr char kMagic[8] = {'S', 'P', 'O', 'R', 'E', 'K', 'C', '2'};
constexpr size_t kTrailer = 40;
constexpr off_t kMaxEntry = off_t{1} << 30;  // far past any unit; bounds what a lookup reads

// Namespace scope: built when the library loads, so they outlive the background compile worker.
std::atomic<int64_t> g_hits{0}, g_misses{0}, g_corrupt{0}, g_collisions{0}, g_stores{0};
std::mutex g_warn_mutex;
std::set<std::string> g_warned;

void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::string errno_text() { return std::strerror(errno); }

// The whole file behind `fd` (at most kMaxEntry bytes).
bool read_all(int fd, std::string& out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 0 || st.st_size > kMaxEntry) return false;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t r = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// mkdir -p with mode 0700, by path: whatever it creates is checked by the descriptor walk after.
void make_dirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    ::mkdir(dir.substr(0, pos).c_str(), 0700);
  }
}

// Why an ancestor directory `path` may let someone else replace what is below it.
std::string ancestor_problem(const struct stat& st, const std::string& path) {
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return "its ancestor " + path + " is owned by uid " + std::to_string(st.st_uid) + " (neither this user nor root)";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return "its ancestor " + path + " is writable by group or others and not sticky (chmod go-w it)";
  return {};
}

std::string random_suffix() {
  unsigned char b[8];
  size_t got = 0;
  while (got < sizeof b) {
    const ssize_t r = ::getrandom(b + got, sizeof b - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  // O_EXCL makes a guessed name harmless; the clock and pid only keep names apart if getrandom failed.
  if (got < sizeof b) v ^= static_cast<uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(std::clock());
  return key_hex(v);
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string key_hex(uint64_t key) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(key));
  return buf;
}

std::string kernel_cache_path() {
  std::string dir;
  if (const char* e = std::getenv("SPORE_KERNEL_CACHE"); e && *e) dir = e;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/spore/kernels";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/spore/kernels";
  return dir;
}

CacheDir open_cache_dir(const std::string& dir, bool create, std::string* why) {
  std::string abs = dir;
  if (abs.empty()) {
    *why = "no directory is configured";
    return {};
  }
  if (abs[0] != '/') {
    char cwd[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd)) {
      *why = "cannot resolve the relative path (" + errno_text() + ")";
      return {};
    }
    abs = std::string(cwd) + "/" + abs;
  }
  if (create) make_dirs(abs);
  // Resolve symbolic links once; the walk below then refuses any link it meets (O_NOFOLLOW), so
  // what it checks is what it opens.
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(abs.c_str(), nullptr), &std::free);
  if (!real) {
    *why = "cannot resolve it (" + errno_text() + ")";
    return {};
  }
  const std::string path = real.get();
  Fd cur(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string walked = "/";
  for (size_t pos = 1; cur;) {
    struct stat st {};
    if (::fstat(cur.get(), &st) != 0) break;
    const bool last = pos > path.size();
    if (last) {
      std::string p;
      if (!S_ISDIR(st.st_mode)) p = "it is not a directory";
      else if (st.st_uid != ::geteuid()) p = "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user";
      else if (st.st_mode & (S_IWGRP | S_IWOTH)) p = "it is writable by group or others (chmod 700 it)";
      if (p.empty()) return {dir, std::move(cur)};
      *why = p;
      return {};
    }
    if (std::string p = ancestor_problem(st, walked); !p.empty()) {
      *why = p;
      return {};
    }
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    const std::string name = path.substr(pos, end - pos);
    const bool final_component = end == path.size();
    walked = path.substr(0, end);
    pos = end + 1;
    // Ancestors need only be traversable (O_PATH); the directory itself is read and fsync'ed.
    const int flags = (final_component ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    cur = Fd(::openat(cur.get(), name.c_str(), flags));
    if (!cur) {
      const bool link = errno == ELOOP || errno == ENOTDIR;
      *why = "cannot open " + walked + " (" + errno_text() + (link ? "; it changed under us" : "") + ")";
      return {};
    }
  }
  *why = "cannot open " + walked + " (" + errno_text() + ")";
  return {};
}

CacheDir open_kernel_cache(const std::string& dir) {
  std::string why;
  CacheDir d = open_cache_dir(dir, true, &why);
  if (!d) {
    std::lock_guard lock(g_warn_mutex);
    if (g_warned.insert(dir).second)
      std::cerr << "[codegen] not using the kernel cache " << dir << ": " << why
                << "; kernels are compiled but not cached (set SPORE_KERNEL_CACHE to a directory only you can write)\n";
  }
  return d;
}

std::string cache_dir_problem(const std::string& dir) {
  std::string why;
  CacheDir d = open_cache_dir(dir, false, &why);
  return d ? std::string() : why;
}

Fd cache_lookup(const CacheDir& dir, uint64_t key, std::string_view material) {
  const std::string name = key_hex(key) + ".so";
  const std::string path = dir.path + "/" + name;
  // O_NONBLOCK: a FIFO planted under the name must not hang the open (regular files ignore it).
  Fd fd(::openat(dir.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  std::string why;
  std::string bytes;
  if (!fd) {
    if (errno != ELOOP) {
      ++g_misses;
      return {};
    }
    why = "it is a symbolic link";
  } else if (struct stat st {}; ::fstat(fd.get(), &st) != 0) {
    why = "cannot stat it (" + errno_text() + ")";
  } else if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    why = "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user";
  } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    why = "it is writable by group or others";
  } else if (!read_all(fd.get(), bytes)) {
    why = "cannot read it (" + errno_text() + ")";
  } else if (bytes.size() < kTrailer) {
    why = "shorter than its trailer";
  } else {
    const char* t = bytes.data() + bytes.size() - kTrailer;
    const uint64_t so_size = get_u64(t + 16), material_size = get_u64(t + 24);
    const uint64_t body = bytes.size() - kTrailer;
    if (std::memcmp(t, kMagic, 8) != 0) why = "bad magic";
    else if (get_u64(t + 8) != key) why = "its trailer names another key";
    else if (so_size > body || material_size != body - so_size) why = "its sizes do not match the trailer";
    else if (fnv1a(std::string_view(bytes.data(), body)) != get_u64(t + 32)) why = "checksum mismatch";
    else if (std::string_view(bytes.data() + so_size, material_size) != material) {
      ++g_collisions;
      ++g_misses;
      std::cerr << "[codegen] kernel cache entry " << path
                << " holds another unit (its key material differs: a hash collision or a stale entry); rebuilding it\n";
      return {};
    }
  }
  if (why.empty()) {
    ++g_hits;
    return fd;
  }
  ++g_corrupt;
  ++g_misses;
  std::cerr << "[codegen] kernel cache entry " << path << " is corrupt (" << why << "); deleted, rebuilding it\n";
  ::unlinkat(dir.fd.get(), name.c_str(), 0);
  return {};
}

Fd cache_store(const CacheDir& dir, uint64_t key, std::string_view material, int so_fd, std::string* error) {
  std::string bytes;
  if (!read_all(so_fd, bytes)) {
    *error = "cannot read the compiled object (" + errno_text() + ")";
    return {};
  }
  const uint64_t so_size = bytes.size();
  bytes.append(material);
  std::string trailer(kMagic, 8);
  put_u64(trailer, key);
  put_u64(trailer, so_size);
  put_u64(trailer, material.size());
  put_u64(trailer, fnv1a(bytes));
  bytes += trailer;

  const std::string name = key_hex(key) + ".so";
  char tmp[64] = {};
  Fd fd;
  for (int attempt = 0; attempt < 8 && !fd; ++attempt) {
    std::snprintf(tmp, sizeof tmp, ".%s.%s.tmp", key_hex(key).c_str(), random_suffix().c_str());
    fd = Fd(::openat(dir.fd.get(), tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd && errno != EEXIST) break;
  }
  if (!fd) {
    *error = "cannot create a temporary file in " + dir.path + " (" + errno_text() + ")";
    return {};
  }
  const bool ok = ::fchmod(fd.get(), 0600) == 0 && write_all(fd.get(), bytes) && ::fsync(fd.get()) == 0 &&
                  ::renameat(dir.fd.get(), tmp, dir.fd.get(), name.c_str()) == 0;
  if (!ok) {
    *error = "cannot write the cache entry " + dir.path + "/" + name + " (" + errno_text() + ")";
    ::unlinkat(dir.fd.get(), tmp, 0);
    return {};
  }
  ::fsync(dir.fd.get());  // the rename itself survives a crash
  // A read-only descriptor of the inode just written, not of whatever the name holds now.
  Fd ro(::open(("/proc/self/fd/" + std::to_string(fd.get())).c_str(), O_RDONLY | O_CLOEXEC));
  if (!ro) {
    *error = "cannot reopen the cache entry " + dir.path + "/" + name + " (" + errno_text() + ")";
    return {};
  }
  ++g_stores;
  return ro;
}

KernelCacheStats kernel_cache_stats() {
  return {g_hits.load(), g_misses.load(), g_corrupt.load(), g_collisions.load(), g_stores.load()};
}

}  // namespace spore::codegen
