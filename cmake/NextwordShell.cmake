# nextword's place in the shell: the man page nextword.1, generated at build
# time from the commands' own --help by Debian's help2man, and the bash
# completion script src/cli/nextword.bash-completion; both installed by
# `cmake --install`. Nothing is downloaded: without help2man (or Python) the
# build goes on without the page.

find_program(NEXTWORD_HELP2MAN help2man DOC "help2man, which writes nextword.1 from --help")
find_package(Python3 COMPONENTS Interpreter)
find_program(NEXTWORD_GZIP gzip DOC "gzip, for the package's changelog and man page")
if(NEXTWORD_HELP2MAN AND Python3_Interpreter_FOUND AND NEXTWORD_GZIP)
  # help2man reads `nextword --help` (the commands) and --version; the
  # COMMANDS section, one subsection per command listed there, is each
  # command's --help, and SEE ALSO names the installed documentation (in
  # the Debian package's prefix and under this build's), both
  # written by cmake/man_commands.py.
  set(commands_h2m ${CMAKE_CURRENT_BINARY_DIR}/nextword-commands.h2m)
  add_custom_command(
    OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/nextword.1
    COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man_commands.py
            $<TARGET_FILE:nextword> ${commands_h2m} ${CMAKE_CURRENT_SOURCE_DIR}
            ${NEXTWORD_PACKAGE_PREFIX}/${CMAKE_INSTALL_DOCDIR} ${CMAKE_INSTALL_FULL_DOCDIR}
    COMMAND ${NEXTWORD_HELP2MAN} --no-info --section=1 --name=${PROJECT_DESCRIPTION}
            --include=${commands_h2m} --output=${CMAKE_CURRENT_BINARY_DIR}/nextword.1
            $<TARGET_FILE:nextword>
    DEPENDS nextword ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man_commands.py ${NEXTWORD_DOCS}
            ${CMAKE_CURRENT_SOURCE_DIR}/README.md
    BYPRODUCTS ${commands_h2m}
    COMMENT "Writing the man page nextword.1 from the commands' --help (help2man)"
    VERBATIM)
  # Installed compressed, as Debian ships man pages (gzip -9n: no name or
  # time stamp in it); man reads it either way.
  add_custom_command(
    OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/nextword.1.gz
    COMMAND ${NEXTWORD_GZIP} -9nkf ${CMAKE_CURRENT_BINARY_DIR}/nextword.1
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/nextword.1
    VERBATIM)
  add_custom_target(nextword_man ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/nextword.1.gz)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nextword.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  set(NEXTWORD_MAN_PAGE ON)
else()
  message(STATUS "help2man or Python 3 not found: no man page (cmake/install-deps.sh installs "
                 "help2man)")
  set(NEXTWORD_MAN_PAGE OFF)
endif()

# Where bash-completion loads a command's script from on first use: its
# pkg-config completionsdir, taken relative to its prefix so that it lands
# under CMAKE_INSTALL_PREFIX (/usr/share/bash-completion/completions for
# prefix /usr); without bash-completion's .pc, the same layout.
set(NEXTWORD_BASH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(BASH_COMPLETION QUIET bash-completion)
  if(BASH_COMPLETION_FOUND)
    pkg_get_variable(bash_completion_dir bash-completion completionsdir)
    pkg_get_variable(bash_completion_prefix bash-completion prefix)
    if(bash_completion_dir AND bash_completion_prefix)
      cmake_path(IS_PREFIX bash_completion_prefix "${bash_completion_dir}" NORMALIZE under_prefix)
      if(under_prefix)
        cmake_path(RELATIVE_PATH bash_completion_dir BASE_DIRECTORY "${bash_completion_prefix}")
        set(NEXTWORD_BASH_COMPLETION_DIR ${bash_completion_dir})
      endif()
    endif()
  endif()
endif()
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/src/cli/nextword.bash-completion
        DESTINATION ${NEXTWORD_BASH_COMPLETION_DIR} RENAME nextword)
