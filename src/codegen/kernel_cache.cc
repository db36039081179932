// SPDX-License-Identifier: Apache-2.0
#include "codegen/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <set>

namespace spore::codegen {
namespace {

constexpr char kMagic[8] = {'S', 'P', 'O', 'R', 'E', 'K', 'C', '1'};
constexpr size_t kTrailer = 32;

std::atomic<int64_t> g_hits{0}, g_misses{0}, g_corrupt{0}, g_stores{0};

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return !f.bad();
}

// mkdir -p with mode 0700 for what it creates.
bool make_dirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

void warn_once(const std::string& dir, const std::string& why) {
  static std::mutex m;
  static std::set<std::string> warned;
  std::lock_guard lock(m);
  if (!warned.insert(dir).second) return;
  std::cerr << "[codegen] not using the kernel cache " << dir << ": " << why
            << "; kernels are compiled but not cached (set SPORE_KERNEL_CACHE to a directory only you can write)\n";
}

}  // namespace

uint64_t fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string cache_dir_problem(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return std::string("cannot stat it (") + std::strerror(errno) + ")";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory (a symbolic link is refused too)";
  if (st.st_uid != ::geteuid()) return "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "it is writable by group or others (chmod 700 it)";
  return {};
}

std::string kernel_cache_dir() {
  std::string dir;
  if (const char* e = std::getenv("SPORE_KERNEL_CACHE"); e && *e) dir = e;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/spore/kernels";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/spore/kernels";
  else return {};
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!make_dirs(dir)) {
    warn_once(dir, std::string("cannot create it (") + std::strerror(errno) + ")");
    return {};
  }
  if (std::string why = cache_dir_problem(dir); !why.empty()) {
    warn_once(dir, why);
    return {};
  }
  return dir;
}

std::string cache_lookup(const std::string& dir, uint64_t key) {
  const std::string path = dir + "/" + hex(key) + ".so";
  std::string bytes;
  if (!read_file(path, bytes)) {
    ++g_misses;
    return {};
  }
  std::string why;
  if (bytes.size() < kTrailer) {
    why = "shorter than its trailer";
  } else {
    const char* t = bytes.data() + bytes.size() - kTrailer;
    const uint64_t size = get_u64(t + 16);
    if (std::memcmp(t, kMagic, 8) != 0) why = "bad magic";
    else if (get_u64(t + 8) != key) why = "its trailer names another key";
    else if (size != bytes.size() - kTrailer) why = "its size does not match the trailer";
    else if (fnv1a(std::string_view(bytes.data(), size)) != get_u64(t + 24)) why = "checksum mismatch";
  }
  if (why.empty()) {
    ++g_hits;
    return path;
  }
  ++g_corrupt;
  ++g_misses;
  std::cerr << "[codegen] kernel cache entry " << path << " is corrupt (" << why << "); deleted, rebuilding it\n";
  ::unlink(path.c_str());
  return {};
}

std::string cache_store(const std::string& dir, uint64_t key, const std::string& so_path, std::string* error) {
  std::string bytes;
  if (!read_file(so_path, bytes)) {
    *error = "cannot read the compiled object " + so_path;
    return {};
  }
  std::string trailer(kMagic, 8);
  put_u64(trailer, key);
  put_u64(trailer, bytes.size());
  put_u64(trailer, fnv1a(bytes));
  bytes += trailer;
  std::string tmp = dir + "/." + hex(key) + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    *error = "cannot create a temporary file in " + dir + " (" + std::strerror(errno) + ")";
    return {};
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w <= 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  const bool ok = done == bytes.size() && ::fsync(fd) == 0;
  ::close(fd);
  const std::string path = dir + "/" + hex(key) + ".so";
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write the cache entry " + path + " (" + std::strerror(errno) + ")";
    ::unlink(tmp.c_str());
    return {};
  }
  ++g_stores;
  return path;
}

KernelCacheStats kernel_cache_stats() { return {g_hits.load(), g_misses.load(), g_corrupt.load(), g_stores.load()}; }

}  // namespace spore::codegen
