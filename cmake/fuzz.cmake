# SPDX-License-Identifier: Apache-2.0
# libFuzzer targets for the untrusted-input parsers (docs/security.md). They need clang, while the
# library is built with g++, so they are a separate CMake project (tests/fuzz) that compiles only
# each parser's own sources with clang and coverage instrumentation and links this build's
# libspore.so for everything else. `ninja fuzz` builds them and runs each for SPORE_FUZZ_SECONDS.
set(SPORE_FUZZ_SECONDS 60 CACHE STRING "Seconds each fuzz target runs under `ninja fuzz`")
add_custom_target(fuzz
  COMMAND ${CMAKE_SOURCE_DIR}/tests/fuzz/run.sh ${CMAKE_BINARY_DIR} ${SPORE_FUZZ_SECONDS}
  DEPENDS spore
  USES_TERMINAL
  COMMENT "Fuzzing the file parsers for ${SPORE_FUZZ_SECONDS} s each")
