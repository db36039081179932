// SPDX-License-Identifier: Apache-2.0
// `spore`: the command line. `spore train` trains a zoo model on an image data set; `spore eval`
// and `spore predict` use a checkpoint it saved. info/run/convert/compare/bench work on model
// files (MindIR, ONNX).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <spore/error.h>

#include "spore/commands.h"

namespace {

const char* kUsage =
    "usage: spore <command> [flags]\n"
    "commands:\n"
    "  train     train a zoo model (mlp, lenet, resnet18, ...) on Fashion-MNIST or an IDX directory\n"
    "  eval      evaluate a checkpoint on the test set\n"
    "  predict   classify test images or a .npy batch with a checkpoint\n"
    "  info      a model file's inputs, outputs, parameters, FLOPs and ops (--ir: its graph)\n"
    "  run       run a model file on .npy / .pb inputs; --repeat N times it\n"
    "  convert   ONNX <-> MindIR (--optimize runs the graph passes first)\n"
    "  compare   run two models layer by layer and name the first diverging layer\n"
    "  bench     a model file's latency and throughput by batch size and thread count\n"
    "`spore <command> --help` lists a command's flags.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (cmd == "train") return spore::cli::train_command(args);
    if (cmd == "eval") return spore::cli::eval_command(args);
    if (cmd == "predict") return spore::cli::predict_command(args);
    if (cmd == "info") return spore::cli::info_command(args);
    if (cmd == "run") return spore::cli::run_command(args);
    if (cmd == "convert") return spore::cli::convert_command(args);
    if (cmd == "compare") return spore::cli::compare_command(args);
    if (cmd == "bench") return spore::cli::bench_command(args);
    std::fprintf(stderr, "spore: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const spore::Error& e) {
    std::fprintf(stderr, "spore %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spore %s: internal error: %s\n", cmd.c_str(), e.what());
    return 3;
  }
}
