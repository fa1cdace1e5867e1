/*
 * workload.c -- BT-, SP- and CG-like programs for `pagehome sim`, modelled
 * on the loop structure of the bundled kernels workloads/nas/bt.c, sp.c
 * and cg.c at class A (their sizes and iteration counts; they follow the
 * NAS codes the seed papers ran).
 *
 * UNIT.  An access is one cache line moved from memory (what the
 * Origin's reference counters counted).  A "sweep" of a page by a thread
 * is one pass over the part of the page the thread works on:
 * (4096 / line_bytes) accesses for a whole page, proportionally fewer for
 * the share a thread owns.  A read-modify-write pass is one sweep.
 * Caches are not modelled: every sweep misses (an upper bound on traffic;
 * the Origin's 4 MB L2 caught much of it).  Work is split by OpenMP's
 * static schedule as libgomp splits it (the first n % T threads get one
 * more).
 *
 * BT-LIKE (bt.c: N = 64 points per direction with the boundary, 5
 * unknowns, 180 iterations).  Hot arrays u, f, rhs, N^3 x 5 doubles each
 * (10 MiB = 2560 pages), k outermost: a k-plane is 160 KiB = 40 pages, a
 * j-row 2560 bytes.  Five parallel regions per iteration, all over the
 * interior (k, j = 1 .. N-2):
 *
 *   phase  loop split over             u          f    rhs
 *   rhs    k (planes)                  1 + halo   1    1
 *   x      k                           -          -    2
 *   y      k                           -          -    2
 *   z      j (rows of every plane)     -          -    2
 *   add    k                           1          -    1
 *
 * compute_rhs (op_plane) reads u with a 7-point stencil -- the planes k-1
 * and k+1 of the neighbours' slabs are the halo (1 sweep of each) -- reads
 * f and writes rhs.  Each line solve passes over its line of rhs twice
 * (forward elimination, back substitution; the 5x5 blocks come from the
 * constant K, not from u).  z_sweep is parallel over j: thread t owns rows
 * j of EVERY plane, the other ownership of the phase change.  add updates
 * u from rhs.  Per page per iteration from its owner: u 2 (+ halo), f 1,
 * rhs 8 sweeps; the z phase is 2 of rhs's 8.
 *
 * SP-LIKE (sp.c: N = 64, 200 iterations; u, f, rhs static, the same
 * sizes).  The same five regions and sweeps as BT, with a 13-point
 * stencil in compute_rhs (fourth-difference dissipation): the halo is the
 * two planes on either side of a slab.  In memory traffic SP-like differs
 * from BT-like only by that wider halo and its iteration count: its scalar
 * pentadiagonal solves are cheaper to *compute* than BT's 5x5 blocks, and
 * the model has no compute time.
 *
 * CG-LIKE (cg.c: NA = 14000 rows, NONZER = 48, 15 outer iterations of 25
 * CG steps).  CSR arrays rowptr (8 bytes, NA + 1), col (4 bytes) and val
 * (8 bytes) with NA (2 NONZER + 1) = 1 358 000 entries (each draw puts an
 * entry in two rows, plus the diagonal; 28, 1327 and 2653 pages), rows
 * split evenly (entries in proportion), and the vectors x, z, r, p, q (NA
 * doubles, 28 pages each) split like the rows.  One parallel region per
 * outer iteration whose orphaned loops end at barriers (53 phases):
 *
 *   phase   loop                                   sweeps
 *   init    z = 0, r = p = x                       own z, r, p, x: 1
 *   matvec  q = A p (25 times)                     own rowptr, col, val,
 *                                                  q: 1; ALL of p: 1 (every
 *                                                  thread reads the whole
 *                                                  vector, rewritten by its
 *                                                  owners each step)
 *   vecops  z += a p, r -= a q, r.r; p = r + b p   own z 1, p 2, r 2, q 1
 *           (25 times; two loops with the same
 *           split, one phase)
 *   resid   x - A z and the dot products           own rowptr, col, val,
 *                                                  x: 1; ALL of z: 1
 *   xnew    x = z / ||z||                          own x, z: 1
 *
 * p (and z in resid) is the shared vector "read by all": its pages have
 * no good home, every other page has exactly one owner.
 *
 * E6'S PROGRAMS (synthetic, for the TLB term and 2 MiB pages).  One
 * array of T x 16 MiB (4096 pages a thread, 2 MiB-aligned), the same two
 * phases per iteration in both; only the layout differs:
 *
 *   private blocks  thread t owns the contiguous 16 MiB block t (8 units
 *                   of 2 MiB, all its own);
 *   finely shared   inside every 2 MiB unit the data is cut into chunks
 *                   of g = 4, 8, 16, 32, 64 KiB (g cycles with the unit:
 *                   unit u has g = 4 KiB << (u mod 5)), dealt to the
 *                   threads round robin (a chunk counter running over the
 *                   whole array), so every unit holds every thread's data.
 *
 *   phase   what thread t does                          per own page
 *   update  one sequential read-modify-write pass over  64 accesses, 1
 *           its own data, in address order              page switch; 1
 *                                                        unit switch on its
 *                                                        first page of a unit
 *   gather  reads as many cache lines as its data has,  64 accesses, all
 *           each at a uniformly random place in its own  but 1/W4 switch
 *           data (a CG-like x[idx[k]] with own indices)  page, all but
 *                                                        n_u/W4 switch unit
 *
 * (64 = 4096 / line_bytes; W4 = t's pages, n_u = t's pages in the unit.)
 * The first toucher of a page is its owner.  The switch counts feed the
 * TLB term of the cost model (model.h); the access counts are as for the
 * NAS-like programs (every access a cache line from memory).
 *
 * FIRST TOUCH.  The bundled kernels initialise u, f, rhs and CG's vectors
 * serially on purpose (the first-touch trap: that is single-node here);
 * 003's codes were tuned for first touch (a parallel cold-start
 * iteration), which is what "first-touch" models: each page is first
 * touched by the thread whose share of the main loops (k planes, the
 * boundary planes going to the first and last thread; rows) holds its
 * first byte -- as cg.c does for its matrix.
 */
