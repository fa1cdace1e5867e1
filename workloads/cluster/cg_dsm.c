/*
 * cg_dsm.c -- workloads/nas/cg.c (inverse power iteration with conjugate
 * gradient solves on a random sparse SPD matrix) on cluster mode's
 * distributed shared memory: the irregular workload, whose matrix-vector
 * product reads the whole shared vector p (its columns are random) on
 * every rank.
 *
 *   cg_dsm CLASS [NITER [NA [PLACEMENT]]] [--no-check]
 *
 * CLASS, NITER, NA as cg's (S 1400, W 7000, A 14000 rows); PLACEMENT
 * (default block) the homes of the matrix and of the vectors.
 *
 * Data.  Every rank builds the whole matrix in private memory, serially,
 * with cg's generator (the same draws; each row sorted by (column, value)
 * so the rows do not depend on the order they were filled in, hence the
 * same matrix as cg's parallel build), then each thread copies its own
 * rows into the shared CSR arrays (rowptr, col, val: ph_cluster_alloc with
 * PLACEMENT), which are then declared read-only (ph_cluster_readonly: the
 * matrix is input; its copies are fetched once and stay valid).  The
 * vectors x, z, r, p, q are shared, written in parallel by the threads
 * owning their rows (cg.c's serial initialisation would make every page
 * rank 0's first); p and z are read whole by every thread.  The partial
 * sums of the dot products go through two shared buffers of one slot per
 * thread of the global team.
 *
 * Parallel structure: cg.c's loops, every thread of the global team
 * (ranks x OMP_NUM_THREADS) taking its rows from ph_cluster_static_range
 * (schedule(static) over all threads, libgomp's split), a
 * ph_cluster_barrier where cg.c has an implicit or explicit barrier.  The
 * dot products add the per-thread partial sums in global thread order, so
 * R ranks x T threads compute exactly what `cg` computes with R*T OpenMP
 * threads (libgomp): the printed iteration lines are the same.
 *
 * Verification (rank 0): cg's checks (true residual <= 1e-10, the
 * eigenvalue estimate inside the Gershgorin interval and non-increasing),
 * and, unless --no-check, the single-process result: the same iterations
 * run sequentially on private arrays with the same thread split (each
 * loop's partial sums per virtual thread, added in the same order); every
 * residual, eigenvalue estimate and value of x must be equal, bit for bit.
 * WL_FAULT=1 perturbs q in the last solve, as cg does.
 */
#include "common.h"
#include "cg_matrix.h"
#include "nas_common.h"

#include <omp.h>
#include <pagehome.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "cg_dsm"
#define CGIT 25 /* CG iterations per outer iteration */
#define USAGE PROG " CLASS [NITER [NA [PLACEMENT]]] [--no-check]  (CLASS = S, W or A; " \
                   "1 <= NITER <= 10000; 100 <= NA <= 2000000)"

typedef struct {
    double *x, *z, *r, *p, *q;
} cg_vecs;

