/*
 * laplace.c -- Jacobi relaxation of the 2D Laplace (steady heat) equation,
 * the stencil kernel of the "OpenMP on a software DSM" studies: an N x N
 * grid whose outer rows and columns hold fixed temperatures; each sweep
 * replaces every interior point by the mean of its four neighbours
 * (5-point stencil), reading one grid and writing the other.
 *
 *   laplace VARIANT N ITERS
 *
 * The variants are the ways those studies wrote the same loop, from the
 * first-touch trap to explicit placement:
 *   seq               one thread, the reference
 *   naive             serial initialisation (every page on the master's
 *                     node), one `parallel for` per sweep
 *   barrier           serial initialisation, one `parallel` around the
 *                     time loop with a `for` per sweep (fewer fork/joins)
 *   block             each thread first-touches the rows it will compute
 *                     (a parallel initialisation with the same
 *                     schedule(static) loop as the sweep), and the thread
 *                     computing the first (last) interior row also
 *                     touches boundary row 0 (N-1), which it alone reads;
 *                     one `parallel for` per sweep
 *   block_barrier     both
 *   affinity          grids from ph_alloc, placed block-static (pages go
 *                     to the node whose threads' schedule(static) rows
 *                     cover them); each thread sweeps the rows that
 *                     ph_affinity_range says are on its node (split among
 *                     the threads of that node); a `parallel` per sweep
 *   affinity_barrier  the same in one `parallel` with a barrier per sweep
 *
 * Every variant computes each point with the same expression in the same
 * order (wl_laplace_row, laplace_point.h), so all print the same checksum
 * bit for bit.
 * Verification: every value lies between the boundary's minimum and
 * maximum (the discrete maximum principle); a band of rows around the
 * first thread's block edge is recomputed sequentially from the initial
 * grid (only the rows it depends on) and must match bit for bit; and for
 * N <= 1024 a parallel variant also runs seq on fresh grids and must match
 * its checksum and every value.
 */
#include "common.h"
#include "locality_probe.h"
#include "laplace_point.h"

#include <omp.h>
#include <pagehome.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "laplace"
#define USAGE PROG " seq|naive|barrier|block|block_barrier|affinity|affinity_barrier N ITERS" \
                   "  (8 <= N <= 16384, 1 <= ITERS <= 10000000)"
#define FULL_CHECK_MAX_N 1024
#define BAND_HALF_ROWS 2

enum variant {
    V_SEQ, V_NAIVE, V_BARRIER, V_BLOCK, V_BLOCK_BARRIER, V_AFFINITY,
    V_AFFINITY_BARRIER, V_COUNT
};
static const char *const variant_names[V_COUNT] = {
    "seq", "naive", "barrier", "block", "block_barrier", "affinity",
    "affinity_barrier"};

static double *row_of(double *g, int n, int i)
{
    return g + (size_t)i * (size_t)n;
}

/* Rows [r0, r1) of the grid; `rows` holds row r0. */
static void init_rows(double *rows, int n, int r0, int r1)
{
    for (int i = r0; i < r1; i++) {
        double *r = rows + (size_t)(i - r0) * (size_t)n;
        for (int j = 0; j < n; j++)
            r[j] = wl_laplace_initial(n, i, j);
    }
}

static void sweep_rows(double *dst, double *src, int n, int r0, int r1)
{
    for (int i = r0; i < r1; i++)
        wl_laplace_row(row_of(dst, n, i), row_of(src, n, i - 1),
                  row_of(src, n, i), row_of(src, n, i + 1), n);
}

/* ---- the sweeps ---------------------------------------------------------- */

static void run_seq(double *u, double *un, int n, long iters)
{
    for (long t = 0; t < iters; t++) {
        sweep_rows(un, u, n, 1, n - 1);
        double *tmp = u;
        u = un;
        un = tmp;
    }
}

static void run_naive(double *u, double *un, int n, long iters)
{
    for (long t = 0; t < iters; t++) {
#pragma omp parallel for schedule(static)
        for (int i = 1; i < n - 1; i++)
            sweep_rows(un, u, n, i, i + 1);
        double *tmp = u;
        u = un;
        un = tmp;
        wl_probe_tick(t + 1); /* WL_LOCALITY=1 */
    }
}

