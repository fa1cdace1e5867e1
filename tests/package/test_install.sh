#!/usr/bin/env bash
# test_install.sh BUILD_DIR CC [absolute] -- install pagehome into a fresh
# prefix and build two consumers against it: one with pkg-config, one with
# CMake's find_package(pagehome).  Both must run, and the installed
# `pagehome run` must use the installed libraries.  Plain: the configured
# tree is installed with `cmake --install --prefix` (relocated, as Spack
# and Debian install).  absolute: BUILD_DIR is first configured again with
# LIBDIR as an absolute path (as Fedora's %cmake configures, and Nix, which
# makes INCLUDEDIR absolute too; PREFIX/lib, which Debian's CMake searches,
# where Fedora would say /usr/lib64) and INCLUDEDIR relative, and
# installed where it says; it keeps that configuration.
set -euo pipefail
build=${1:?}
cc=${2:-cc}
mode=${3:-relocated}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
if [ "$mode" = absolute ]; then
    cmake "$build" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR="$prefix/lib" \
        -DCMAKE_INSTALL_INCLUDEDIR=include >/dev/null
    cmake --build "$build" >/dev/null
    cmake --install "$build" >/dev/null
    [ "$(find "$prefix" -name pagehome.pc -printf '%h\n' | head -1)" = "$prefix/lib/pkgconfig" ] ||
        { echo "pagehome.pc is not in LIBDIR/pkgconfig"; exit 1; }
else
    cmake --install "$build" --prefix "$prefix" >/dev/null
fi
cat > "$tmp/consumer.c" <<'C'
#include <pagehome.h>
#include <stdio.h>
int main(void)
{
    ph_placement_t pl;
    if (ph_placement_parse(&pl, "interleave") != 0)
        return 1;
    double *a = ph_alloc(1 << 20, &pl);
    if (!a)
        return 2;
    for (int i = 0; i < (1 << 20) / 8; i++)
        a[i] = i;
    size_t counts[64];
    long pages = ph_node_histogram(a, 1 << 20, counts, 64);
    printf("consumer: pagehome %s, %ld pages\n", ph_version(), pages);
    return ph_free(a) == 0 && pages == 256 ? 0 : 3;
}
C
libdir=$(find "$prefix" -name pagehome.pc -printf '%h\n' | head -1)
export PKG_CONFIG_PATH=$libdir
# the .pc names the directories the files are in
same_dir() { [ -d "$1" ] && [ "$(cd "$1" && pwd -P)" = "$(cd "$2" && pwd -P)" ]; }
inc=$(dirname "$(find "$prefix" -name pagehome.h | head -1)")
same_dir "$(pkg-config --variable=libdir pagehome)" "$(dirname "$libdir")" ||
    { echo "pagehome.pc: libdir $(pkg-config --variable=libdir pagehome), want $(dirname "$libdir")"; exit 1; }
same_dir "$(pkg-config --variable=includedir pagehome)" "$inc" ||
    { echo "pagehome.pc: includedir $(pkg-config --variable=includedir pagehome), want $inc"; exit 1; }
# shellcheck disable=SC2046
"$cc" -o "$tmp/with_pc" "$tmp/consumer.c" $(pkg-config --cflags --libs pagehome) \
    -Wl,-rpath,"$(pkg-config --variable=libdir pagehome)"
"$tmp/with_pc"
# static link through pkg-config --static
# shellcheck disable=SC2046
"$cc" -o "$tmp/with_pc_static" "$tmp/consumer.c" \
    $(pkg-config --static --cflags pagehome) "$(pkg-config --variable=libdir pagehome)/libpagehome.a" \
    $(pkg-config --static --libs-only-l pagehome | sed 's/-lpagehome//')