/* cg.c's matrix, built serially in private memory. */
static void build(csr_t *A, long n, int nonzer, double shift, double *glo, double *ghi)
{
    long *cnt = nas_malloc((size_t)n * sizeof *cnt);
    long *cursor = nas_malloc((size_t)n * sizeof *cursor);
    for (long i = 0; i < n; i++)
        cnt[i] = 1;
    for (long i = 0; i < n; i++)
        for (int d = 0; d < nonzer; d++) {
            long j = draw_col(i, d, nonzer, n);
            if (j != i) {
                cnt[i]++;
                cnt[j]++;
            }
        }
    A->n = n;
    A->rowptr = nas_malloc((size_t)(n + 1) * sizeof *A->rowptr);
    A->rowptr[0] = 0;
    for (long i = 0; i < n; i++)
        A->rowptr[i + 1] = A->rowptr[i] + cnt[i];
    A->col = nas_malloc((size_t)A->rowptr[n] * sizeof *A->col);
    A->val = nas_malloc((size_t)A->rowptr[n] * sizeof *A->val);
    for (long i = 0; i < n; i++) {
        A->col[A->rowptr[i]] = (int)i;
        A->val[A->rowptr[i]] = 0.0;
        cursor[i] = A->rowptr[i] + 1;
    }
    for (long i = 0; i < n; i++)
        for (int d = 0; d < nonzer; d++) {
            long j = draw_col(i, d, nonzer, n);
            if (j == i)
                continue;
            double v = draw_val(i, d, nonzer);
            long qi = cursor[i]++, qj = cursor[j]++;
            A->col[qi] = (int)j;
            A->val[qi] = v;
            A->col[qj] = (int)i;
            A->val[qj] = v;
        }
    *glo = 1e300;
    *ghi = -1e300;
    for (long i = 0; i < n; i++) {
        long b = A->rowptr[i], e = A->rowptr[i + 1], diag = b;
        sort_row(A->col + b, A->val + b, e - b);
        double r = 0.0;
        for (long q = b; q < e; q++) {
            if (A->col[q] == (int)i)
                diag = q;
            else
                r += fabs(A->val[q]);
        }
        A->val[diag] = r + shift;
        double dl = shift, dh = 2.0 * r + shift;
        *glo = dl < *glo ? dl : *glo;
        *ghi = dh > *ghi ? dh : *ghi;
    }
    free(cnt);
    free(cursor);
}

