# analyses.cmake -- the analyses' sources: one file NAME.c per row of
# analyses.def, in the table's order.  Included by analyze/ and by the fuzz
# build, so that a new analysis is its file and its row, nothing else.
#   fathom_analyses(VAR DIR)   VAR: the names (DIR: the analyze/ folder)
function(fathom_analyses var dir)
  file(STRINGS ${dir}/analyses.def rows REGEX "^ANALYZE_(SINK_)?ROW\\(")
  set(names "")
  foreach(row IN LISTS rows) # a row's strings may hold ';': only the pieces that open a row count
    if(row MATCHES "^ANALYZE_(SINK_)?ROW\\(([a-z0-9_]+)")
      list(APPEND names ${CMAKE_MATCH_2})
    endif()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/analyses.def)
  set(${var} ${names} PARENT_SCOPE)
endfunction()