"$tmp/with_pc_static"
# cmake_consumer DIR SOURCE TARGET: a CMake project in $tmp/DIR that finds
# the installed package and links ../SOURCE against TARGET; built and run.
cmake_consumer() {
    mkdir "$tmp/$1"
    cat > "$tmp/$1/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(pagehome 0.1 REQUIRED)
add_executable(consumer ../$2)
target_link_libraries(consumer PRIVATE $3)
CM
    cmake -S "$tmp/$1" -B "$tmp/$1/build" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_C_COMPILER="$cc" >/dev/null
    cmake --build "$tmp/$1/build" >/dev/null
    "$tmp/$1/build/consumer"
}
cmake_consumer cm consumer.c pagehome::pagehome
# Only the public API is exported from the shared library.
so=$(find "$prefix" -name 'libpagehome.so.*.*' | head -1)
bad=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^ph_' | grep -v '^PAGEHOME_' || true)
internal=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -E '^ph_(fail|topo_|os_|mover_|plan_|registry_|opt_|ctx)' || true)
if [ -n "$bad$internal" ]; then
    echo "unexpected exported symbols: $bad $internal"
    exit 1
fi
passed=4
# Cluster mode, when built: a consumer of pagehome-cluster (pkg-config) and
# of pagehome::cluster (CMake), run as one MPI rank (a singleton).
if [ -n "$(find "$prefix" -name pagehome-cluster.pc)" ]; then
    cat > "$tmp/cluster.c" <<'C'
#include <pagehome.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    if (ph_cluster_init(&argc, &argv) != 0)
        return 1;
    ph_placement_t pl;
    ph_placement_parse(&pl, "block");
    long *a = ph_cluster_alloc(1 << 20, &pl);
    if (!a)
        return 2;
    for (int i = 0; i < (1 << 20) / 8; i++)
        a[i] = i;
    int ok = ph_cluster_barrier() == 0 && a[1000] == 1000 && ph_cluster_home(a) == 0;
    /* the kernel writes a shared page never touched (sigsegv mode: an
     * inaccessible page, which the library's read() prepares) */
    long *b = ph_cluster_alloc(8192, &pl);
    int fd = open("/dev/zero", O_RDONLY);
    ok = ok && b && fd >= 0 && read(fd, b + 512, 4096) == 4096 && b[1023] == 0;
    if (b)
        ph_cluster_free(b);
    printf("cluster consumer: rank %d of %d\n", ph_cluster_rank(), ph_cluster_nranks());
    ph_cluster_free(a);
    return ph_cluster_finalize() == 0 && ok ? 0 : 3;
}
C
    # shellcheck disable=SC2046
    "$cc" -o "$tmp/cluster_pc" "$tmp/cluster.c" $(pkg-config --cflags --libs pagehome-cluster) \
        -Wl,-rpath,"$(pkg-config --variable=libdir pagehome-cluster)"
    PAGEHOME_CLUSTER_FAULT=sigsegv "$tmp/cluster_pc"
    cmake_consumer cmc cluster.c pagehome::cluster
    # the cluster library exports its API, and the calls it wraps for
    # shared memory (cluster/syscalls.c) and for the program's SIGSEGV
    # handlers and masks (cluster/signals.c), those unversioned: a versioned one
    # would never be found for a reference to libc's read@GLIBC_...; and
    # the program's MPI calls on buffers (cluster/mpi_calls.c, over PMPI_*)
    cso=$(find "$prefix" -name 'libpagehome_cluster.so.*.*' | head -1)
    wrapped='^(read|write|pread|pwrite|pread64|pwrite64|readv|writev|preadv|pwritev|preadv64|pwritev64|recv|send|recvfrom|sendto|recvmsg|sendmsg|fread|fwrite|__read_chk|__pread_chk|__pread64_chk|__recv_chk|__recvfrom_chk|__fread_chk|sigaction|__sigaction|signal|bsd_signal|sysv_signal|__sysv_signal|sigset|pthread_sigmask|sigprocmask|sigsuspend)$'
    mpiwrapped='^MPI_(Accumulate|Allgather|Allgatherv|Allreduce|Alltoall|Alltoallv|Bcast|Bsend|Exscan|Gather|Gatherv|Get|Get_accumulate|Iallgather|Iallreduce|Ialltoall|Ibcast|Ibsend|Irecv|Ireduce|Irsend|Isend|Issend|Put|Recv|Reduce|Reduce_scatter_block|Rget|Rput|Rsend|Scan|Scatter|Scatterv|Send|Sendrecv|Sendrecv_replace|Ssend)$'
    cbad=$(nm -D --defined-only "$cso" | awk '{print $3}' | grep -v '^ph_cluster_' | grep -v '^PAGEHOME_' |
           grep -Ev "$wrapped" | grep -Ev "$mpiwrapped" || true)
    if [ -n "$cbad" ]; then
        echo "unexpected exported symbols of the cluster library: $cbad"
        exit 1
    fi
    nwrapped=$(objdump -T "$cso" | awk '$NF ~ /^[a-z_0-9]+$/ && $(NF-1) == "Base" {print $NF}' |
               grep -Ec "$wrapped" || true)
    if [ "$nwrapped" -ne 36 ]; then
        echo "the cluster library exports $nwrapped of the 36 wrapped calls unversioned:"
        objdump -T "$cso" | grep -E ' (read|fread|write)$'
        exit 1
    fi
    nmpi=$(nm -D --defined-only "$cso" | awk '{print $3}' | grep -Ec "$mpiwrapped" || true)
    if [ "$nmpi" -ne 37 ]; then
        echo "the cluster library exports $nmpi of the 37 MPI calls it wraps"
        exit 1
    fi
    passed=$((passed + 3))
