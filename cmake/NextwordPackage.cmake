# The Debian binary package: `cpack -G DEB` in the build folder
# writes nextword_VERSION_ARCH.deb from the same install rules as
# `cmake --install` (the binary, the man page, the bash completion, the
# shipped models, the copyright and changelog below), its Depends computed by
# dpkg-shlibdeps from the libraries the binary links, plus the systemd
# service and its /etc/default file, which only the package installs.
# cmake/debian/ holds the files written by hand.

set(NEXTWORD_PACKAGE_MAINTAINER "nextword developers <nextword@nextword.invalid>"
    CACHE STRING "The Maintainer of the Debian package and its changelog")
set(debian_dir ${CMAKE_CURRENT_SOURCE_DIR}/cmake/debian)

# The copyright of the program and of the models' training texts, and the
# changelog written from CHANGELOG.md (cmake/debian_changelog.py), compressed
# as Debian's policy has it (gzip -9n: no name or time stamp in it).
install(FILES ${debian_dir}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
if(Python3_Interpreter_FOUND AND NEXTWORD_GZIP)
  set(changelog ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog)
  add_custom_command(
    OUTPUT ${changelog}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/debian
    COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/cmake/debian_changelog.py
            ${CMAKE_CURRENT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_VERSION}
            ${NEXTWORD_PACKAGE_MAINTAINER} ${changelog}
    COMMAND ${NEXTWORD_GZIP} -9nf ${changelog}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/CHANGELOG.md
            ${CMAKE_CURRENT_SOURCE_DIR}/cmake/debian_changelog.py
    COMMENT "Writing the package's changelog from CHANGELOG.md"
    VERBATIM)
  add_custom_target(nextword_changelog ALL DEPENDS ${changelog}.gz)
  install(FILES ${changelog}.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
endif()

# The service: only in the package (component "service", which
# `cmake --install` leaves out), at the paths systemd and Debian read.
install(FILES ${debian_dir}/nextword.service ${debian_dir}/nextword.socket
        DESTINATION /lib/systemd/system COMPONENT service EXCLUDE_FROM_ALL)
install(FILES ${debian_dir}/nextword.default DESTINATION /etc/default RENAME nextword
        COMPONENT service EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nextword)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "command-line next-word predictor")
set(CPACK_PACKAGING_INSTALL_PREFIX ${NEXTWORD_PACKAGE_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${NEXTWORD_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# One package of both components: the files `cmake --install` installs, and
# the service's.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Unspecified service)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
# The service's API key made at installation, removed on purge; the
# /etc/default file is the admin's (a conffile).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${debian_dir}/postinst ${debian_dir}/postrm
                                       ${debian_dir}/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)  # the binary without its symbols, as Debian ships them
# The long description, one string (a CMake list would join its lines with
# ';'); CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY before it and indents it.
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
       "nextword predicts the next word of a phrase with a small attention model:\n"
       "from the shell, as JSON records in pipelines, as completions while typing\n"
       "(a terminal, an HTTP server with a live page, a language server for\n"
       "editors); it shows why it predicted a word and trains its own models.")
include(CPack)