#include "experiment/workload.h"

#include "base/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096.0

/* class A geometry of the bundled kernels */
#define GRID 64                                  /* points per direction */
#define ROW_BYTES ((size_t)GRID * 5 * 8)         /* 2560: one j-row */
#define PLANE_BYTES (ROW_BYTES * GRID)           /* 163840: one k-plane */
#define GRID_BYTES (PLANE_BYTES * GRID)          /* 10 MiB: one array */
#define CG_NA 14000L
#define CG_NZ (CG_NA * (2 * 48 + 1))             /* NA (2 NONZER + 1) */
#define CG_STEPS 25                              /* CG steps per iteration */

static const char *const app_names[] = {"BT", "SP", "CG", "private blocks",
                                        "finely shared"};

const char *ph_exp_app_name(int kind)
{
    return kind >= 0 && kind <= PH_EXP_LAST_APP ? app_names[kind] : "?";
}

int ph_exp_app_iterations(int kind)
{
    return kind == PH_EXP_BT   ? 180
           : kind == PH_EXP_SP ? 200
           : kind == PH_EXP_CG ? 15
                                : 20;
}

int ph_exp_app_find(const char *name)
{
    for (int k = 0; name && k <= PH_EXP_LAST_APP; k++) {
        const char *a = app_names[k], *b = name;
        while (*a && *b &&
               toupper((unsigned char)*b) == toupper((unsigned char)*a)) {
            a++;
            b++;
        }
        if (!*a && !*b)
            return k;
    }
    return -1;
}

/* ---- building ------------------------------------------------------- */

typedef struct builder {
    ph_exp_app *a;
    double *dense;        /* npages * nthreads accesses of the phase */
    double lines;         /* accesses of a whole-page sweep */
} builder;

/* libgomp's static split of n iterations over T threads. */
static void split(long n, int T, int t, long *lo, long *hi)
{
    long q = n / T, r = n % T;
    if (t < r) {
        *lo = t * (q + 1);
        *hi = *lo + q + 1;
    } else {
        *lo = t * q + r;
        *hi = *lo + q;
    }
}