fi
# transparent mode's libgomp.so.1 for gcc programs: installed apart from
# the libraries (ldconfig must never take it for GNU libgomp), and found
# there by the installed `pagehome run`: a gcc 12 program with OpenMP 5
# names and a target region starts and runs on LLVM's libomp.
shim=$(find "$prefix" -name libpagehome_gomp.so | head -1)
if [ -n "$shim" ] && [ -x "$prefix/bin/pagehome" ] && command -v gcc >/dev/null; then
    [ "$(basename "$(dirname "$shim")")" = pagehome ] ||
        { echo "libpagehome_gomp.so is not in LIBDIR/pagehome: $shim"; exit 1; }
    readelf -d "$shim" | grep -q 'SONAME.*\[libgomp.so.1\]' ||
        { echo "libpagehome_gomp.so's soname is not libgomp.so.1"; exit 1; }
    if find "$prefix" -name 'libgomp.so*' | grep -q .; then
        echo "a file named libgomp.so* was installed"
        exit 1
    fi
    cat > "$tmp/omp5.c" <<'C'
#include <omp.h>
#include <stdio.h>
int main(void)
{
    int dev = omp_get_device_num(), n = 0;
#pragma omp target map(tofrom: n)
    n = 42;
    printf("omp5: device %d, %d\n", dev, n);
    return n == 42 ? 0 : 1;
}
C
    gcc -O2 -fopenmp -o "$tmp/omp5" "$tmp/omp5.c"
    out=$("$prefix/bin/pagehome" run -- "$tmp/omp5")
    [ "$out" = "omp5: device $("$tmp/omp5" | sed 's/omp5: device \([0-9-]*\).*/\1/'), 42" ] ||
        { echo "the installed pagehome run: $out"; exit 1; }
    passed=$((passed + 1))
fi
# the installed `pagehome run` preloads the installed library, not the
# build tree's
if [ -x "$prefix/bin/pagehome" ] && [ -n "$(find "$prefix" -name libpagehome_preload.so)" ]; then
    used=$("$prefix/bin/pagehome" run -v -- true 2>&1 >/dev/null |
           sed -n 's/^pagehome: running .* with //p')
    case "$used" in
        "$prefix"/*) passed=$((passed + 1)) ;;
        *) echo "the installed pagehome run preloads '$used', not the installed library"; exit 1 ;;
    esac
fi
echo "test_install ($mode): $passed passed, 0 failed"
