# What `cmake --install` and the .deb (CPack) ship: the CLI, the runtime beside it (the CLI finds it
# at ../lib/liblockscope.so), man pages, bash completion and the vendored libraries' licenses. The man pages are generated from
# `lockscope --help` and each command's --help by help2man, so they cannot drift from the CLI.
include(GNUInstallDirs)

install(TARGETS lockscope RUNTIME DESTINATION bin)
install(TARGETS lockscope_runtime LIBRARY DESTINATION lib)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/lockscope.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME lockscope)
# The html report's pages carry d3 (ISC) and d3-flame-graph (Apache-2.0), built into the CLI
# (third_party/web/): their licenses ship with it.
foreach(library d3 d3-flame-graph)
  install(FILES ${CMAKE_SOURCE_DIR}/third_party/web/${library}/LICENSE
          DESTINATION ${CMAKE_INSTALL_DOCDIR}/third_party/${library})
endforeach()

find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  message(FATAL_ERROR "help2man not found (Debian package help2man; scripts/install-dependencies.sh "
                      "installs it): it writes the man pages from lockscope's --help")
endif()
set(man_dir ${CMAKE_BINARY_DIR}/man)
set(man_pages)
# lockscope(1), then lockscope-COMMAND(1) per command: NAME and the one-line description.
set(man_entries
    "lockscope|lockscope|profile the locks of any dynamically linked program, and a lock lab"
    "lockscope-run|run|profile a command, then print its lock report"
    "lockscope-record|record|run a command with the lockscope runtime and write its profile"
    "lockscope-report|report|report a lockscope profile as text, JSON or another format"
    "lockscope-bench|bench|the lab: classic lock experiments across lock algorithms")
foreach(entry IN LISTS man_entries)
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 page)
  list(GET fields 1 command)
  list(GET fields 2 description)
  if(command STREQUAL "lockscope")
    set(help_command $<TARGET_FILE:lockscope>)
  else()
    # help2man runs `PROGRAM --help`; a two-word command goes through a small wrapper.
    set(help_command ${man_dir}/${page})
    file(WRITE ${CMAKE_BINARY_DIR}/man-wrappers/${page}.in
         "#!/bin/sh\nexec \"@LOCKSCOPE@\" ${command} \"$@\"\n")
  endif()
  set(out ${man_dir}/${page}.1)
  set(wrapper_steps)
  if(NOT command STREQUAL "lockscope")
    set(wrapper_steps
        COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_BINARY_DIR}/man-wrappers/${page}.in
                -DOUT=${help_command} -DLOCKSCOPE=$<TARGET_FILE:lockscope>
                -P ${CMAKE_SOURCE_DIR}/cmake/man_wrapper.cmake)
  endif()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    ${wrapper_steps}
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1 --name=${description}
            --version-string=${PROJECT_VERSION} --output=${out} ${help_command}
    DEPENDS lockscope ${CMAKE_SOURCE_DIR}/cmake/man_wrapper.cmake
    COMMENT "man page ${page}(1) from --help"
    VERBATIM)
  list(APPEND man_pages ${out})
endforeach()
add_custom_target(lockscope_man ALL DEPENDS ${man_pages})
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The .deb: `cpack -G DEB` in the build directory (packaging_test runs it).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lockscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "lock profiler for unmodified Linux programs (LD_PRELOAD), and a lock lab")
set(CPACK_PACKAGE_CONTACT "lockscope developers <lockscope@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends from the binaries' libraries (dpkg-shlibdeps)
set(CPACK_STRIP_FILES OFF)  # keep the symbols: lockscope reports its own frames too
include(CPack)
