# What `cmake --install build --prefix P` puts under P, in the GNU layout:
# the binaries in bin/, their man pages in share/man/man1/, the bash
# completion in share/bash-completion/completions/ (one file per command,
# by name, as bash-completion looks them up), the README and the design
# documents in share/doc/ebprof/. The fuzz build has no recorder: it
# installs the report alone.

include(GNUInstallDirs)

set(ebprof_commands ebprof-report)
if(TARGET ebprof-record)
  list(PREPEND ebprof_commands ebprof-record)
endif()
install(TARGETS ${ebprof_commands} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Compressed as Debian's policy asks (gzip -9n: no name or time inside, so
# the same page gives the same bytes); man reads either.
find_program(EBPROF_GZIP gzip REQUIRED)
set(man_pages)
foreach(command ${ebprof_commands})
  set(page ${PROJECT_BINARY_DIR}/man/${command}.1)
  add_custom_command(OUTPUT ${page}.gz
    COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/docs/man/${command}.1 ${page}
    COMMAND ${EBPROF_GZIP} -9nf ${page}
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/${command}.1
    VERBATIM)
  list(APPEND man_pages ${page}.gz)
  install(FILES scripts/ebprof-completion.bash
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${command})
endforeach()
add_custom_target(ebprof_man_pages ALL DEPENDS ${man_pages})
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES README.md docs/architecture.md docs/format.md docs/fleet.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