static double row_dot(const csr_t *A, long i, const double *p)
{
    double s = 0.0;
    for (long q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
        s += A->val[q] * p[A->col[q]];
    return s;
}

/* ---- the loops, over rows [b, e): cg.c's, returning partial sums ---- */

static double loop_start(const cg_vecs *w, long b, long e)
{
    double s = 0.0;
    for (long i = b; i < e; i++) {
        w->z[i] = 0.0;
        w->r[i] = w->p[i] = w->x[i];
        s += w->x[i] * w->x[i];
    }
    return s;
}

static double loop_q(const csr_t *A, const cg_vecs *w, long b, long e, int fault)
{
    double s = 0.0;
    for (long i = b; i < e; i++) { /* q = A p: p read whole */
        w->q[i] = row_dot(A, i, w->p);
        if (fault && i == A->n / 2)
            w->q[i] *= 1.001;
        s += w->p[i] * w->q[i];
    }
    return s;
}

static double loop_zr(const cg_vecs *w, long b, long e, double alpha)
{
    double s = 0.0;
    for (long i = b; i < e; i++) {
        w->z[i] += alpha * w->p[i];
        w->r[i] -= alpha * w->q[i];
        s += w->r[i] * w->r[i];
    }
    return s;
}

static void loop_p(const cg_vecs *w, long b, long e, double beta)
{
    for (long i = b; i < e; i++)
        w->p[i] = w->r[i] + beta * w->p[i];
}

static void loop_resid(const csr_t *A, const cg_vecs *w, long b, long e, double *m)
{
    m[0] = m[1] = m[2] = m[3] = 0.0;
    for (long i = b; i < e; i++) { /* z read whole */
        double d = w->x[i] - row_dot(A, i, w->z);
        m[0] += d * d;
        m[1] += w->x[i] * w->z[i];
        m[2] += w->z[i] * w->z[i];
        m[3] += w->x[i] * w->x[i];
    }
}

static void loop_x(const cg_vecs *w, long b, long e, double zinv)
{
    for (long i = b; i < e; i++)
        w->x[i] = w->z[i] * zinv;
}

/* ---- on the DSM: every thread of every rank ---- */

typedef struct cg_job {
    const csr_t *A;
    const cg_vecs *w;
    double *bufa, *bufb;   /* shared: one NAS_PAD slot per global thread */
    long niter;
    int fault;
    double *resid, *lambda; /* private, written by each rank's thread 0 */
} cg_job;

/* Deterministic sum over the global team: cg.c's team_sum. */
static void team_sum(const double *mine, int nv, double *buf, double *out)
{
    int t = ph_cluster_thread_num(), nt = ph_cluster_num_threads();
    for (int v = 0; v < nv; v++)
        buf[t * NAS_PAD + v] = mine[v];
    ph_cluster_barrier();
    for (int v = 0; v < nv; v++)
        out[v] = nas_sum_partials(buf + v, nt);
}

static void cg_thread(const cg_job *j, long b, long e)
{
    const csr_t *A = j->A;
    const cg_vecs *w = j->w;
    for (long it = 0; it < j->niter; it++) {
        double mine[4], sum[4];
        mine[0] = loop_start(w, b, e);
        ph_cluster_barrier();
        team_sum(mine, 1, j->bufa, sum);
        double rho = sum[0];
        for (int cgit = 0; cgit < CGIT; cgit++) {
            mine[0] = loop_q(A, w, b, e, j->fault && it == j->niter - 1 && cgit == 0);
            ph_cluster_barrier();
            team_sum(mine, 1, j->bufb, sum);
            double alpha = rho / sum[0];
            mine[0] = loop_zr(w, b, e, alpha);
            ph_cluster_barrier();
            team_sum(mine, 1, j->bufa, sum);
            double beta = sum[0] / rho;
            rho = sum[0];
            loop_p(w, b, e, beta);
            ph_cluster_barrier();
        }
        loop_resid(A, w, b, e, mine);
        ph_cluster_barrier();
        team_sum(mine, 4, j->bufb, sum);
        loop_x(w, b, e, 1.0 / sqrt(sum[2]));
        ph_cluster_barrier();
        if (omp_get_thread_num() == 0) {
            j->resid[it] = sqrt(sum[0] / sum[3]);
            j->lambda[it] = 1.0 / sum[1] * sum[3];
        }
    }
}

/* ---- the single-process result: nt virtual threads, one after another ---- */

static void split(long n, long nt, long t, long *b, long *e)
{
    long q = n / nt, r = n % nt;
    *b = t < r ? t * (q + 1) : t * q + r;
    *e = *b + (t < r ? q + 1 : q);
}

static void reference(const csr_t *A, long niter, int nt, double *resid, double *lambda,
                      double **x_out)
{
    long n = A->n;
    cg_vecs w = {nas_malloc((size_t)n * sizeof(double)), nas_malloc((size_t)n * sizeof(double)),
                 nas_malloc((size_t)n * sizeof(double)), nas_malloc((size_t)n * sizeof(double)),
                 nas_malloc((size_t)n * sizeof(double))};
    double *part = nas_malloc((size_t)nt * NAS_PAD * sizeof *part);
    for (long i = 0; i < n; i++) {
        w.x[i] = 1.0;
        w.z[i] = w.r[i] = w.p[i] = w.q[i] = 0.0;
    }
    long b, e;
#define EACH(stmt) \
    for (int t = 0; t < nt; t++) { \
        split(n, nt, t, &b, &e); \
        stmt; \
    }
    for (long it = 0; it < niter; it++) {
        EACH(part[t * NAS_PAD] = loop_start(&w, b, e));
        double rho = nas_sum_partials(part, nt);
        for (int cgit = 0; cgit < CGIT; cgit++) {
            EACH(part[t * NAS_PAD] = loop_q(A, &w, b, e, 0));
            double alpha = rho / nas_sum_partials(part, nt);
            EACH(part[t * NAS_PAD] = loop_zr(&w, b, e, alpha));
            double s = nas_sum_partials(part, nt);
            double beta = s / rho;
            rho = s;
            EACH(loop_p(&w, b, e, beta));
        }
        double sum[4];
        EACH(loop_resid(A, &w, b, e, part + t * NAS_PAD));
        for (int v = 0; v < 4; v++)
            sum[v] = nas_sum_partials(part + v, nt);
        EACH(loop_x(&w, b, e, 1.0 / sqrt(sum[2])));
        resid[it] = sqrt(sum[0] / sum[3]);
        lambda[it] = 1.0 / sum[1] * sum[3];
    }
#undef EACH
    free(w.z);
    free(w.r);
    free(w.p);
    free(w.q);
    free(part);
    *x_out = w.x;
}

static void *shared(size_t bytes, const ph_placement_t *pl)
{
    void *a = ph_cluster_alloc(bytes, pl);
    if (!a)
        wl_die(PROG, ph_last_error());
    return a;
}

int main(int argc, char **argv)
{
    const char *place = "block";
    int check = 1, cls = -1, pos = 0;
    long niter = 0, n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-check"))
            check = 0;
        else if (pos == 0 && (cls = nas_parse_class(argv[i])) >= 0)
            pos = 1;
        else if (pos == 1 && nas_parse_long(argv[i], 1, 10000, &niter) == 0)
            pos = 2;
        else if (pos == 2 && nas_parse_long(argv[i], 100, 2000000, &n) == 0)
            pos = 3;
        else if (pos == 3 && argv[i][0] != '-') {
            place = argv[i];
            pos = 4;
        } else
            wl_usage(USAGE);
    }
    if (pos < 1)
        wl_usage(USAGE);
    if (pos < 2)
        niter = class_niter[cls];
    if (pos < 3)
        n = class_na[cls];
    int nonzer = class_nonzer[cls];
    double shift = class_shift[cls];

    if (ph_cluster_init(&argc, &argv) < 0)
        wl_die(PROG, ph_last_error());
    int me = ph_cluster_rank(), ranks = ph_cluster_nranks();
    int threads = omp_get_max_threads(), nt = ph_cluster_num_threads();
    ph_placement_t pl;
    if (ph_placement_parse(&pl, place) < 0)
        wl_die(PROG, ph_last_error());

    csr_t P; /* private, the whole matrix */
    double glo, ghi;
    build(&P, n, nonzer, shift, &glo, &ghi);
    long nnz = P.rowptr[n];
    csr_t A = {n, shared((size_t)(n + 1) * sizeof(long), &pl),
               shared((size_t)nnz * sizeof(int), &pl), shared((size_t)nnz * sizeof(double), &pl)};
    cg_vecs w;
    double **vec[5] = {&w.x, &w.z, &w.r, &w.p, &w.q};
    for (int k = 0; k < 5; k++)
        *vec[k] = shared((size_t)n * sizeof(double), &pl);
    double *bufa = shared((size_t)nt * NAS_PAD * sizeof(double), &pl);
    double *bufb = shared((size_t)nt * NAS_PAD * sizeof(double), &pl);
    double *resid = nas_malloc((size_t)niter * sizeof *resid);
    double *lambda = nas_malloc((size_t)niter * sizeof *lambda);
    if (me == 0) {
        printf("%s: class %c, NA=%ld, %ld nonzeros (NONZER=%d, SHIFT=%g), %ld iterations, "
               "ranks=%d threads=%d (%d in all), placement %s\n", PROG, nas_class_letter(cls),
               n, nnz, nonzer, shift, niter, ranks, threads, nt, place);
        fflush(stdout);
    }
    int fault = nas_fault(PROG, "q(NA/2) *= 1.001 in the last solve's first CG iteration");
    cg_job job = {&A, &w, bufa, bufb, niter, fault, resid, lambda};
    double seconds = 0;
#pragma omp parallel
    {
        long b, e;
        ph_cluster_static_range(n, 0, &b, &e);
        /* each thread its rows of the matrix and of the vectors */
        for (long i = b; i < e; i++) {
            A.rowptr[i] = P.rowptr[i];
            memcpy(A.col + P.rowptr[i], P.col + P.rowptr[i],
                   (size_t)(P.rowptr[i + 1] - P.rowptr[i]) * sizeof *A.col);
            memcpy(A.val + P.rowptr[i], P.val + P.rowptr[i],
                   (size_t)(P.rowptr[i + 1] - P.rowptr[i]) * sizeof *A.val);
            w.x[i] = 1.0;
            w.z[i] = w.r[i] = w.p[i] = w.q[i] = 0.0;
        }
        if (ph_cluster_thread_num() == nt - 1)
            A.rowptr[n] = nnz;
        ph_cluster_barrier();
    }
    /* the matrix is input: read-only from here on */
    if (ph_cluster_readonly(A.rowptr, (size_t)(n + 1) * sizeof(long)) < 0 ||
        ph_cluster_readonly(A.col, (size_t)nnz * sizeof(int)) < 0 ||
        ph_cluster_readonly(A.val, (size_t)nnz * sizeof(double)) < 0)
        wl_die(PROG, ph_last_error());
#pragma omp parallel
    {
        long b, e;
        ph_cluster_static_range(n, 0, &b, &e);
        double t0 = wl_wtime_s();
        cg_thread(&job, b, e);
#pragma omp master
        seconds = wl_wtime_s() - t0;
    }

    int status = 0;
    if (me == 0) {
        double worst = 0.0;
        int mono = 1, inside = 1;
        for (long it = 0; it < niter; it++) {
            worst = resid[it] > worst ? resid[it] : worst;
            if (!(lambda[it] >= glo && lambda[it] <= ghi))
                inside = 0;
            if (it > 0 && !(lambda[it] <= lambda[it - 1] * (1.0 + 1e-9)))
                mono = 0;
            if (it < 3 || it == niter - 1)
                printf("%s: iteration %3ld: ||x - A z|| / ||x|| = %.3e, lambda_min estimate "
                       "%.12f\n", PROG, it + 1, resid[it], lambda[it]);
        }
        int ok = nas_check_le(PROG, "max ||x - A z|| / ||x||", worst, 1e-10);
        printf("%s: lambda_min estimate %.12f in Gershgorin interval [%.6f, %.6f]: %s\n", PROG,
               lambda[niter - 1], glo, ghi, inside ? "yes" : "NO");
        printf("%s: lambda_min estimate non-increasing: %s\n", PROG, mono ? "yes" : "NO");
        printf("%s: ranks=%d threads=%d placement=%s lambda=%.17g time_s=%.6f\n", PROG, ranks,
               threads, place, lambda[niter - 1], seconds);
        ok = ok && inside && mono;
        if (check) {
            double *rr = nas_malloc((size_t)niter * sizeof *rr);
            double *rl = nas_malloc((size_t)niter * sizeof *rl);
            double *rx;
            reference(&P, niter, nt, rr, rl, &rx);
            size_t bad = 0;
            for (long it = 0; it < niter; it++)
                bad += (memcmp(&rr[it], &resid[it], sizeof rr[it]) != 0) +
                       (memcmp(&rl[it], &lambda[it], sizeof rl[it]) != 0);
            for (long i = 0; i < n; i++)
                bad += memcmp(&rx[i], &w.x[i], sizeof rx[i]) != 0;
            printf("%s: single-process result (%d threads, sequentially): %zu of %ld residuals, "
                   "estimates and values of x differ, bit for bit: %s\n", PROG, nt, bad,
                   2 * niter + n, bad ? "NO" : "yes");
            ok = ok && bad == 0;
            free(rr);
            free(rl);
            free(rx);
        }
        status = nas_finish(PROG, seconds, ok);
    }
    /* everybody learns the verdict */
    ph_cluster_barrier();
    if (me == 0)
        bufa[0] = status;
    ph_cluster_barrier();
    status = (int)bufa[0];
    ph_cluster_barrier();
    free(P.rowptr);
    free(P.col);
    free(P.val);
    free(resid);
    free(lambda);
    ph_cluster_free(bufb);
    ph_cluster_free(bufa);
    for (int k = 4; k >= 0; k--)
        ph_cluster_free(*vec[k]);
    ph_cluster_free(A.val);
    ph_cluster_free(A.col);
    ph_cluster_free(A.rowptr);
    ph_cluster_finalize();
    return status;
}
