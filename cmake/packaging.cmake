# Installation layout and the Debian package (CPack's DEB generator): the binary, a man page
# generated from its --help, bash completion, the agent's and monitor's systemd units with
# their defaults file, the scenarios, and the container files as examples.
# `cmake --build build --target package` writes build/cephmark_<version>_<arch>.deb;
# docs/packaging.md says what it holds and how it is tested.
include(GNUInstallDirs)

set(CEPHMARK_COMMANDS run cluster rados-bench rados-cleanup cleanup rbd-bench swift-bench report compare agent
    netserver options)
string(REPLACE ";" "," commands "${CEPHMARK_COMMANDS}")
find_program(CEPHMARK_HELP2MAN help2man)
# (not in sanitizer and fuzz builds: their binaries are for tests, and the page would
# depend on an instrumented binary's exit)
if(CEPHMARK_SANITIZE OR CEPHMARK_FUZZ)
  message(STATUS "sanitizer build: no man page")
elseif(CEPHMARK_HELP2MAN)
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/cephmark.1.gz
    COMMAND ${CMAKE_COMMAND} -DCEPHMARK=$<TARGET_FILE:cephmark> -DHELP2MAN=${CEPHMARK_HELP2MAN}
            -DOUT=${CMAKE_BINARY_DIR}/cephmark.1 -DCOMMANDS=${commands}
            -P ${CMAKE_SOURCE_DIR}/cmake/manpage.cmake
    COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/cephmark.1
    DEPENDS cephmark ${CMAKE_SOURCE_DIR}/cmake/manpage.cmake
    COMMENT "cephmark.1 from cephmark --help")
  add_custom_target(manpage ALL DEPENDS ${CMAKE_BINARY_DIR}/cephmark.1.gz)
  install(FILES ${CMAKE_BINARY_DIR}/cephmark.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man page (apt-get install help2man)")
endif()

set(pkg ${CMAKE_SOURCE_DIR}/packaging)
install(FILES ${pkg}/cephmark.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME cephmark)
install(FILES ${pkg}/cephmark-agent.service ${pkg}/cephmark-monitor.service DESTINATION lib/systemd/system)
install(FILES ${pkg}/cephmark-agent.default DESTINATION /etc/default RENAME cephmark-agent)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cephmark/scenarios
        FILES_MATCHING PATTERN "*.lua")
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${pkg}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${pkg}/Containerfile ${pkg}/cephmark-agent.yaml DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cephmark)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "cephmark developers <cephmark@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Ceph benchmarks as Lua scenario scripts")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Ceph benchmarks as Lua scenario scripts\n one C program embedding Lua 5.4 with librados, librbd, Swift/S3, disk and\n socket primitives: rados bench, rbd bench, swift-bench, fio, dd and iperf3 style\n phases, replica-vs-EC comparisons and sweeps, with percentiles, verdicts and\n multi-client agents coordinated through RADOS.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# the linked libraries (lua, yaml, uring, rados, crypto, libc) come from dpkg-shlibdeps;
# librbd and libcurl are opened at first use (runtime/lazylib.h), so they are named here
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "librbd1, libcurl4")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "ceph-common, ceph-mon, ceph-osd, ceph-mgr, radosgw, fio, wrk, iperf3")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${pkg}/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
