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
#include <exception>
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
std::atomic<int64_t> g_invocations{0}, g_failures{0};
std::atomic<bool> g_no_compiler_noticed{false};
std::mutex g_cxx_mutex;
std::string g_cxx_env = "\x01";  // the SPORE_CXX value g_cxx was found for (never a real value)
std::optional<HostCompiler> g_cxx;
std::mutex g_error_mutex;
bool g_error_reported = false;

// Everything a compile reads from the environment, taken on the requesting thread.
struct Config {
  std::optional<HostCompiler> cxx;
  std::string cache_dir;  // empty: no disk cache
  std::string dump_dir;
  std::string tmp_dir;
  std::vector<std::string> env;  // the compiler's environment
};

std::vector<std::string> environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

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

// Runs argv[0] with stdout and stderr to `log` and the environment `env`; the exit status, or
// -1 when it could not start.
int run_process(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& log) {
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
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

std::string tmp_dir_from_env() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

// A private scratch directory (mode 0700, made by mkdtemp) for one compile.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& tmp_dir) {
    std::string tmpl = tmp_dir + "/spore-kernel-XXXXXX";
    if (::mkdtemp(tmpl.data())) path = tmpl;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
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
  ScratchDir tmp(tmp_dir_from_env());
  if (tmp.path.empty() || run_process({path, "--version"}, environment(), tmp.path + "/version.txt") != 0)
    return std::nullopt;
  std::string v = slurp(tmp.path + "/version.txt");
  return HostCompiler{path, v.substr(0, v.find('\n'))};
}

std::vector<std::string> split_flags() {
  std::vector<std::string> out;
  std::stringstream ss(kKernelFlags);
  for (std::string f; ss >> f;) out.push_back(f);
  return out;
}

// dlopens the file behind `fd` (verified by the caller) through /proc/self/fd and looks up
// `symbols`. On success the descriptor stays open for the life of the process, like the
// object: the loader finds already-loaded objects by name, so a later "/proc/self/fd/<n>" must
// never name another file.
std::optional<std::vector<void*>> load(Fd fd, const std::string& what, const std::vector<std::string>& symbols,
                                       std::string* error) {
  const std::string name = "/proc/self/fd/" + std::to_string(fd.get());
  void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    *error = "dlopen of " + what + " failed: " + ::dlerror();
    return std::nullopt;
  }
  std::vector<void*> out;
  for (const std::string& s : symbols) {
    void* p = ::dlsym(h, s.c_str());
    if (!p) {
      *error = "the compiled unit " + what + " has no symbol " + s;
      ::dlclose(h);
      return std::nullopt;
    }
    out.push_back(p);
  }
  (void)fd.release();
  return out;  // the handle stays open: its kernels live as long as the process
}

Config snapshot_config() {
  Config c;
  c.cxx = host_compiler();
  if (!cpu_features().empty()) c.cache_dir = kernel_cache_path();
  if (const char* dump = std::getenv("SPORE_DUMP_KERNELS"); dump && *dump) c.dump_dir = dump;
  c.tmp_dir = tmp_dir_from_env();
  if (c.cxx) c.env = environment();
  return c;
}