static void run_barrier(double *u, double *un, int n, long iters)
{
#pragma omp parallel firstprivate(u, un)
    for (long t = 0; t < iters; t++) {
#pragma omp for schedule(static)
        for (int i = 1; i < n - 1; i++)
            sweep_rows(un, u, n, i, i + 1);
        /* the implicit barrier of the `for`: every row is written */
        double *tmp = u;
        u = un;
        un = tmp;
    }
}

/* Rows [lo[k], hi[k]) for thread slot k of T (affinity variants).  A team
 * smaller than T still covers every slot. */
typedef struct team_rows {
    int nthreads;
    int *lo, *hi;
} team_rows;

static void sweep_slots(double *dst, double *src, int n, const team_rows *tr)
{
    for (int k = omp_get_thread_num(); k < tr->nthreads; k += omp_get_num_threads())
        sweep_rows(dst, src, n, tr->lo[k], tr->hi[k]);
}

static void run_affinity(double *u, double *un, int n, long iters,
                         const team_rows *tr)
{
    for (long t = 0; t < iters; t++) {
#pragma omp parallel num_threads(tr->nthreads)
        sweep_slots(un, u, n, tr);
        double *tmp = u;
        u = un;
        un = tmp;
    }
}

static void run_affinity_barrier(double *u, double *un, int n, long iters,
                                 const team_rows *tr)
{
#pragma omp parallel num_threads(tr->nthreads) firstprivate(u, un)
    for (long t = 0; t < iters; t++) {
        sweep_slots(un, u, n, tr);
#pragma omp barrier
        double *tmp = u;
        u = un;
        un = tmp;
    }
}

/* ---- data ---------------------------------------------------------------- */

static double *alloc_grid(int n)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    bytes = (bytes + 4095) & ~(size_t)4095;
    double *g = aligned_alloc(4096, bytes);
    if (!g)
        wl_die(PROG, "out of memory for the grids");
    return g;
}

/* The block variants' first touch: the sweep's own schedule(static) loop
 * over the interior rows, plus the boundary rows for their only reader. */
static void init_block(double *u, double *un, int n)
{
#pragma omp parallel for schedule(static)
    for (int i = 1; i < n - 1; i++) {
        if (i == 1) {
            init_rows(u, n, 0, 1);
            init_rows(un, n, 0, 1);
        }
        init_rows(row_of(u, n, i), n, i, i + 1);
        init_rows(row_of(un, n, i), n, i, i + 1);
        if (i == n - 2) {
            init_rows(row_of(u, n, n - 1), n, n - 1, n);
            init_rows(row_of(un, n, n - 1), n, n - 1, n);
        }
    }
}

static double *alloc_placed(int n, int nthreads)
{
    ph_placement_t pl;
    if (ph_placement_init(&pl, PH_POLICY_BLOCK_STATIC) != 0)
        wl_die(PROG, ph_last_error());
    pl.elems = (size_t)n;
    pl.elem_bytes = (size_t)n * sizeof(double);
    pl.nthreads = nthreads;
#if defined(__clang__)
    pl.split = PH_SPLIT_GREEDY; /* libomp */
#else
    pl.split = PH_SPLIT_BALANCED; /* libgomp */
#endif
    double *g = ph_alloc((size_t)n * (size_t)n * sizeof(double), &pl);
    if (!g)
        wl_die(PROG, ph_last_error());
    return g;
}

static int cmp_range(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The interior rows of each node's range (ranges[2k], ranges[2k+1], one
 * per distinct node) cover rows 1..n-2 exactly once. */
static int ranges_tile(int *ranges, int count, int n)
{
    qsort(ranges, (size_t)count, 2 * sizeof(int), cmp_range);
    int next = 1;
    for (int k = 0; k < count; k++) {
        if (ranges[2 * k] != next)
            return 0;
        next = ranges[2 * k + 1];
    }
    return next == n - 1;
}

/* Each thread asks ph_affinity_range for the rows on its node; the
 * threads of a node split that node's interior rows evenly.  Returns 1
 * when the node ranges tile the interior, else fills a static split,
 * says why in *why and returns 0. */