static int add_array(ph_exp_app *a, const char *name, size_t bytes)
{
    if (a->narrays == PH_EXP_MAX_ARRAYS)
        return -1;
    size_t pages = (bytes + 4095) / 4096;
    a->arrays[a->narrays++] = (ph_exp_array){name, a->npages, pages};
    a->npages += pages;
    return 0;
}

/* Thread t sweeps bytes [lo, hi) of array ar `sweeps` times. */
static void sweep(builder *b, int ar, double lo, double hi, int t,
                  double sweeps)
{
    const ph_exp_array *x = &b->a->arrays[ar];
    if (!(hi > lo) || !(sweeps > 0))
        return;
    size_t p0 = (size_t)(lo / PAGE), p1 = (size_t)ceil(hi / PAGE);
    if (p1 > x->npages)
        p1 = x->npages;
    for (size_t p = p0; p < p1; p++) {
        double a0 = p * PAGE > lo ? p * PAGE : lo;
        double a1 = (p + 1) * PAGE < hi ? (p + 1) * PAGE : hi;
        if (a1 > a0)
            b->dense[(x->first + p) * (size_t)b->a->nthreads + (size_t)t] +=
                sweeps * b->lines * (a1 - a0) / PAGE;
    }
}

/* The current dense matrix becomes phase `name`. */
static int finish_phase(builder *b, const char *name, int z)
{
    ph_exp_app *a = b->a;
    size_t T = (size_t)a->nthreads, n = 0;
    for (size_t i = 0; i < a->npages * T; i++)
        n += b->dense[i] > 0;
    ph_exp_phase *ph = &a->phases[a->nphases];
    ph->acc = malloc((n ? n : 1) * sizeof *ph->acc);
    if (!ph->acc)
        return -1;
    ph->name = name;
    ph->z = z;
    ph->nacc = 0;
    for (size_t p = 0; p < a->npages; p++)
        for (size_t t = 0; t < T; t++) {
            double v = b->dense[p * T + t];
            if (!(v > 0))
                continue;
            uint32_t c = v < 1.0 ? 1u : (uint32_t)llround(v);
            ph->acc[ph->nacc++] = (ph_exp_access){(uint32_t)p,
                                                  (uint32_t)t, c};
        }
    if (z)
        a->zphase = a->nphases;
    a->nphases++;
    memset(b->dense, 0, a->npages * T * sizeof *b->dense);
    return 0;
}

/* ---- BT and SP ------------------------------------------------------- */

enum { U = 0, F = 1, RHS = 2 };

/* Thread t's interior planes [lo, hi) of 1 .. GRID-2. */
static void planes_of(int T, int t, long *lo, long *hi)
{
    split(GRID - 2, T, t, lo, hi);
    *lo += 1;
    *hi += 1;
}

/* Thread t's slab: the interior rows of its planes (x, y, add, rhs
 * writes); whole planes when `whole` (u read by the stencil, which reads
 * the boundary rows too). */
static void slab(builder *b, int ar, int t, double sweeps, int whole)
{
    long lo, hi;
    planes_of(b->a->nthreads, t, &lo, &hi);
    for (long k = lo; k < hi; k++) {
        double base = (double)k * PLANE_BYTES;
        if (whole)
            sweep(b, ar, base, base + PLANE_BYTES, t, sweeps);
        else
            sweep(b, ar, base + ROW_BYTES, base + (GRID - 1) * ROW_BYTES, t,
                  sweeps);
    }
}

/* Thread t's interior rows j of every interior plane (z_sweep's split). */
static void pencil(builder *b, int ar, int t, double sweeps)
{
    long lo, hi;
    split(GRID - 2, b->a->nthreads, t, &lo, &hi);
    for (long k = 1; k < GRID - 1; k++)
        sweep(b, ar, (double)k * PLANE_BYTES + (double)(lo + 1) * ROW_BYTES,
              (double)k * PLANE_BYTES + (double)(hi + 1) * ROW_BYTES, t,
              sweeps);
}

/* The `width` planes on either side of thread t's slab (the stencil's
 * reach into the neighbours' planes, boundary planes included). */
