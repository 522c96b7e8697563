# What `cmake --install build --prefix P` puts under P, in the GNU layout:
# the binaries in bin/, their man pages in share/man/man1/, the bash
# completion in share/bash-completion/completions/ (one file per command,
# by name, as bash-completion looks them up), the README in share/doc/ebprof/
# with the documents it links under docs/ beside it (so its links hold), and
# the copyright file and changelog Debian's policy asks for there. The fuzz
# build has no recorder: it installs the report alone.

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
set(changelog ${PROJECT_BINARY_DIR}/changelog.gz)
add_custom_command(OUTPUT ${changelog}
  COMMAND ${EBPROF_GZIP} -9nc ${PROJECT_SOURCE_DIR}/docs/changelog > ${changelog}
  DEPENDS ${PROJECT_SOURCE_DIR}/docs/changelog)
add_custom_target(ebprof_man_pages ALL DEPENDS ${man_pages} ${changelog})
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES README.md docs/copyright ${changelog} DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB ebprof_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${ebprof_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
