#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the oracle: the C++ driver writes the cases, PyTorch (Debian's, via /usr/bin/python3)
# checks them. Usage: run.sh DRIVER OUT_DIR [FAMILY...]
set -euo pipefail
driver=$1; out=$2; shift 2
rm -rf "$out"; mkdir -p "$out"
"$driver" "$out" "$@"
here=$(cd "$(dirname "$0")" && pwd)
exec /usr/bin/python3 "$here/check.py" "$out"
