# sources.cmake -- analyze/'s library sources, one list for every build that
# compiles them (the library here, the fuzz targets in fuzz/), so a new file
# is added once.  The command files (cmd_analyze, cmd_export) are the
# driver's and stay out of the fuzz build.
#   fathom_analyze_sources(VAR DIR)   VAR: the names without .c
include(${CMAKE_CURRENT_LIST_DIR}/analyses.cmake)
function(fathom_analyze_sources var dir)
  fathom_analyses(analyses ${dir})
  set(${var} device import_map import_json import_scan import_spill import_pytorch import_et import_source cmd_import
      profile sink analysis ${analyses} out chart plot html export read_trace PARENT_SCOPE)
endfunction()
