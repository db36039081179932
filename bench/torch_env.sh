#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fair PyTorch configuration of shared/PERF-NOTES.md, for the bench scripts: OpenMP OpenBLAS,
# and ATen's widest kernels this CPU runs. ATEN_CPU_CAPABILITY=avx512 on a CPU without AVX-512
# kills PyTorch with SIGILL, so the capability follows /proc/cpuinfo (avx2 otherwise).
# Usage: bench/torch_env.sh /usr/bin/python3 SCRIPT ARGS...
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then cap=avx512; else cap=avx2; fi
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-$cap}
exec "$@"