static int affinity_rows(double *g, int n, team_rows *tr, int *nodes_used,
                         const char **why)
{
    int T = tr->nthreads;
    int *node = calloc((size_t)T, sizeof *node);
    int *rb = calloc((size_t)T, sizeof *rb), *re = calloc((size_t)T, sizeof *re);
    int *ranges = calloc(2 * (size_t)T, sizeof *ranges);
    if (!node || !rb || !re || !ranges)
        wl_die(PROG, "out of memory");
    int full_team = 1;
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        if (omp_get_num_threads() != T) {
#pragma omp atomic write
            full_team = 0;
        }
        size_t b = 0, e = 0;
        node[t] = ph_current_node();
        if (node[t] >= 0 &&
            ph_affinity_range(g, (size_t)n * sizeof(double), (size_t)n,
                              node[t], &b, &e) == 0) {
            rb[t] = b < 1 ? 1 : (int)b;
            re[t] = e > (size_t)n - 1 ? n - 1 : (int)e;
            if (re[t] < rb[t])
                re[t] = rb[t];
        }
    }
    int ok = full_team, count = 0;
    *why = ok ? "" : "the team is smaller than omp_get_max_threads()";
    for (int t = 0; ok && t < T; t++) {
        if (node[t] < 0) {
            ok = 0;
            *why = "a thread's node is unknown";
            break;
        }
        int first = 1, peers = 0, rank = 0;
        for (int s = 0; s < T; s++) {
            if (node[s] != node[t])
                continue;
            if (s < t) {
                first = 0;
                rank++;
            }
            peers++;
        }
        long len = re[t] - rb[t];
        tr->lo[t] = rb[t] + (int)(len * rank / peers);
        tr->hi[t] = rb[t] + (int)(len * (rank + 1) / peers);
        if (first && len > 0) {
            ranges[2 * count] = rb[t];
            ranges[2 * count + 1] = re[t];
            count++;
        }
    }
    if (ok && !ranges_tile(ranges, count, n)) {
        ok = 0;
        *why = "the nodes' ranges do not tile the rows";
    }
    if (!ok) {
        for (int t = 0; t < T; t++) {
            tr->lo[t] = 1 + (int)((long)(n - 2) * t / T);
            tr->hi[t] = 1 + (int)((long)(n - 2) * (t + 1) / T);
        }
    }
    *nodes_used = count;
    free(node);
    free(rb);
    free(re);
    free(ranges);
    return ok;
}

/* ---- verification -------------------------------------------------------- */

static double checksum(double *g, int n)
{
    double s = 0.0;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        s += g[k];
    return s;
}

/* The maximum principle: every value within the boundary's [0, 1]. */
static int within_bounds(const double *g, int n)
{
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        if (!(g[k] >= 0.0 && g[k] <= 1.0))
            return 0;
    return 1;
}

/* Recompute rows [w0, w1) after `iters` sweeps from only the rows they
 * depend on (w0 - iters .. w1 + iters) and compare with res bit for bit. */
static int band_matches(double *res, int n, long iters, int w0, int w1)
{
    long lo = w0 - iters, hi = w1 + iters;
    int blo = lo < 0 ? 0 : (int)lo, bhi = hi > n ? n : (int)hi;
    int rows = bhi - blo;
    double *a = malloc((size_t)rows * (size_t)n * sizeof *a);
    double *b = malloc((size_t)rows * (size_t)n * sizeof *b);
    if (!a || !b)
        wl_die(PROG, "out of memory for the verification band");
    init_rows(a, n, blo, bhi);
    init_rows(b, n, blo, bhi);
    /* rows [vlo, vhi) of `a` hold sweep t's values */
    int vlo = blo, vhi = bhi;
    for (long t = 0; t < iters; t++) {
        int r0 = vlo + 1 > 1 ? vlo + 1 : 1;
        int r1 = vhi - 1 < n - 1 ? vhi - 1 : n - 1;
        /* rows of the band are at offset blo: shift by one row count */
        for (int i = r0; i < r1; i++)
            wl_laplace_row(row_of(b, n, i - blo), row_of(a, n, i - 1 - blo),
                      row_of(a, n, i - blo), row_of(a, n, i + 1 - blo), n);
        if (vlo > 0)
            vlo++;
        if (vhi < n)
            vhi--;
        double *tmp = a;
        a = b;
        b = tmp;
    }
    int ok = vlo <= w0 && vhi >= w1 &&
             memcmp(row_of(a, n, w0 - blo), row_of(res, n, w0),
                    (size_t)(w1 - w0) * (size_t)n * sizeof *a) == 0;
    free(a);
    free(b);
    return ok;
}

