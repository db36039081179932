#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that the three per-ISA copies of the *.isa.cc kernels cannot share code (see the ISA
# section of CMakeLists.txt): a shared weak symbol lets the linker hand the AVX-512 copy's
# instantiation to the base/AVX2 callers, which then fault (SIGILL) on CPUs without AVX-512.
#   1. each BUILD/isa/spore_isa_<isa>.o exposes (global/weak/unique) only its table getters,
#      spore::cpu::<name>_<isa>(), and all three copies export the same getters;
#   2. the base copy contains no AVX instruction (no VEX/EVEX, no ymm/zmm/mask register), and the
#      AVX2 copy no AVX-512 register;
#   3. no global or weak function of BUILD/lib/libspore.so (what a caller could be bound to)
#      uses ymm/zmm registers, except the avx2/avx512 table getters themselves.
# Usage: tests/isa_symbols_check.sh [BUILD_DIR]   (default: build)
set -euo pipefail

build=${1:-build}
fail=0
err() { echo "isa_symbols_check: $*" >&2; fail=1; }

# Function names (one per line) in `objdump -d FILE` whose instructions use a register matching
# the ERE REGS or, with VEX=1, are VEX/EVEX-encoded (AT&T mnemonic v*, bar the non-AVX verr/verw
# and virtualization vm* instructions).
functions_using() { # FILE REGS VEX
  objdump -d --no-show-raw-insn "$1" | awk -v re="$2" -v vex="$3" '
    /^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn); next }
    /^ *[0-9a-f]+:\t/ {
      insn = $0; sub(/^ *[0-9a-f]+:\t/, "", insn); sub(/^\{(vex|vex3|evex)\} */, "", insn)
      mn = insn; sub(/[ \t].*/, "", mn)
      if (insn ~ re || (vex && mn ~ /^v/ &&
          mn !~ /^(verr|verw|vmcall|vmlaunch|vmresume|vmread|vmwrite|vmptrld|vmptrst|vmclear|vmxon|vmxoff|vmfunc|vmrun|vmload|vmsave|vmmcall)$/))
        print fn
    }' | sort -u
}

getters_ref=""
for isa in base avx2 avx512; do
  obj=$build/isa/spore_isa_$isa.o
  if [[ ! -f $obj ]]; then
    err "$obj is missing (build first)"
    continue
  fi
  # 1. Exposed symbols: nm -g lists global, weak (W/V) and GNU-unique (u) definitions.
  exposed=$(nm -g --defined-only "$obj" | awk '{print $NF}')
  getters=$(grep -E "^_ZN5spore3cpu[0-9]+[A-Za-z0-9_]+_${isa}Ev\$" <<<"$exposed" || true)
  others=$(grep -v -E "^_ZN5spore3cpu[0-9]+[A-Za-z0-9_]+_${isa}Ev\$" <<<"$exposed" || true)
  if [[ -n $others ]]; then
    err "$obj exposes symbols other than its table getters (they must be local to the $isa copy):"
    c++filt <<<"$others" | sed 's/^/    /' >&2
  fi
  if [[ -z $getters ]]; then
    err "$obj exports no spore::cpu::*_${isa}() table getter (missing SPORE_ISA_EXPORT?)"
  fi
  # The same getters in every copy (names without the ISA suffix).
  names=$(c++filt <<<"$getters" | sed -E "s/_${isa}\(\)\$//" | sort)
  if [[ -z $getters_ref ]]; then
    getters_ref=$names
  elif [[ $names != "$getters_ref" ]]; then
    err "$obj exports different getters than the base copy: $(tr '\n' ' ' <<<"$names")"
  fi
  # 2. Instruction sets.
  case $isa in
    base) bad=$(functions_using "$obj" '%[yz]mm|%k[0-7]' 1) ;;
    avx2) bad=$(functions_using "$obj" '%zmm|%[xy]mm(1[6-9]|2[0-9]|3[01])|%k[0-7]' 0) ;;
    *) bad="" ;;
  esac
  if [[ -n $bad ]]; then
    err "$obj ($isa copy) has functions using instructions beyond its instruction set:"
    sed 's/^/    /' <<<"$bad" | c++filt >&2
  fi
  echo "isa_symbols_check: $isa: exports $(c++filt <<<"$getters" | tr '\n' ' ')"
done

# 3. The shared library: every function other code can reach by name (global or weak) must be
# free of ymm/zmm code, except the avx2/avx512 getters (they fill their tables with wide stores).
lib=$build/lib/libspore.so
if [[ -f $lib ]]; then
  globals=$(nm --defined-only "$lib" | awk '$2 ~ /^[TWiu]$/ {print $3}' | sort -u)
  wide=$(functions_using "$lib" '%[yz]mm' 0)
  leaked=$(comm -12 <(echo "$globals") <(echo "$wide") |
    grep -v -E '^_ZN5spore3cpu[0-9]+[A-Za-z0-9_]+_avx(2|512)Ev$' || true)
  if [[ -n $leaked ]]; then
    err "$lib: global/weak functions with ymm/zmm code (an ISA copy's instantiation leaked out):"
    c++filt <<<"$leaked" | sed 's/^/    /' >&2
  fi
else
  err "$lib is missing (build first)"
fi

if [[ $fail != 0 ]]; then
  echo "isa_symbols_check: FAILED" >&2
  exit 1
fi
echo "isa_symbols_check: OK (each ISA copy self-contained; base copy free of AVX code)"
