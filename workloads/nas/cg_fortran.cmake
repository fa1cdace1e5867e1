# cg_alloc_f and cg_common_f (cg_alloc.f90, cg_common.f90): the CG-like
# kernel in Fortran 90 (cg_kernel.inc) with ALLOCATABLE arrays and with
# COMMON blocks.
# Included by CMakeLists.txt: at once when Fortran is already enabled,
# else (inside pagehome, whose top level enables Fortran after adding
# workloads/) at the end of the top level's directory, a deferred call.
# So this file may run in another directory's scope: it takes its paths
# from CMAKE_CURRENT_LIST_DIR and the NAS_BINARY_DIR global property, and
# the test functions nas_run_test, nas_fault_test, nas_badinput (global)
# from CMakeLists.txt.
get_property(nas_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT CMAKE_Fortran_COMPILER OR NOT Fortran IN_LIST nas_languages)
  return()
endif()
find_package(OpenMP COMPONENTS Fortran)
if(NOT OpenMP_Fortran_FOUND)
  message(STATUS "nas: no OpenMP for Fortran, cg_alloc_f and cg_common_f are not built")
  return()
endif()

get_property(nas_bin GLOBAL PROPERTY NAS_BINARY_DIR)
set(nas_werror)
if(PH_WERROR)
  set(nas_werror -Werror)
endif()
# Both variants INCLUDE the kernel, cg_kernel.inc.  Ninja builds Fortran
# through a preprocessing step that records #include but not the Fortran
# INCLUDE line: the dependency is stated here.
foreach(v alloc common)
  set(t cg_${v}_f)
  add_executable(${t} ${CMAKE_CURRENT_LIST_DIR}/cg_${v}.f90)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/cg_${v}.f90 PROPERTIES
    OBJECT_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cg_kernel.inc)
  target_link_libraries(${t} PRIVATE OpenMP::OpenMP_Fortran)
  target_compile_options(${t} PRIVATE -Wall -Wextra ${nas_werror})
  set_target_properties(${t} PROPERTIES LINKER_LANGUAGE Fortran
    RUNTIME_OUTPUT_DIRECTORY ${nas_bin}
    Fortran_MODULE_DIRECTORY ${nas_bin}/mod_${t})
endforeach()

if(PH_TSAN OR (DEFINED PH_BUILD_TESTS AND NOT PH_BUILD_TESTS) OR NOT COMMAND nas_run_test)
  return()
endif()
foreach(v alloc common)
  set(t cg_${v}_f)
  nas_run_test(${t}_S ${t} S)
  nas_fault_test(${t} ${t} S)
  nas_badinput(${t}_noargs ${t})
  nas_badinput(${t}_class ${t} B)
  nas_badinput(${t}_iters ${t} S 0)
  nas_badinput(${t}_iters_text ${t} S 5x)
  nas_badinput(${t}_extra_arg ${t} S 1 500 7)
endforeach()
nas_run_test(cg_alloc_f_small cg_alloc_f W 3 500)
nas_badinput(cg_alloc_f_size cg_alloc_f S 3 99)
nas_badinput(cg_common_f_size cg_common_f S 3 14001)
# The two storage variants compute the same numbers: identical stdout
# once the program names are made equal.
add_test(NAME workload.nas_cg_f_variants_agree
  COMMAND sh -c "a=$(\"$0\" S 4 | sed s/cg_alloc/cg/) && c=$(\"$1\" S 4 | sed s/cg_common/cg/) && echo \"$a\" && [ \"$a\" = \"$c\" ] && echo 'nas: variants agree'"
          $<TARGET_FILE:cg_alloc_f> $<TARGET_FILE:cg_common_f>)
set_tests_properties(workload.nas_cg_f_variants_agree PROPERTIES TIMEOUT 60
  ENVIRONMENT "OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive"
  PASS_REGULAR_EXPRESSION "verification: ok.*nas: variants agree")
