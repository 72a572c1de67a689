# The Debian package: `cpack -G DEB` in a build tree configured with
# -DCMAKE_INSTALL_PREFIX=/usr (scripts/package.sh does both) gives reflectd_<version>_amd64.deb
# with the two binaries, the systemd unit (DynamicUser=yes: no account to create), and the
# default configuration as a conffile under /etc/reflectd. Dependencies come from
# dpkg-shlibdeps over the binaries.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME reflectd)
set(CPACK_PACKAGE_VENDOR "reflectd developers")
# Who builds the package signs it: set REFLECTD_PACKAGE_MAINTAINER to your name and address.
# The default's domain is reserved (RFC 2606), so nobody mistakes it for a working address.
set(REFLECTD_PACKAGE_MAINTAINER "reflectd developers <packages@reflectd.invalid>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${REFLECTD_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "background reflection daemon for AI-agent memory")
set(CPACK_PACKAGE_DESCRIPTION
    "reflectd stores the events AI agents publish on a ZeroMQ bus (prompts, tool\n"
    "calls, results, decisions, conversation turns) durably in SQLite and, between\n"
    "bursts, consolidates them into decisions, facts, clusters, entity summaries and\n"
    "medallions, deterministically and without an LLM. Agents recall their memory in\n"
    "plain words, through reflectctl or its Model Context Protocol server.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # reflectd_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The WordNet database recall.wordnet_dir may name (related words; off by default).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "wordnet-base")
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
# /etc/reflectd/reflectd.yaml is the operator's: an upgrade keeps their edits (dpkg conffile).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${CMAKE_CURRENT_LIST_DIR}/conffiles")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Only what runs in production: not the tests, benchmarks or static libraries.
set(CPACK_DEB_COMPONENT_INSTALL OFF)
# Debug symbols stay in the build tree; the package ships stripped binaries.
set(CPACK_STRIP_FILES ON)
# Debian policy 12.5 and 12.7: /usr/share/doc/<package>/copyright and a compressed
# changelog.Debian (one entry per packaged version; the project's history is its git log).
string(TIMESTAMP REFLECTD_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.Debian.in
               ${CMAKE_BINARY_DIR}/packaging/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9 -n -f ${CMAKE_BINARY_DIR}/packaging/changelog.Debian
                COMMAND_ERROR_IS_FATAL ANY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz
              ${CMAKE_CURRENT_LIST_DIR}/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
include(CPack)