int main(int argc, char **argv)
{
    long n_l, iters;
    if (argc != 4)
        wl_usage(USAGE);
    int v = wl_parse_name(argv[1], variant_names, V_COUNT);
    if (v < 0 || wl_parse_long(argv[2], 8, 16384, &n_l) != 0 ||
        wl_parse_long(argv[3], 1, 10000000, &iters) != 0)
        wl_usage(USAGE);
    int n = (int)n_l;
    int T = omp_get_max_threads();

    double *u, *un;
    team_rows tr = {T, NULL, NULL};
    int affinity = v == V_AFFINITY || v == V_AFFINITY_BARRIER;
    if (affinity) {
        u = alloc_placed(n, T);
        un = alloc_placed(n, T);
        tr.lo = calloc((size_t)T, sizeof *tr.lo);
        tr.hi = calloc((size_t)T, sizeof *tr.hi);
        if (!tr.lo || !tr.hi)
            wl_die(PROG, "out of memory");
        /* the pages are placed: who writes them first does not matter */
        init_rows(u, n, 0, n);
        init_rows(un, n, 0, n);
        int nodes = 0;
        const char *why = "";
        if (affinity_rows(u, n, &tr, &nodes, &why))
            printf("%s %s: rows from ph_affinity_range, %d node(s), %d thread(s)\n",
                   PROG, variant_names[v], nodes, T);
        else
            printf("%s %s: no affinity rows (%s): static split\n", PROG,
                   variant_names[v], why);
    } else {
        u = alloc_grid(n);
        un = alloc_grid(n);
        if (v == V_BLOCK || v == V_BLOCK_BARRIER) {
            init_block(u, un, n);
        } else {
            init_rows(u, n, 0, n);
            init_rows(un, n, 0, n);
        }
    }

    if (v == V_NAIVE || v == V_BLOCK) { /* WL_LOCALITY=1: rows 1..n-2 static */
        wl_probe_rows("u", u, (size_t)n * sizeof *u, n, 1, n - 2);
        wl_probe_rows("un", un, (size_t)n * sizeof *un, n, 1, n - 2);
        wl_probe_begin();
    }
    double t0 = wl_wtime_s();
    switch (v) {
    case V_SEQ: run_seq(u, un, n, iters); break;
    case V_NAIVE: case V_BLOCK: run_naive(u, un, n, iters); break;
    case V_BARRIER: case V_BLOCK_BARRIER: run_barrier(u, un, n, iters); break;
    case V_AFFINITY: run_affinity(u, un, n, iters, &tr); break;
    default: run_affinity_barrier(u, un, n, iters, &tr); break;
    }
    double time_s = wl_wtime_s() - t0;
    double *res = iters % 2 == 0 ? u : un;

    /* the band: around the end of the first thread's static block */
    int edge = 1 + (n - 2) / (T > 1 ? T : 2);
    int w0 = edge - BAND_HALF_ROWS < 1 ? 1 : edge - BAND_HALF_ROWS;
    int w1 = edge + BAND_HALF_ROWS > n - 1 ? n - 1 : edge + BAND_HALF_ROWS;
    if (wl_fault_injected())
        row_of(res, n, edge)[n / 2] += 1e-9;

    double sum = checksum(res, n);
    printf("%s %s: N=%d iters=%ld checksum=%.17g time_s=%.6f\n", PROG,
           variant_names[v], n, iters, sum, time_s);

    int ok = within_bounds(res, n);
    char how[160];
    int len = snprintf(how, sizeof how, "values in [0,1]: %s; rows %d-%d recomputed: ",
                       ok ? "yes" : "NO", w0, w1 - 1);
    int band = band_matches(res, n, iters, w0, w1);
    ok = ok && band;
    len += snprintf(how + len, sizeof how - (size_t)len, "%s", band ? "equal" : "DIFFER");
    if (v != V_SEQ && n <= FULL_CHECK_MAX_N) {
        double *r = alloc_grid(n), *rn = alloc_grid(n);
        init_rows(r, n, 0, n);
        init_rows(rn, n, 0, n);
        run_seq(r, rn, n, iters);
        double *ref = iters % 2 == 0 ? r : rn;
        double ref_sum = checksum(ref, n);
        int same = ref_sum == sum &&
                   memcmp(ref, res, (size_t)n * (size_t)n * sizeof *ref) == 0;
        ok = ok && same;
        snprintf(how + len, sizeof how - (size_t)len, "; seq checksum %.17g: %s",
                 ref_sum, same ? "equal, every value equal" : "DIFFERENT");
        free(r);
        free(rn);
    }
    int status = wl_verdict(ok, how);

    if (affinity) {
        ph_free(u);
        ph_free(un);
        free(tr.lo);
        free(tr.hi);
    } else {
        free(u);
        free(un);
    }
    return status;
}
