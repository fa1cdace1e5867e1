# PhMpi.cmake -- the MPI libraries cluster mode's tools, tests and
# benchmarks are built with.  Debian installs Open MPI and MPICH side by
# side, each with its own pkg-config module, so both can be built against
# in one tree:
#   PkgConfig::PH_OPENMPI   (ompi-c)    when found
#   PkgConfig::PH_MPICH     (mpich)     when found
#   PH_MPI_STACKS           the ones found: openmpi, mpich
#   PH_MPI_DEFAULT          the one `mpicc` builds with (Debian's mpi
#                           alternative; what find_package(MPI) finds), or ""
#   ph_mpi_executable(NAME STACK SRC...)  adds executable NAME-STACK built
#                           with that MPI (and OpenMP when found)
#   PH_MPI_CLUSTER_STACKS, PH_MPI_CLUSTER_DEFAULT  the same for cluster mode's
#                           library (src/cluster/) and its tests
# PH_MPI_STACKS and PH_MPI_DEFAULT are empty in sanitizer builds: the MPI
# libraries are not instrumented (TSan reports their threads,
# LeakSanitizer their start-up allocations).  Cluster mode's library and
# its tests are built under both sanitizers, so the DSM's own code is
# checked: under AddressSanitizer with leak checking off for the MPI tests,
# under ThreadSanitizer with the suppressions of tests/tsan.supp (frames
# inside the MPI libraries only; the top CMakeLists.txt).
# Included by every directory that builds MPI programs (its variables are
# per directory); the search runs once.
set(PH_MPI_STACKS)
set(PH_MPI_DEFAULT "")
find_package(PkgConfig REQUIRED)
if(NOT TARGET PkgConfig::PH_OPENMPI)
  pkg_check_modules(PH_OPENMPI QUIET IMPORTED_TARGET GLOBAL ompi-c)
endif()
if(NOT TARGET PkgConfig::PH_MPICH)
  pkg_check_modules(PH_MPICH QUIET IMPORTED_TARGET GLOBAL mpich)
endif()
if(TARGET PkgConfig::PH_OPENMPI)
  list(APPEND PH_MPI_STACKS openmpi)
endif()
if(TARGET PkgConfig::PH_MPICH)
  list(APPEND PH_MPI_STACKS mpich)
endif()
find_program(PH_MPICC mpicc)
if(PH_MPICC)
  get_filename_component(ph_mpicc_real ${PH_MPICC} REALPATH)
  if(ph_mpicc_real MATCHES "mpich" AND TARGET PkgConfig::PH_MPICH)
    set(PH_MPI_DEFAULT mpich)
  elseif(TARGET PkgConfig::PH_OPENMPI AND (ph_mpicc_real MATCHES "openmpi|opal_wrapper"))
    set(PH_MPI_DEFAULT openmpi)
  endif()
endif()
set(ph_mpi_found ${PH_MPI_STACKS})
set(PH_MPI_CLUSTER_STACKS ${PH_MPI_STACKS})
set(PH_MPI_CLUSTER_DEFAULT ${PH_MPI_DEFAULT})
# Under ThreadSanitizer MPICH is the default: its processes start no
# threads of their own over shared memory and it gives no report at all
# (Open MPI's TCP transport, loaded even for shared memory, reports a
# lock-order inversion at MPI_Init, and its runs take 4x as long here).
if(PH_TSAN AND TARGET PkgConfig::PH_MPICH)
  set(PH_MPI_CLUSTER_DEFAULT mpich)
endif()
if(PH_SANITIZE OR PH_TSAN)
  set(PH_MPI_STACKS)
  set(PH_MPI_DEFAULT "")
endif()
get_property(ph_mpi_said GLOBAL PROPERTY PH_MPI_SAID)
if(ph_mpi_said)
elseif(PH_MPI_STACKS)
  message(STATUS "pagehome: MPI for cluster mode: ${PH_MPI_STACKS} (mpicc: ${PH_MPI_DEFAULT})")
elseif(PH_MPI_CLUSTER_STACKS)
  message(STATUS "pagehome: MPI in this sanitizer build: cluster mode's library and tests "
                 "only (${PH_MPI_CLUSTER_STACKS})")
else()
  message(STATUS "pagehome: no MPI (libopenmpi-dev, libmpich-dev): cluster tools, tests "
                 "and benchmarks are not built")
endif()
set_property(GLOBAL PROPERTY PH_MPI_SAID 1)
find_package(OpenMP COMPONENTS C)

if(COMMAND ph_mpi_executable)
  return()
endif()
function(ph_mpi_executable name stack)
  string(TOUPPER ${stack} up)
  add_executable(${name}-${stack} ${ARGN})
  target_link_libraries(${name}-${stack} PRIVATE PkgConfig::PH_${up})
  if(OpenMP_C_FOUND)
    target_link_libraries(${name}-${stack} PRIVATE OpenMP::OpenMP_C)
  endif()
endfunction()
