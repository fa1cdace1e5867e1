/*
 * prog_omp5.c -- an OpenMP 5 program as gcc 12 builds it, for the runtime
 * `pagehome run` gives gcc programs (libgomp's interface on LLVM's
 * libomp, src/preload/gomp_shim.c) and for its allocators
 * (src/preload/omp_alloc.c): OpenMP 5 allocators and queries,
 * target regions run on the host (map, firstprivate, target data and
 * update, nowait with dependences, teams), the omp_target_* memory
 * routines and `omp error` as a warning, around parallel loops over
 * large heap arrays.  Every result is checked here and printed; stdout
 * must equal a plain run's, and the two malloc'd arrays, the two of the
 * default allocator and the one omp_realloc grows must be hot areas
 * (check_libs.sh, CHECK_LIBS_MIN_HOT=5).
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 20)

static int fails;
#define CHECK(what, cond)                                                        \
    do {                                                                         \
        int ok_ = (cond);                                                        \
        printf("prog_omp5 %s: %s\n", what, ok_ ? "ok" : "FAILED");               \
        fails += !ok_;                                                           \
    } while (0)

int main(void)
{
    /* large arrays from malloc, one from an allocator of the program's
     * (not pagehome's: the runtime serves it), small ones from the default
     * allocator (OMP_5.0.1 / 5.0.2) */
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    double *e = omp_aligned_alloc(64, 1024 * sizeof *e, omp_default_mem_alloc);
    double *f = omp_calloc(1024, sizeof *f, omp_default_mem_alloc);
    CHECK("allocators", a && b && e && f && ((uintptr_t)e & 63) == 0 && f[1023] == 0.0);
    omp_allocator_handle_t al = omp_init_allocator(omp_default_mem_space, 0, NULL);
    double *c = omp_alloc(N * sizeof *c, al);
    CHECK("init_allocator", al != omp_null_allocator && c != NULL);
    /* large blocks of the default allocator: pagehome's hot areas */
    double *d = omp_alloc(N * sizeof *d, omp_default_mem_alloc);
    double *g = omp_aligned_calloc(1 << 21, N, sizeof *g, omp_default_mem_alloc);
    CHECK("default allocator", d && g && ((uintptr_t)g & ((1 << 21) - 1)) == 0 &&
                                   g[0] == 0.0 && g[N - 1] == 0.0);
    CHECK("queries", omp_get_device_num() == omp_get_initial_device() &&
                         omp_get_max_teams() >= 0 && omp_get_supported_active_levels() >= 1);

    for (int it = 0; it < 6; it++) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < N; i++)
            a[i] = it + 0.5 * i;
#pragma omp parallel for schedule(static)
        for (int i = 0; i < N; i++) {
            b[i] = 2.0 * a[i];
            d[i] = b[i] + 1.0;
            g[i] += 1.0;
        }
    }
    /* grown by the allocator, the data kept; size 0 frees */
    d = omp_realloc(d, 2 * N * sizeof *d, omp_default_mem_alloc, omp_default_mem_alloc);
    CHECK("omp_realloc", d && d[N - 1] == 2.0 * (5 + 0.5 * (N - 1)) + 1.0 && g[N - 1] == 6.0);
    g = omp_realloc(g, 0, omp_default_mem_alloc, omp_default_mem_alloc);
    CHECK("omp_realloc to 0", g == NULL);

    /* a target region on the host: mapped arrays and a firstprivate scalar
     * the region changes (its copy, not the variable) */
    int scale = 3;
    long sum = 0;
#pragma omp target map(to: a[0:1024]) map(tofrom: sum) firstprivate(scale)
    {
        for (int i = 0; i < 1024; i++)
            sum += (long)(a[i] * scale);
        scale = -1;
    }
    long want = 0;
    for (int i = 0; i < 1024; i++)
        want += (long)(a[i] * 3);
    CHECK("target", sum == want && scale == 3);

    /* target teams distribute parallel for with a reduction */
    double tsum = 0;
#pragma omp target teams distribute parallel for num_teams(4) reduction(+: tsum) \
    map(to: b[0:N])
    for (int i = 0; i < N; i++)
        tsum += b[i];
    double hsum = 0;
    for (int i = 0; i < N; i++)
        hsum += b[i];
    CHECK("target teams", tsum == hsum);
    /* each team marks its number, once */
    int nteams = 0, seen[8] = {0};
#pragma omp target teams num_teams(3) map(tofrom: nteams, seen)
    {
        int t = omp_get_team_num();
        if (t == 0)
            nteams = omp_get_num_teams();
        if (t >= 0 && t < 8)
            seen[t] = 1;
    }
    int marked = 0;
    for (int t = 0; t < 8; t++)
        marked += seen[t];
    CHECK("teams numbering", nteams >= 1 && nteams <= 3 && marked == nteams);

    /* target data, update, enter/exit data */
#pragma omp target data map(tofrom: c[0:N])
    {
#pragma omp target
        for (int i = 0; i < 16; i++)
            c[i] = i;
#pragma omp target update from(c[0:16])
    }
#pragma omp target enter data map(to: a[0:16])
#pragma omp target exit data map(release: a[0:16])
    CHECK("target data", c[15] == 15.0);

    /* nowait with dependences */
    double x = 0, y = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out: x)
        x = 1;
#pragma omp target nowait depend(in: x) depend(out: y) map(to: x) map(from: y)
        y = x + 1;
#pragma omp taskwait
    }
    CHECK("target nowait depend", y == 2.0);

    /* omp_target_* on the host device */
    int host = omp_get_initial_device();
    double *t = omp_target_alloc(64 * sizeof *t, host);
    double m[4][8], r[4][8];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            m[i][j] = 10 * i + j, r[i][j] = -1;
    int rc = t ? omp_target_memcpy(t, m, sizeof m, 0, 0, host, host) : -1;
    size_t vol[2] = {2, 3}, off[2] = {1, 2}, dims[2] = {4, 8};
    int rc2 = omp_target_memcpy_rect(r, t, sizeof(double), 2, vol, off, off, dims, dims, host,
                                     host);
    CHECK("omp_target_memcpy", rc == 0 && rc2 == 0 && r[1][2] == 12 && r[2][4] == 24 &&
                                   r[0][0] == -1 && r[1][5] == -1 &&
                                   omp_target_is_present(t, host));
    omp_target_free(t, host);

#pragma omp error at(execution) severity(warning) message("prog_omp5: a warning")

    omp_free(d, omp_default_mem_alloc);
    omp_free(c, al);
    omp_destroy_allocator(al);
    omp_free(f, omp_default_mem_alloc);
    omp_free(e, omp_default_mem_alloc);
    free(b);
    free(a);
    printf("prog_omp5: %s\n", fails ? "FAILED" : "verification: ok");
    return fails != 0;
}
