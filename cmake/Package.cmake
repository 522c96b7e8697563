# The Debian package of what cmake/Install.cmake installs: `cpack -G DEB` in
# the build directory, or `cmake --build build --target package`, writes
# ebprof_VERSION_ARCH.deb. Its Depends come from dpkg-shlibdeps over the
# binaries (dpkg-dev, which build-essential brings), so they follow what
# the binaries link, not a list kept by hand.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ebprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "ebprof maintainers <maintainers@users.noreply.a-seed-0d963783.example>"
    CACHE STRING "The Maintainer of the Debian package")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "eBPF CPU profiler: record on a host, report anywhere")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "ebprof-record samples kernel and user stacks with eBPF (on a perf event,
a tracepoint, a uprobe or a kprobe, and optionally where threads wait off
CPU) into a compact recording that carries what naming the frames needs
later. ebprof-report reads it on any machine, without privileges, and writes
perf-style top tables with call graphs, folded stacks, perf script output,
pprof profiles and flame graphs, or compares two recordings.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Not linked, so not in Depends: the report loads libdebuginfod only when
# DEBUGINFOD_URLS asks for it, and libc's debuginfo names its local
# functions (the README says why).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS libdebuginfod1)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS libc6-dbg)
# Debian strips binaries (their symbols go to -dbgsym packages).
set(CPACK_STRIP_FILES ON)
include(CPack)
