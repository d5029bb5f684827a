# Compiler warnings for the project's own targets. NEXTWORD_WERROR (on in CI,
# see tests/run.sh) turns every warning into an error.
option(NEXTWORD_WERROR "Treat compiler warnings as errors" OFF)

function(nextword_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-qual -Wformat=2
    -Wundef -Wnull-dereference -Wimplicit-fallthrough)
  if(NEXTWORD_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
