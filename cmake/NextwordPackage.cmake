# The Debian binary package (issue 38): `cpack -G DEB` in the build folder
# writes nextword_VERSION_ARCH.deb from the same install rules as
# `cmake --install` (the binary, the man page, the bash completion, the
# shipped models), its Depends computed by dpkg-shlibdeps from the libraries
# the binary links.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nextword)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "command-line next-word predictor")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "nextword developers <nextword@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # the binary without its symbols, as Debian ships them
# The long description, one string (a CMake list would join its lines with
# ';'); CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY before it and indents it.
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
       "nextword predicts the next word of a phrase with a small attention model:\n"
       "from the shell, as JSON records in pipelines, as completions while typing\n"
       "(a terminal, an HTTP server with a live page, a language server for\n"
       "editors); it shows why it predicted a word and trains its own models.")
include(CPack)
