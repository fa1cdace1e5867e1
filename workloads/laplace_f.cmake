# laplace_f (laplace.f90): included into the top level's directory at its
# end (a deferred call in CMakeLists.txt), when Fortran is enabled.  The
# executable goes to this folder's build directory all the same.  The test
# functions wl_test, wl_fault_test and wl_badinput are CMakeLists.txt's.
if(NOT CMAKE_Fortran_COMPILER)
  return()
endif()
find_package(OpenMP COMPONENTS Fortran)
if(NOT OpenMP_Fortran_FOUND)
  message(STATUS "pagehome: no OpenMP for Fortran, laplace_f is not built")
  return()
endif()

set(WL_SRC ${CMAKE_CURRENT_LIST_DIR})
add_executable(laplace_f ${WL_SRC}/laplace.f90)
target_link_libraries(laplace_f PRIVATE OpenMP::OpenMP_Fortran)
# exact equality of reals is the point of the verification
target_compile_options(laplace_f PRIVATE -Wall -Wextra -Wno-compare-reals
  $<$<BOOL:${PH_WERROR}>:-Werror>)
set_target_properties(laplace_f PROPERTIES LINKER_LANGUAGE Fortran
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/workloads
  Fortran_MODULE_DIRECTORY ${CMAKE_BINARY_DIR}/workloads/mod_laplace_f)

if(PH_BUILD_TESTS AND NOT PH_TSAN AND COMMAND wl_test)
  foreach(v seq naive barrier)
    wl_test(laplace_f_${v} laplace_f ${v} 96 30)
  endforeach()
  wl_fault_test(laplace_f laplace_f naive 96 30)
  if(TARGET laplace)
    # C and Fortran: the same checksum, bit for bit
    add_test(NAME workload.laplace_f_same_as_c COMMAND ${WL_SRC}/same_checksum.sh
             $<TARGET_FILE:laplace> $<TARGET_FILE:laplace_f> barrier 96 31)
    set_tests_properties(workload.laplace_f_same_as_c PROPERTIES TIMEOUT 60
      ENVIRONMENT "OMP_NUM_THREADS=2" PASS_REGULAR_EXPRESSION "same_checksum: [^ ]+ == [^ ]+: equal")
  endif()
  wl_badinput(laplace_f_variant laplace_f fast 64 10)
  wl_badinput(laplace_f_n laplace_f seq 7 10)
  wl_badinput(laplace_f_iters laplace_f seq 64 abc)
endif()
