# Every dependency comes from Debian's packages (cmake/install-deps.sh) and is
# found the normal CMake way; nothing is vendored or downloaded.
find_package(CLI11 2.1 REQUIRED CONFIG)           # libcli11-dev
find_package(nlohmann_json 3.10 REQUIRED CONFIG)  # nlohmann-json3-dev
# Boost.Beast and Asio for `nextword serve` (libboost1.74-dev; header-only).
find_package(Boost 1.74 REQUIRED)
find_package(Threads REQUIRED)
# PCRE2 (libpcre2-dev) runs the pre-tokenizers' regular expressions of
# byte-level BPE vocabularies (src/text/pretokenizer.cpp): Unicode's letter
# and number classes, lookahead, compiled to machine code.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)

# OpenBLAS through its CBLAS interface (libopenblas-dev). FindBLAS finds the
# library; the header sits in a per-variant directory on Debian.
#
# Linked statically (Debian ships libopenblas.a beside the .so): loading the
# 30 MB shared library and resolving its symbols took 3 ms of every start
# (a program that only links it: 3.9 ms against 0.9 ms for an empty one;
# statically, 1.3 ms), more than a short prediction's whole work.
set(BLA_VENDOR OpenBLAS)
set(BLA_STATIC ON)
find_package(BLAS REQUIRED)
find_path(NEXTWORD_CBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas-pthread openblas openblas-openmp
  PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE} /usr/include
  REQUIRED)
add_library(nextword_cblas INTERFACE)
target_link_libraries(nextword_cblas INTERFACE BLAS::BLAS)
target_include_directories(nextword_cblas SYSTEM INTERFACE ${NEXTWORD_CBLAS_INCLUDE_DIR})
add_library(nextword::cblas ALIAS nextword_cblas)

# OpenMP spreads the row-wise loops (layer norm, softmax, attention per window)
# over the cores; it ships with the compiler (libgomp for g++, libomp for clang).
#
# With g++, libgomp is linked statically (gcc ships libgomp.a): a shared
# libgomp reads its environment in its own constructor, before any code of
# ours can run, so the short spin that base/threading.cpp chooses could only
# be set by the process starting itself again. Linked in, libgomp's
# constructor runs after base/threading.cpp's, which has a higher priority.
find_package(OpenMP REQUIRED COMPONENTS CXX)
add_library(nextword_openmp INTERFACE)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libgomp.a
                  OUTPUT_VARIABLE NEXTWORD_LIBGOMP OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${NEXTWORD_LIBGOMP}" OR NOT EXISTS "${NEXTWORD_LIBGOMP}")
    message(FATAL_ERROR "libgomp.a not found (g++ printed '${NEXTWORD_LIBGOMP}')")
  endif()
  find_package(Threads REQUIRED)
  target_compile_options(nextword_openmp INTERFACE ${OpenMP_CXX_FLAGS})
  target_link_libraries(nextword_openmp INTERFACE ${NEXTWORD_LIBGOMP} Threads::Threads)
else()
  target_link_libraries(nextword_openmp INTERFACE OpenMP::OpenMP_CXX)
endif()
add_library(nextword::openmp ALIAS nextword_openmp)

# Open MPI (libopenmpi-dev; mpirun from openmpi-bin) for data-parallel
# training, only with -DNEXTWORD_MPI=ON. Its C API is used from C++, so the
# header of the deprecated C++ bindings is skipped.
# oneDNN (libdnnl-dev) for bf16 training products, only with -DNEXTWORD_DNNL=ON.
if(NEXTWORD_DNNL)
  find_package(dnnl 2.6 REQUIRED CONFIG)
endif()

if(NEXTWORD_MPI)
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()

# ncurses' terminfo layer (libncurses-dev), for `nextword type`: the
# terminal's own strings for moving the cursor, clearing a line and naming
# the keys. FindCurses gives variables only; an interface target carries them.
set(CURSES_NEED_NCURSES TRUE)
find_package(Curses REQUIRED)
add_library(nextword_curses INTERFACE)
target_link_libraries(nextword_curses INTERFACE ${CURSES_LIBRARIES})
target_include_directories(nextword_curses SYSTEM INTERFACE ${CURSES_INCLUDE_DIRS})
target_compile_options(nextword_curses INTERFACE ${CURSES_CFLAGS})
add_library(nextword::curses ALIAS nextword_curses)

# `nextword serve` as a service speaks systemd's socket activation and
# readiness protocols itself (src/serve/service_manager.cpp), without
# libsystemd: linking it made every nextword process start ~1 ms slower.
