#!/bin/sh
# Generates the ONNX backend node test cases (model.onnx + test_data_set_*/{input,output}_*.pb)
# from Debian's python3-onnx into DIR (default build/onnx-backend-data). Idempotent.
set -eu
out=${1:-build/onnx-backend-data}
here=$(dirname "$0")
if [ -f "$out/.complete" ]; then exit 0; fi
mkdir -p "$out"
/usr/bin/python3 "$here/gen_backend_data.py" generate-data -o "$out" >"$out/generate.log" 2>&1 || {
  echo "gen_backend_data: generation failed, see $out/generate.log" >&2; exit 1; }
touch "$out/.complete"