static void halo(builder *b, int ar, int t, int width, double sweeps)
{
    long lo, hi;
    planes_of(b->a->nthreads, t, &lo, &hi);
    for (long k = lo - width; k < hi + width; k++)
        if (k >= 0 && k < GRID && !(k >= lo && k < hi))
            sweep(b, ar, (double)k * PLANE_BYTES,
                  (double)(k + 1) * PLANE_BYTES, t, sweeps);
}

/* The arrays of BT and SP. */
static int arrays_adi(ph_exp_app *a)
{
    if (add_array(a, "u", GRID_BYTES) || add_array(a, "f", GRID_BYTES) ||
        add_array(a, "rhs", GRID_BYTES))
        return -1;
    return 0;
}

/* The five regions of bt.c / sp.c; `width`: the stencil's halo planes. */
static int phases_adi(builder *b, int width)
{
    ph_exp_app *a = b->a;
    const double r = (double)a->repeat;
    int T = a->nthreads;
    for (int t = 0; t < T; t++) { /* compute_rhs: not repeated */
        slab(b, U, t, 1, 1);
        halo(b, U, t, width, 1);
        slab(b, F, t, 1, 0);
        slab(b, RHS, t, 1, 0);
    }
    if (finish_phase(b, "rhs", 0))
        return -1;
    for (int t = 0; t < T; t++)
        slab(b, RHS, t, 2 * r, 0);
    if (finish_phase(b, "x", 0))
        return -1;
    for (int t = 0; t < T; t++)
        slab(b, RHS, t, 2 * r, 0);
    if (finish_phase(b, "y", 0))
        return -1;
    for (int t = 0; t < T; t++)
        pencil(b, RHS, t, 2 * r);
    if (finish_phase(b, "z", 1))
        return -1;
    for (int t = 0; t < T; t++) {
        slab(b, U, t, r, 0);
        slab(b, RHS, t, r, 0);
    }
    if (finish_phase(b, "add", 0))
        return -1;
    /* first touch: the k split, boundary planes to the first and last */
    for (int ar = 0; ar < a->narrays; ar++)
        for (size_t p = 0; p < a->arrays[ar].npages; p++) {
            long plane = (long)(p * 4096 / PLANE_BYTES);
            int owner = plane <= 0 ? 0 : T - 1;
            for (int t = 0; t < T; t++) {
                long lo, hi;
                planes_of(T, t, &lo, &hi);
                if (plane >= lo && plane < hi)
                    owner = t;
            }
            a->first_toucher[a->arrays[ar].first + p] = (uint32_t)owner;
        }
    return 0;
}

/* ---- CG -------------------------------------------------------------- */

enum { ROWPTR = 0, COL, VAL, X, Z, R, P, Q };

/* Thread t's rows, as bytes of an array with `per` entries of `elem`
 * bytes a row. */
static void rows(builder *b, int ar, int t, double per, double elem,
                 double sweeps)
{
    long lo, hi;
    split(CG_NA, b->a->nthreads, t, &lo, &hi);
    sweep(b, ar, (double)lo * per * elem, (double)hi * per * elem, t,
          sweeps);
}

static void whole(builder *b, int ar, int t, double sweeps)
{
    sweep(b, ar, 0, (double)CG_NA * 8, t, sweeps);
}

/* The arrays of CG, in the order of the enum above. */
static int arrays_cg(ph_exp_app *a)
{
    const size_t vec = (size_t)CG_NA * 8;
    if (add_array(a, "rowptr", (size_t)(CG_NA + 1) * 8) ||
        add_array(a, "col", (size_t)CG_NZ * 4) ||
        add_array(a, "val", (size_t)CG_NZ * 8) || add_array(a, "x", vec) ||
        add_array(a, "z", vec) || add_array(a, "r", vec) ||
        add_array(a, "p", vec) || add_array(a, "q", vec))
        return -1;
    return 0;
}

