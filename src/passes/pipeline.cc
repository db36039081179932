// SPDX-License-Identifier: Apache-2.0
// The pass pipeline: the list of passes in order, and the driver that runs them with the
// verifier, IR dumps and timings (shared/ARCHITECTURE.md, "The compiler").
#include "passes/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/conv_epilogue.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fold_constants.h"
#include "passes/fuse.h"
#include "passes/hoist_updates.h"
#include "passes/matmul_bias.h"
#include "passes/matmul_epilogue.h"
#include "passes/remat.h"
#include "passes/simplify.h"
#include "passes/transpose_matmul.h"
#include "spore/error.h"
#include "transforms/graph_optimizer.h"

namespace spore::passes {
namespace {

bool env_is(const char* name, std::string_view value) {
  const char* s = std::getenv(name);
  return s && value == s;
}

bool verify_after_each_pass() {
#ifndef NDEBUG
  constexpr bool debug_build = true;
#else
  constexpr bool debug_build = false;
#endif
  return debug_build || env_is("SPORE_VERIFY_IR", "1");
}

// A pass keeps the signature (pipeline.h): callers bind inputs and state aliases by position.
void check_signature(const ir::Graph& before, const ir::Graph& after) {
  SPORE_CHECK(before.params() == after.params(), "the graph's parameters changed");
  SPORE_CHECK(before.outputs().size() == after.outputs().size(), "the number of outputs changed from ",
              before.outputs().size(), " to ", after.outputs().size());
  for (size_t i = 0; i < before.outputs().size(); ++i) {
    const ir::Output &a = before.outputs()[i], &b = after.outputs()[i];
    SPORE_CHECK(a.updates == b.updates, "the state alias of output ", i, " changed");
    SPORE_CHECK(before.type_of(a.value) == after.type_of(b.value), "output ", i, " changed type from ",
                ir::type_str(before.type_of(a.value)), " to ", ir::type_str(after.type_of(b.value)));
  }
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  SPORE_CHECK(f.good(), "[passes] SPORE_DUMP_IR: cannot write ", path.string(),
              "; point SPORE_DUMP_IR at a writable directory");
}

// One row of timing.txt: pass name, microseconds, whether it changed the graph.
std::string table_row(const std::string& pass, const std::string& us, const char* changed) {
  char row[160];
  std::snprintf(row, sizeof row, "%-24s %10s  %s\n", pass.c_str(), us.c_str(), changed);
  return row;
}

// The passes SPORE_SKIP_PASSES names (comma-separated), checked against `passes`: for A/B
// measurements and for narrowing a suspected pass bug without dropping a whole level.
std::vector<std::string> skipped_passes(std::span<const PassInfo> passes) {
  std::vector<std::string> out;
  const char* s = std::getenv("SPORE_SKIP_PASSES");
  if (!s || !*s) return out;
  std::string_view v(s);
  while (!v.empty()) {
    const size_t comma = v.find(',');
    const std::string name(v.substr(0, comma));
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    if (name.empty()) continue;
    std::string known;
    bool found = false;
    for (const PassInfo& p : passes) {
      found = found || p.name == name;
      known += (known.empty() ? "" : ", ") + std::string(p.name);
    }
    SPORE_CHECK(found, "[passes] SPORE_SKIP_PASSES names '", name, "', which is no pass; the passes are ", known);
    out.push_back(name);
  }
  return out;
}

std::string two_digits(size_t i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02zu", i);
  return buf;
}

}  // namespace

const std::vector<PassInfo>& pipeline() {
  // Folding first exposes literals to simplify; simplify and folding leave dead or repeated
  // nodes behind, which CSE then DCE clean up (CSE first: merging makes more nodes dead).
  static const std::vector<PassInfo> passes = {
      {"fold_constants", &fold_constants, 1},
      {"simplify", &simplify, 1},
      {"cse", &eliminate_common_subexpressions, 1},
      {"dce", &eliminate_dead_code, 1},
      // Before fusion: a weight gradient made in the layout its update reads fuses into a
      // kernel that streams every operand row by row.
      {"transpose_matmul", &transpose_matmul, 2},
      // Before fusion, which would otherwise take the conv's bias, BatchNorm and activation
      // into a generated kernel that reads the conv's whole result once more.
      {"conv_epilogue", &conv_epilogue, 2},
      // Before fusion too: a bias add after a matmul is the GEMM's epilogue, not a kernel.
      {"matmul_bias", &matmul_bias, 2},
      // After it (the bias is the GEMM's own) and before fusion: an activation or residual add
      // after a matmul becomes the GEMM's post-ops.
      {"matmul_epilogue", &matmul_epilogue, 2},
      // Before fusion, which makes each recomputed value one generated kernel.
      {"remat", &rematerialize, 2},
      // Last: it groups what the cleanups left, and drops the literals it copied into groups.
      {"fuse", &fuse_elementwise, 2},
      // After fusion, on the nodes the plan runs: each optimizer update right after its
      // gradient (and the last reader of the parameter it overwrites).
      {"hoist_updates", &hoist_updates, 1},
  };
  return passes;
}

int default_level() {
  const char* s = std::getenv("SPORE_OPT_LEVEL");
  if (!s || !*s) return 1;
  const std::string_view v(s);
  SPORE_CHECK(v == "0" || v == "1" || v == "2", "[passes] SPORE_OPT_LEVEL is '", v,
              "'; set it to 0 (no passes), 1 (all but fusion) or 2 (all passes), or unset it for 1");
  return v[0] - '0';
}

ir::GraphPtr optimize(const ir::GraphPtr& g, int level) { return run_passes(g, pipeline(), level); }

namespace {
// jit runs every traced graph through the pipeline at the level SPORE_OPT_LEVEL sets.
[[maybe_unused]] const bool registered =
    (transforms::set_graph_optimizer([](const ir::GraphPtr& g) { return optimize(g, default_level()); }), true);
}  // namespace

ir::GraphPtr run_passes(const ir::GraphPtr& g, std::span<const PassInfo> passes, int level) {
  SPORE_CHECK(level >= 0 && level <= 2, "[passes] optimization level ", level, " is not 0, 1 or 2");
  if (level == 0) return g;
  const bool verify = verify_after_each_pass();
  const char* dump_env = std::getenv("SPORE_DUMP_IR");
  const std::filesystem::path dump = dump_env && *dump_env ? dump_env : "";
  if (!dump.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump, ec);
    SPORE_CHECK(!ec, "[passes] SPORE_DUMP_IR: cannot create ", dump.string(), ": ", ec.message());
    write_file(dump / "00-input.mir", ir::print_graph(*g));
  }
  std::string timing = table_row("pass", "us", "changed");
  const std::vector<std::string> skip = skipped_passes(passes);
  ir::GraphPtr cur = g;
  size_t step = 0;
  for (const PassInfo& pass : passes) {
    if (pass.min_level > level) continue;
    if (std::find(skip.begin(), skip.end(), pass.name) != skip.end()) {
      timing += table_row(pass.name, "-", "skipped (SPORE_SKIP_PASSES)");
      continue;
    }
    ++step;
    const auto t0 = std::chrono::steady_clock::now();
    ir::GraphPtr next;
    try {
      next = pass.run(cur);
    } catch (const ir::Error& e) {
      // Node checks inside a pass fail only on nodes the pass made: our bug, not the user's.
      throw InternalError(detail::cat("[passes] internal error: pass '", pass.name, "' built an invalid node: ",
                                      e.what(), "; run with SPORE_OPT_LEVEL=0 to skip the passes and report this"));
    } catch (const Error& e) {
      // The user's program was checked when it was traced; a pass failing on it is our bug too.
      throw InternalError(detail::cat("[passes] internal error: pass '", pass.name, "' failed: ", e.what(),
                                      "; run with SPORE_OPT_LEVEL=0 to skip the passes and report this"));
    }
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    SPORE_ASSERT(next != nullptr, "pass '", pass.name, "' returned no graph");
    const bool changed = next != cur;
    timing += table_row(pass.name, std::to_string(us), changed ? "yes" : "no");
    if (!changed) continue;
    if (verify) {
      try {
        ir::verify(*next);
        check_signature(*cur, *next);
      } catch (const std::exception& e) {
        throw InternalError(detail::cat("[passes] internal error: pass '", pass.name, "' left an invalid graph @",
                                        next->name(), ": ", e.what(),
                                        "; run with SPORE_OPT_LEVEL=0 to skip the passes and report this"));
      }
    }
    if (!dump.empty()) write_file(dump / (two_digits(step) + "-" + pass.name + ".mir"), ir::print_graph(*next));
    cur = std::move(next);
  }
  if (!dump.empty()) write_file(dump / "timing.txt", timing);
  return cur;
}

}  // namespace spore::passes
