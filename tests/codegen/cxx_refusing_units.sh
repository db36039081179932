#!/bin/sh
# A host compiler for tests (SPORE_CXX): the real one, except that it refuses any translation unit
# holding more than one kernel (one defining spore_kernel_1), so a graph's unit fails to build and
# the kernels must be built one by one.
for a in "$@"; do
  case "$a" in
    *.cc) if grep -q 'spore_kernel_1(' "$a"; then echo "refusing a multi-kernel unit (test)" >&2; exit 1; fi ;;
  esac
done
exec "${SPORE_TEST_REAL_CXX:-g++}" "$@"
