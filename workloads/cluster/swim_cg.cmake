# Cluster mode's swim and CG (paper 004's swim on a DSM; the irregular
# CG), included by ../CMakeLists.txt after nas/ (cg_dsm uses nas_common).
# Their tests are in tests/cluster/CMakeLists.txt.
add_executable(swim_dsm cluster/swim_dsm.c)
target_link_libraries(swim_dsm PRIVATE wl_common pagehome_cluster OpenMP::OpenMP_C m)
target_include_directories(swim_dsm PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
set_target_properties(swim_dsm PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cluster)
if(TARGET nas_common)
  add_executable(cg_dsm cluster/cg_dsm.c)
  target_link_libraries(cg_dsm PRIVATE wl_common nas_common pagehome_cluster
    OpenMP::OpenMP_C m)
  target_include_directories(cg_dsm PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
    ${CMAKE_CURRENT_SOURCE_DIR}/nas)
  set_target_properties(cg_dsm PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cluster)
endif()