std::optional<std::vector<void*>> build(const Config& cfg, const std::string& source,
                                        const std::vector<std::string>& symbols, const std::string& arity,
                                        std::string* error) {
  if (!cfg.cxx) {
    *error = "no C++ compiler";
    return std::nullopt;
  }
  const HostCompiler& cxx = *cfg.cxx;
  const std::string material = unit_key_material(source, arity, cxx);
  const uint64_t key = fnv1a(material);
  const std::string hex = key_hex(key);
  if (!cfg.dump_dir.empty()) std::ofstream(cfg.dump_dir + "/" + hex + ".cc") << source;
  CacheDir dir;
  if (!cfg.cache_dir.empty()) dir = open_kernel_cache(cfg.cache_dir);
  if (dir)
    if (Fd hit = cache_lookup(dir, key, material))
      return load(std::move(hit), dir.path + "/" + hex + ".so", symbols, error);

  ScratchDir tmp(cfg.tmp_dir);
  if (tmp.path.empty()) {
    *error = "cannot create a scratch directory in " + cfg.tmp_dir + " (" + std::strerror(errno) + ")";
    return std::nullopt;
  }
  std::ofstream(tmp.path + "/unit.cc") << source;
  std::vector<std::string> args{cxx.path};
  for (std::string& f : split_flags()) args.push_back(std::move(f));
  for (const char* a : {"-x", "c++"}) args.push_back(a);
  args.push_back(tmp.path + "/unit.cc");
  args.push_back("-o");
  args.push_back(tmp.path + "/unit.so");
  ++g_invocations;
  const int rc = run_process(args, cfg.env, tmp.path + "/log.txt");
  if (rc != 0) {
    std::string log = slurp(tmp.path + "/log.txt");
    if (log.size() > 2000) log = "..." + log.substr(log.size() - 2000);
    *error = cxx.path + " exited with " + std::to_string(rc) + " on the generated unit " + hex + ":\n" + log;
    return std::nullopt;
  }
  const std::string so_path = tmp.path + "/unit.so";
  Fd so(::open(so_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!so) {
    *error = "cannot open the compiled object " + so_path + " (" + std::strerror(errno) + ")";
    return std::nullopt;
  }
  if (dir) {
    std::string store_error;
    if (Fd entry = cache_store(dir, key, material, so.get(), &store_error))
      return load(std::move(entry), dir.path + "/" + hex + ".so", symbols, error);
    std::cerr << "[codegen] " << store_error << "; the kernel is not cached\n";
  }
  return load(std::move(so), so_path, symbols, error);
}

void report_failure(const std::string& error) {
  ++g_failures;
  std::lock_guard elock(g_error_mutex);
  if (!g_error_reported)
    std::cerr << "[codegen] could not build a fused kernel, the loop interpreter runs it: " << error << "\n";
  g_error_reported = true;
}

struct Job {
  Config config;
  std::string source;
  std::vector<std::string> symbols;
  std::string arity;
  std::function<void(std::optional<std::vector<void*>>)> done;
  std::vector<UnitRequest> on_failure;  // queued, with this job's settings, if it does not build
};

void stop_worker_at_exit();

// One background thread compiling units in order.
class Worker {
 public:
  ~Worker() { stop(); }
  void push(Job j) {
    std::lock_guard lock(m_);
    if (stopped_) return;  // exiting: the caller keeps interpreting
    queue_.push_back(std::move(j));
    ++pending_;
    if (!thread_.joinable()) {
      // Build every function-local static the worker touches before it starts, and register
      // the exit hook after, so the hook runs (joining it) before any of them is destroyed.
      (void)cpu_features();
      thread_ = std::thread([this] { loop(); });
      std::atexit(stop_worker_at_exit);
    }
    wake_.notify_all();
  }
  void wait() {
    std::unique_lock lock(m_);
    idle_.wait(lock, [&] { return pending_ == 0; });
  }
  // Takes no new jobs, drops queued ones and joins the thread (it finishes the running job).
  void stop() {
    std::thread t;
    {
      std::lock_guard lock(m_);
      stopped_ = true;
      pending_ -= static_cast<int>(queue_.size());
      queue_.clear();
      t = std::move(thread_);
    }
    wake_.notify_all();
    if (t.joinable()) {
      if (t.get_id() == std::this_thread::get_id()) t.detach();  // exit() called from a job
      else t.join();
    }
    {
      std::lock_guard lock(m_);
      pending_ = 0;
    }
    idle_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    for (;;) {
      wake_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      Job j = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        std::string error;
        auto syms = build(j.config, j.source, j.symbols, j.arity, &error);
        if (!syms) report_failure(error);
        const bool failed = !syms;
        j.done(std::move(syms));
        if (failed)
          for (UnitRequest& r : j.on_failure)
            push({j.config, std::move(r.source), std::move(r.symbols), std::move(r.arity), std::move(r.done), {}});
      } catch (const std::exception& e) {
        report_failure(std::string("internal error: ") + e.what());
      } catch (...) {
        report_failure("internal error: unknown exception");
      }
      lock.lock();
      if (--pending_ <= 0) {
        pending_ = 0;
        idle_.notify_all();
      }
    }
  }

  std::mutex m_;
  std::condition_variable wake_, idle_;
  std::deque<Job> queue_;
  int pending_ = 0;
  bool stopped_ = false;
  std::thread thread_;
};

Worker& worker() {
  static Worker w;
  return w;
}

void stop_worker_at_exit() { worker().stop(); }

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

const std::string& cpu_features() {
  static const std::string f = [] {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) return line;
    return std::string();
  }();
  return f;
}

std::string unit_key_material(const std::string& source, const std::string& arity, const HostCompiler& cxx) {
  return "spore kernel unit\narity " + arity + "\ngenerator " + std::to_string(kGeneratorVersion) + "\ncompiler " +
         cxx.path + "\n" + cxx.identity + "\nflags " + kKernelFlags + "\ncpu " + cpu_features() + "\nsource " +
         std::to_string(source.size()) + "\n" + source;
}

uint64_t unit_key(const std::string& source, const std::string& arity, const HostCompiler& cxx) {
  return fnv1a(unit_key_material(source, arity, cxx));
}

std::optional<std::vector<void*>> compile_and_load(const std::string& source, const std::vector<std::string>& symbols,
                                                   const std::string& arity, std::string* error) {
  auto syms = build(snapshot_config(), source, symbols, arity, error);
  if (!syms) ++g_failures;
  return syms;
}

void compile_async(std::string source, std::vector<std::string> symbols, std::string arity,
                   std::function<void(std::optional<std::vector<void*>>)> done, std::vector<UnitRequest> on_failure) {
  worker().push({snapshot_config(), std::move(source), std::move(symbols), std::move(arity), std::move(done),
                 std::move(on_failure)});
}

void wait_for_compiles() { worker().wait(); }

int64_t compiler_invocations() { return g_invocations.load(); }

int64_t compile_failures() { return g_failures.load(); }

}  // namespace spore::codegen
