// SPDX-License-Identifier: Apache-2.0
#include "codegen/compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <thread>

#include "codegen/emit_cpp.h"
#include "codegen/kernel_cache.h"

extern char** environ;

namespace spore::codegen {
namespace {

// Namespace-scope state is built when the library loads, before the background worker (a
// function-local static), so it outlives the worker's join at exit.
std::atomic<int64_t> g_invocations{0};
std::atomic<bool> g_no_compiler_noticed{false};
std::mutex g_cxx_mutex;
std::string g_cxx_env = "\x01";  // the SPORE_CXX value g_cxx was found for (never a real value)
std::optional<HostCompiler> g_cxx;
std::mutex g_error_mutex;
bool g_error_reported = false;

bool executable(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::string on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return executable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
  return {};
}

// Runs argv[0] with stdout and stderr to `log`; the exit status, or -1 when it could not start.
int run_process(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A private scratch directory for one compile.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/spore-kernel-XXXXXX";
    if (::mkdtemp(tmpl.data())) path = tmpl;
  }
  ~ScratchDir() {
    if (path.empty()) return;
    for (const char* f : {"/unit.cc", "/unit.so", "/log.txt", "/version.txt"}) ::unlink((path + f).c_str());
    ::rmdir(path.c_str());
  }
};

std::optional<HostCompiler> find_compiler(const char* env) {
  std::string path;
  if (env && *env) path = on_path(env);
  else if (path = on_path("c++"); path.empty()) path = on_path("g++");
  if (path.empty()) return std::nullopt;
  ScratchDir tmp;
  if (tmp.path.empty() || run_process({path, "--version"}, tmp.path + "/version.txt") != 0) return std::nullopt;
  std::string v = slurp(tmp.path + "/version.txt");
  return HostCompiler{path, v.substr(0, v.find('\n'))};
}

const std::string& cpu_features() {
  static const std::string f = [] {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("flags", 0) == 0) return line;
    return std::string("unknown");
  }();
  return f;
}

std::vector<std::string> split_flags() {
  std::vector<std::string> out;
  std::stringstream ss(kKernelFlags);
  for (std::string f; ss >> f;) out.push_back(f);
  return out;
}

// Loads a shared object and looks up `symbols`.
std::optional<std::vector<void*>> load(const std::string& so, const std::vector<std::string>& symbols, std::string* error) {
  void* h = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    *error = std::string("dlopen failed: ") + ::dlerror();
    return std::nullopt;
  }
  std::vector<void*> out;
  for (const std::string& s : symbols) {
    void* p = ::dlsym(h, s.c_str());
    if (!p) {
      *error = "the compiled unit " + so + " has no symbol " + s;
      return std::nullopt;
    }
    out.push_back(p);
  }
  return out;  // the handle stays open: its kernels live as long as the process
}

struct Job {
  std::string source;
  std::vector<std::string> symbols;
  std::function<void(std::optional<std::vector<void*>>)> done;
};

// One background thread compiling units in order.
class Worker {
 public:
  ~Worker() {
    {
      std::lock_guard lock(m_);
      stop_ = true;
      queue_.clear();
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void push(Job j) {
    std::lock_guard lock(m_);
    queue_.push_back(std::move(j));
    ++pending_;
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    wake_.notify_all();
  }
  void wait() {
    std::unique_lock lock(m_);
    idle_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      Job j = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::string error;
      auto syms = compile_and_load(j.source, j.symbols, &error);
      if (!syms) {
        std::lock_guard elock(g_error_mutex);
        if (!g_error_reported)
          std::cerr << "[codegen] could not build a fused kernel, the loop interpreter runs it: " << error << "\n";
        g_error_reported = true;
      }
      j.done(std::move(syms));
      lock.lock();
      if (--pending_ == 0) idle_.notify_all();
    }
  }

  std::mutex m_;
  std::condition_variable wake_, idle_;
  std::deque<Job> queue_;
  int pending_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

Worker& worker() {
  static Worker w;
  return w;
}

}  // namespace

std::optional<HostCompiler> host_compiler() {
  const char* env = std::getenv("SPORE_CXX");
  const std::string key = env ? env : "";
  std::lock_guard lock(g_cxx_mutex);
  if (key != g_cxx_env) {
    g_cxx_env = key;
    g_cxx = key == "none" ? std::nullopt : find_compiler(env);
    if (!g_cxx && !g_no_compiler_noticed.exchange(true))
      std::cerr << "[codegen] no C++ compiler for generated kernels ("
                << (key == "none" ? "SPORE_CXX=none" : key.empty() ? "no c++ or g++ on PATH" : "SPORE_CXX=" + key + " not found")
                << "); fused kernels run on the loop interpreter\n";
  }
  return g_cxx;
}

uint64_t unit_key(const std::string& source, const HostCompiler& cxx) {
  std::string meta = "generator " + std::to_string(kGeneratorVersion) + "\n" + cxx.identity + "\n" + kKernelFlags + "\n" +
                     cpu_features() + "\n";
  return fnv1a(source, fnv1a(meta));
}

std::optional<std::vector<void*>> compile_and_load(const std::string& source, const std::vector<std::string>& symbols,
                                                   std::string* error) {
  const std::optional<HostCompiler> cxx = host_compiler();
  if (!cxx) {
    *error = "no C++ compiler";
    return std::nullopt;
  }
  const uint64_t key = unit_key(source, *cxx);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
  if (const char* dump = std::getenv("SPORE_DUMP_KERNELS"); dump && *dump) {
    std::ofstream(std::string(dump) + "/" + hex + ".cc") << source;
  }
  const std::string dir = kernel_cache_dir();
  if (!dir.empty())
    if (std::string hit = cache_lookup(dir, key); !hit.empty()) return load(hit, symbols, error);

  ScratchDir tmp;
  if (tmp.path.empty()) {
    *error = std::string("cannot create a scratch directory (") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  std::ofstream(tmp.path + "/unit.cc") << source;
  std::vector<std::string> args{cxx->path};
  for (std::string& f : split_flags()) args.push_back(std::move(f));
  for (const char* a : {"-x", "c++"}) args.push_back(a);
  args.push_back(tmp.path + "/unit.cc");
  args.push_back("-o");
  args.push_back(tmp.path + "/unit.so");
  ++g_invocations;
  const int rc = run_process(args, tmp.path + "/log.txt");
  if (rc != 0) {
    std::string log = slurp(tmp.path + "/log.txt");
    if (log.size() > 2000) log = "..." + log.substr(log.size() - 2000);
    *error = cxx->path + " exited with " + std::to_string(rc) + " on the generated unit " + hex + ":\n" + log;
    return std::nullopt;
  }
  if (!dir.empty()) {
    std::string store_error;
    if (std::string entry = cache_store(dir, key, tmp.path + "/unit.so", &store_error); !entry.empty())
      return load(entry, symbols, error);
    std::cerr << "[codegen] " << store_error << "; the kernel is not cached\n";
  }
  return load(tmp.path + "/unit.so", symbols, error);
}

void compile_async(std::string source, std::vector<std::string> symbols,
                   std::function<void(std::optional<std::vector<void*>>)> done) {
  worker().push({std::move(source), std::move(symbols), std::move(done)});
}

void wait_for_compiles() { worker().wait(); }

int64_t compiler_invocations() { return g_invocations.load(); }

}  // namespace spore::codegen
