#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets and runs each for SECONDS; fails if any target finds a crash.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
#
# BUILD_DIR is a normal (g++) Spore build holding lib/libspore.so. Each target compiles only the
# parser sources it tests with clang and coverage + ASan/UBSan instrumentation, and links
# libspore.so for the rest (tensors, ops, registries): the whole library under clang would be
# too slow for CI. Fuzz objects, binaries, the growing corpus and crash artifacts go to
# $FUZZ_DIR (default BUILD_DIR/fuzz); the seeds in tests/fuzz/corpus/<target> stay read-only.
# SECONDS=0 only replays the seeds (a quick regression check). See docs/security.md.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
SECONDS_PER_TARGET=$2
shift 2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
FUZZ_DIR=${FUZZ_DIR:-$BUILD/fuzz}
CXX_FUZZ=${CXX_FUZZ:-clang++}
mkdir -p "$FUZZ_DIR"
FUZZ_DIR=$(cd "$FUZZ_DIR" && pwd)

[ -f "$BUILD/lib/libspore.so" ] || { echo "fuzz: $BUILD/lib/libspore.so is missing; build the library first (ninja -C $BUILD spore)" >&2; exit 2; }
command -v "$CXX_FUZZ" > /dev/null || { echo "fuzz: $CXX_FUZZ not found; install clang (scripts/install-deps.sh)" >&2; exit 2; }

# The targets: NAME | parser sources compiled with instrumentation | extra link libraries | max input bytes.
# A new loader (MindIR, ONNX) gets a target by adding tests/fuzz/<name>_fuzz.cc, seeds in
# tests/fuzz/corpus/<name>/ and one line here (docs/security.md, "Adding a fuzz target").
TARGETS=(
  "npy|src/io/npy_header.cc src/io/npy_array.cc||4096"
  "npz|src/io/npy_header.cc src/io/npy_array.cc src/io/npz.cc|-lzip|16384"
  "checkpoint|src/train/checkpoint.cc|-lz|8192"
  "ir_text|src/ir/parser.cc src/ir/lexer.cc src/ir/verifier.cc||8192"
  "mindir|src/io/mindir_file.cc src/io/mindir_graph.cc src/io/tensor_section.cc src/io/model_cipher.cc|-lz -lprotobuf -lcrypto|65536"
  "onnx|src/io/onnx/importer.cc src/io/onnx/op_context.cc src/io/onnx/ops_control_flow.cc src/io/onnx/ops_elementwise.cc src/io/onnx/ops_index.cc src/io/onnx/ops_loss.cc src/io/onnx/ops_nn.cc src/io/onnx/ops_quantize.cc src/io/onnx/ops_reduce.cc src/io/onnx/ops_resize.cc src/io/onnx/ops_rnn.cc src/io/onnx/ops_shape.cc src/io/onnx/ops_training.cc src/io/onnx/proto_tensor.cc src/io/onnx/run_time_sizes.cc|-lonnx_proto -lprotobuf|65536"
)

# One ninja file: incremental rebuilds with header dependencies, two compiles at a time at most.
CXXFLAGS="-DONNX_ML=1 -DONNX_NAMESPACE=onnx -std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -I$SRC/include -I$SRC/src -I$BUILD/proto"
{
  echo "rule cxx"
  echo "  command = $CXX_FUZZ $CXXFLAGS -MD -MF \$out.d -c \$in -o \$out"
  echo "  depfile = \$out.d"
  echo "  deps = gcc"
  echo "  description = CXX(fuzz) \$in"
  echo "rule link"
  echo "  command = $CXX_FUZZ -fsanitize=fuzzer,address,undefined \$in -o \$out -L$BUILD/lib -Wl,-rpath,$BUILD/lib -lspore \$libs"
  echo "  description = LINK \$out"
  all=()
  for row in "${TARGETS[@]}"; do
    IFS='|' read -r name sources libs _ <<< "$row"
    objs=()
    for s in $sources tests/fuzz/${name}_fuzz.cc; do
      o="obj/$name/$(basename "$s" .cc).o"
      echo "build $o: cxx $SRC/$s"
      objs+=("$o")
    done
    echo "build fuzz_$name: link ${objs[*]} | $BUILD/lib/libspore.so"
    echo "  libs = $libs"
    all+=("fuzz_$name")
  done
  echo "default ${all[*]}"
} > "$FUZZ_DIR/build.ninja.tmp"
mv "$FUZZ_DIR/build.ninja.tmp" "$FUZZ_DIR/build.ninja"
ninja -C "$FUZZ_DIR" -j "${FUZZ_JOBS:-2}"

selected=("$@")
failed=()
printf '%-12s %12s %10s %8s %8s  %s\n' target seconds execs cov ft result
for row in "${TARGETS[@]}"; do
  IFS='|' read -r name _ _ max_len <<< "$row"
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " =~ " $name " ]]; then continue; fi
  corpus="$FUZZ_DIR/corpus/$name"
  mkdir -p "$corpus" "$FUZZ_DIR/artifacts"
  log="$FUZZ_DIR/$name.log"
  if [ "$SECONDS_PER_TARGET" = 0 ]; then mode=(-runs=0); else mode=(-max_total_time="$SECONDS_PER_TARGET"); fi
  set +e
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  SPORE_NUM_THREADS=1 \
  "$FUZZ_DIR/fuzz_$name" "${mode[@]}" -print_final_stats=1 -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
    -max_len="$max_len" -artifact_prefix="$FUZZ_DIR/artifacts/$name-" "$corpus" "$SRC/tests/fuzz/corpus/$name" > "$log" 2>&1
  rc=$?
  set -e
  # (A target that dies before its first report prints no stats: keep going to print its row.)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  covn=$(echo "$cov" | awk '{print $2}')
  ftn=$(echo "$cov" | awk '{print $4}')
  if [ $rc -eq 0 ]; then result=ok; else result="FAILED (rc $rc, log $log)"; failed+=("$name"); fi
  printf '%-12s %12s %10s %8s %8s  %s\n' "$name" "$SECONDS_PER_TARGET" "${execs:-?}" "${covn:-?}" "${ftn:-?}" "$result"
  if [ $rc -ne 0 ]; then
    grep -E 'ERROR:|SUMMARY:|runtime error|Test unit written|terminate called|what\(\)|No such file|exiting' "$log" | head -20 | sed 's/^/    /' || true
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${failed[*]} failed; reproduce with $FUZZ_DIR/fuzz_<target> $FUZZ_DIR/artifacts/<file>" >&2
  exit 1
fi
