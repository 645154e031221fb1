# libfathom-archive: the MANIFEST, writing .tar.zst trace archives, and opening
# any trace source (archive, CTF directory, lttng-live URL) safely; the
# output rule every command's files follow and the temporary-path cleanup
# (output.c).
# Depends on libarchive and base/'s allocator (libfathom-base) alone:
# nothing else of exec/, so the plugin carries no engine.  Include its header as
# "tracer/archive.h" (tracer/ itself must not be on the include path: its
# archive.h would shadow libarchive's <archive.h>).
if(NOT TARGET PkgConfig::ARCHIVE)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(ARCHIVE REQUIRED IMPORTED_TARGET libarchive)
endif()

add_library(fathom-archive STATIC ${CMAKE_CURRENT_LIST_DIR}/manifest.c ${CMAKE_CURRENT_LIST_DIR}/archive_write.c
  ${CMAKE_CURRENT_LIST_DIR}/archive_open.c ${CMAKE_CURRENT_LIST_DIR}/archive_common.c ${CMAKE_CURRENT_LIST_DIR}/output.c)
target_include_directories(fathom-archive PUBLIC ${PROJECT_SOURCE_DIR})
# linked into the fathom-bt2.so plugin as well
set_target_properties(fathom-archive PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(fathom-archive PUBLIC fathom-base PkgConfig::ARCHIVE)
