# NEXTWORD_SANITIZE=ON builds everything with AddressSanitizer and
# UndefinedBehaviorSanitizer (any report aborts), and with libFuzzer's coverage
# instrumentation, so that the same build runs the whole test suite and the
# fuzz targets (tests/fuzz). It needs clang (Debian's clang and
# libclang-rt-14-dev; libomp-dev for OpenMP); tests/run.sh builds it in
# build-sanitize/.
option(NEXTWORD_SANITIZE "Build with ASan + UBSan and the fuzz targets (clang)" OFF)

if(NEXTWORD_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NEXTWORD_SANITIZE needs clang (-DCMAKE_CXX_COMPILER=clang++)")
  endif()
  # -Wno-pass-failed: the checks on every load keep the loops that `#pragma
  # omp simd` asks to vectorize scalar here (the Release builds vectorize
  # them), which clang reports as a warning, an error with NEXTWORD_WERROR.
  add_compile_options(-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g -Wno-pass-failed)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()
