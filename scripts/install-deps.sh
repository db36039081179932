#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian package Spore needs to build, test, benchmark and run its demo.
# Idempotent, apt-get only; run as root (or with sudo) on Debian 12.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build ccache pkg-config git
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # kernels: oneDNN (built on OpenMP/libgomp)
  libdnnl-dev libxsimd-dev
  # oracle for numerics tests and the PyTorch side of benchmarks
  python3 python3-numpy python3-torch python3-torchvision libopenblas0-openmp
  # sanitizer runtime for the ASan/UBSan test build
  libgcc-12-dev
  # files: gzipped IDX data sets (zlib); image folders: PNG (libpng), JPEG (libjpeg-turbo);
  # PIL writes and decodes the images of the image_folder tests
  zlib1g-dev libpng-dev libjpeg62-turbo-dev python3-pil
  # model files: MindIR (our protobuf schema), ONNX import/export (Debian's precompiled ONNX
  # schema) and its conformance test cases (python3-onnx generates them)
  libprotobuf-dev protobuf-compiler libonnx-dev python3-onnx
  # encrypted MindIR files: AES-GCM from OpenSSL's libcrypto
  libssl-dev
  # .npz archives (libzip); the fuzzers: clang with libFuzzer and the sanitizer runtimes (a
  # recommends of clang that --no-install-recommends would skip)
  libzip-dev clang libclang-rt-14-dev
  # data for the demo (Fashion-MNIST)
  dataset-fashion-mnist
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
