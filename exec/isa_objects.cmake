# isa_objects.cmake -- one vector set's copy of the kernel files as one
# object whose every symbol carries the set's suffix (exec/CMakeLists.txt):
#   cmake -DLD= -DNM= -DOBJCOPY= -DSUFFIX=_avx2 -DOBJECTS="a.o|b.o" -DOUT=x.o -P isa_objects.cmake
# The copy's files are linked into one relocatable object first, so a call
# from one of its files to another's function is renamed with the function
# and stays within the set; what they call outside the set (the engine's
# helpers, libm, OpenMP) keeps its name.
string(REPLACE "|" ";" objects "${OBJECTS}")
execute_process(COMMAND ${LD} -r -o ${OUT}.r.o ${objects} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isa_objects: ${LD} -r: ${err}")
endif()
# Every symbol the copy defines, its static functions and OpenMP's outlined
# bodies (op_fwd_Tanh._omp_fn.0) too, so that the disassembly names each
# function of the copy with the suffix (tests/portable_isa.sh): the suffix
# goes before the first dot (op_fwd_Tanh_avx2._omp_fn.0), or at the end of a
# name that starts with one (clang's .omp_outlined..1_avx2).
execute_process(COMMAND ${NM} --defined-only -P ${OUT}.r.o OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isa_objects: ${NM} failed on ${OUT}.r.o")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${syms}")
set(names "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE " .*" "" name "${line}")
  list(APPEND names "${name}")
endforeach()
list(REMOVE_DUPLICATES names)
set(map "")
foreach(name IN LISTS names)
  if(name MATCHES "^[.]")
    set(renamed "${name}${SUFFIX}")
  else()
    string(REGEX REPLACE "^([^.]+)(.*)$" "\\1${SUFFIX}\\2" renamed "${name}")
  endif()
  string(APPEND map "${name} ${renamed}\n")
endforeach()
file(WRITE ${OUT}.syms "${map}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.syms ${OUT}.r.o ${OUT} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "isa_objects: ${OBJCOPY}: ${err}")
endif()
file(REMOVE ${OUT}.r.o)