static int phases_cg(builder *b)
{
    ph_exp_app *a = b->a;
    const double per = (double)CG_NZ / (double)CG_NA; /* entries a row */
    const double rr = (double)a->repeat;
    int T = a->nthreads;
    for (int t = 0; t < T; t++) {
        rows(b, Z, t, 1, 8, rr);
        rows(b, R, t, 1, 8, rr);
        rows(b, P, t, 1, 8, rr);
        rows(b, X, t, 1, 8, rr);
    }
    if (finish_phase(b, "init", 0))
        return -1;
    for (int t = 0; t < T; t++) {
        rows(b, ROWPTR, t, 1, 8, rr);
        rows(b, COL, t, per, 4, rr);
        rows(b, VAL, t, per, 8, rr);
        rows(b, Q, t, 1, 8, rr);
        whole(b, P, t, rr);
    }
    if (finish_phase(b, "matvec", 0))
        return -1;
    for (int t = 0; t < T; t++) {
        rows(b, Z, t, 1, 8, rr);
        rows(b, P, t, 1, 8, 2 * rr);
        rows(b, R, t, 1, 8, 2 * rr);
        rows(b, Q, t, 1, 8, rr);
    }
    if (finish_phase(b, "vecops", 0))
        return -1;
    /* the other 24 steps repeat the first one's two phases */
    for (int k = 1; k < CG_STEPS; k++)
        for (int j = 1; j <= 2; j++) {
            a->phases[a->nphases] = a->phases[j];
            a->phases[a->nphases].alias = 1;
            a->nphases++;
        }
    for (int t = 0; t < T; t++) {
        rows(b, ROWPTR, t, 1, 8, rr);
        rows(b, COL, t, per, 4, rr);
        rows(b, VAL, t, per, 8, rr);
        rows(b, X, t, 1, 8, rr);
        whole(b, Z, t, rr);
    }
    if (finish_phase(b, "resid", 0))
        return -1;
    for (int t = 0; t < T; t++) {
        rows(b, X, t, 1, 8, rr);
        rows(b, Z, t, 1, 8, rr);
    }
    if (finish_phase(b, "xnew", 0))
        return -1;
    /* first touch: the row split */
    for (int ar = 0; ar < a->narrays; ar++) {
        double e = ar == COL ? per * 4 : ar == VAL ? per * 8 : 8;
        for (size_t p = 0; p < a->arrays[ar].npages; p++) {
            long row = (long)((double)p * PAGE / e);
            int owner = T - 1;
            for (int t = 0; t < T; t++) {
                long lo, hi;
                split(CG_NA, T, t, &lo, &hi);
                if (row >= lo && row < hi)
                    owner = t;
            }
            a->first_toucher[a->arrays[ar].first + p] = (uint32_t)owner;
        }
    }
    return 0;
}

/* ---- e6: private blocks and finely shared ------------------------------ */

#define E6_PAGES (PH_EXP_E6_THREAD_BYTES / 4096)
#define UNIT_PAGES 512

/* Owner of every page (first_toucher). */
static void owners_e6(ph_exp_app *a)
{
    size_t T = (size_t)a->nthreads, np = a->npages, chunk = 0;
    uint32_t *own = a->first_toucher;
    if (a->kind == PH_EXP_PRIVATE) {
        for (size_t p = 0; p < np; p++)
            own[p] = (uint32_t)(p / E6_PAGES);
        return;
    }
    for (size_t u = 0; u < np / UNIT_PAGES; u++) {
        size_t g = (size_t)1 << (u % 5); /* pages a chunk: 4 .. 64 KiB */
        for (size_t q = 0; q < UNIT_PAGES; q++)
            own[u * UNIT_PAGES + q] = (uint32_t)((chunk + q / g) % T);
        chunk += UNIT_PAGES / g;
    }
}

/* Phase `name`: one entry per page (its owner's), with switch counts. */
static ph_exp_phase *phase_e6(ph_exp_app *a, const char *name)
{
    ph_exp_phase *ph = &a->phases[a->nphases];
    ph->acc = malloc(a->npages * sizeof *ph->acc);
    ph->sw = malloc(a->npages * sizeof *ph->sw);
    if (!ph->acc || !ph->sw) {
        free(ph->acc);
        free(ph->sw);
        ph->acc = NULL;
        ph->sw = NULL;
        return NULL;
    }
    ph->name = name;
    ph->nacc = a->npages;
    a->nphases++;
    return ph;
}

static int phases_e6(ph_exp_app *a)
{
    size_t T = (size_t)a->nthreads, np = a->npages;
    const uint32_t *own = a->first_toucher;
    uint32_t lines = (uint32_t)(4096 / a->line_bytes);
    double *w4 = calloc(T, sizeof *w4);  /* pages a thread owns */
    double *nu = calloc(T, sizeof *nu);  /* of them in the current unit */
    if (!w4 || !nu) {
        free(w4);
        free(nu);
        return -1;
    }
    owners_e6(a);
    for (size_t p = 0; p < np; p++)
        w4[own[p]] += 1;
    ph_exp_phase *up = phase_e6(a, "update");
    ph_exp_phase *ga = up ? phase_e6(a, "gather") : NULL;
    if (!up || !ga) {
        free(w4);
        free(nu);
        return -1;
    }
    for (size_t u = 0; u < np / UNIT_PAGES; u++) {
        size_t p0 = u * UNIT_PAGES;
        memset(nu, 0, T * sizeof *nu);
        for (size_t p = p0; p < p0 + UNIT_PAGES; p++)
            nu[own[p]] += 1;
        for (size_t p = p0; p < p0 + UNIT_PAGES; p++) {
            uint32_t t = own[p];
            int first = 1; /* t's first page of this unit */
            for (size_t q = p0; q < p && first; q++)
                first = own[q] != t;
            up->acc[p] = (ph_exp_access){(uint32_t)p, t, lines};
            up->sw[p] = (ph_exp_switches){1.0f, first ? 1.0f : 0.0f};
            ga->acc[p] = (ph_exp_access){(uint32_t)p, t, lines};
            ga->sw[p] = (ph_exp_switches){
                (float)(lines * (1.0 - 1.0 / w4[t])),
                (float)(lines * (1.0 - nu[t] / w4[t]))};
        }
    }
    free(w4);
    free(nu);
    return 0;
}

/* ---- life ------------------------------------------------------------ */

int ph_exp_app_build(ph_exp_app *a, int kind, int nthreads,
                     unsigned line_bytes, unsigned repeat)
{
    memset(a, 0, sizeof *a);
    a->zphase = -1;
    if (kind < 0 || kind > PH_EXP_LAST_APP || nthreads < 1 ||
        nthreads > 4096 ||
        line_bytes < 8 || line_bytes > 4096 || repeat < 1)
        return ph_fail(EINVAL, "sim: bad program (kind %d, %d threads, "
                       "%u-byte lines, repeat %u)", kind, nthreads,
                       line_bytes, repeat);
    a->kind = kind;
    a->name = app_names[kind];
    a->nthreads = nthreads;
    a->line_bytes = line_bytes;
    a->repeat = repeat;
    a->iterations = ph_exp_app_iterations(kind);
    builder b = {a, NULL, PAGE / line_bytes};
    if (kind >= PH_EXP_PRIVATE) {
        int rc = add_array(a, "data", (size_t)nthreads *
                                          PH_EXP_E6_THREAD_BYTES);
        a->first_toucher = calloc(a->npages, sizeof *a->first_toucher);
        if (rc != 0 || !a->first_toucher || phases_e6(a) != 0) {
            ph_exp_app_free(a);
            return ph_fail(ENOMEM, "sim: out of memory building %s",
                           app_names[kind]);
        }
        return 0;
    }
    int rc = kind == PH_EXP_CG ? arrays_cg(a) : arrays_adi(a);
    if (rc == 0) {
        b.dense = calloc(a->npages * (size_t)nthreads, sizeof *b.dense);
        a->first_toucher = calloc(a->npages, sizeof *a->first_toucher);
        if (!b.dense || !a->first_toucher)
            rc = -1;
    }
    if (rc == 0) {
        if (kind == PH_EXP_CG)
            rc = phases_cg(&b);
        else
            rc = phases_adi(&b, kind == PH_EXP_BT ? 1 : 2);
    }
    free(b.dense);
    if (rc != 0) {
        ph_exp_app_free(a);
        return ph_fail(ENOMEM, "sim: out of memory building %s",
                       app_names[kind]);
    }
    return 0;
}

void ph_exp_app_free(ph_exp_app *a)
{
    for (int i = 0; i < a->nphases; i++)
        if (!a->phases[i].alias) {
            free(a->phases[i].acc);
            free(a->phases[i].sw);
        }
    free(a->first_toucher);
    memset(a, 0, sizeof *a);
}
