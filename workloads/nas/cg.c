/*
 * cg.c -- a CG-like kernel: inverse power iteration with conjugate
 * gradient solves on a random sparse symmetric positive definite matrix,
 * modelled on the structure of the NAS Parallel Benchmarks' CG (written
 * from the NPB reports' description, no NPB code).
 *
 * WHAT IT MODELS
 *   A is NA x NA in CSR form.  Row i draws NONZER random column indices
 *   j (fixed seed) with random values v in [-1, 1); each draw puts v at
 *   (i, j) and at (j, i), so A is symmetric with an unstructured random
 *   pattern (a pair drawn twice just appears twice in the row: CSR allows
 *   repeated columns).  The diagonal is the sum of the row's |v| plus
 *   SHIFT: strictly diagonally dominant, hence symmetric positive definite
 *   by construction.  Each of NITER outer iterations solves A z = x with
 *   25 unpreconditioned CG iterations, estimates the smallest eigenvalue
 *   as 1 / (x . z) and sets x = z / ||z||, as NPB CG does.
 *
 * PARALLEL STRUCTURE
 *   One parallel region per outer iteration, with orphaned
 *   `omp for schedule(static)` loops over rows: the sparse matrix-vector
 *   product q = A p, in which every thread reads the whole shared vector p
 *   (its columns are random), and the vector updates.  Dot products are
 *   deterministic (per-thread partial sums added in thread order), so the
 *   output is identical from run to run with the same thread count.
 *
 * DATA
 *   The matrix is built IN PARALLEL: row counts with atomic increments,
 *   a parallel prefix sum, the CSR arrays first touched by the thread that
 *   owns their rows under schedule(static), entries filled through atomic
 *   cursors, each row sorted by its owner (WL_SERIAL_BUILD=1: the same
 *   matrix, built by the master thread alone).  The vectors (x, z, r, p, q)
 *   are allocated and initialised SERIALLY by the master thread: the first
 *   touch trap for the data every thread reads or writes per row.
 *
 * VERIFICATION
 *   For every outer iteration: the true residual ||x - A z|| / ||x||,
 *   recomputed with the matrix (not CG's recurrence), must be <= 1e-10;
 *   the eigenvalue estimate must lie in A's Gershgorin interval; and,
 *   since inverse power iteration on an SPD matrix makes x . A^-1 x
 *   non-decreasing, the estimate must not increase (relative slack 1e-9).
 *
 *   cg CLASS [NITER [NA]]   CLASS S (NA=1400), W (NA=7000), A (NA=14000)
 */
#include "cg_matrix.h"
#include "locality_probe.h"
#include "nas_common.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define CGIT 25 /* CG iterations per outer iteration */

static void build(csr_t *A, long n, int nonzer, double shift, double *glo, double *ghi)
{
    int nthreads = omp_get_max_threads(), team = 1;
    int serial = nas_serial_build("cg", "the matrix is built by the master thread alone");
    long *cnt = nas_malloc((size_t)n * sizeof *cnt);
    long *cursor = nas_malloc((size_t)n * sizeof *cursor);
    long *tsum = nas_malloc((size_t)(nthreads + 1) * NAS_PAD * sizeof *tsum);
    double *gpart = nas_malloc((size_t)nthreads * NAS_PAD * 2 * sizeof *gpart);
    A->n = n;
    A->rowptr = nas_malloc((size_t)(n + 1) * sizeof *A->rowptr);
#pragma omp parallel if (!serial)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++)
            cnt[i] = 1; /* the diagonal */
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++)
            for (int d = 0; d < nonzer; d++) {
                long j = draw_col(i, d, nonzer, n);
                if (j == i)
                    continue;
#pragma omp atomic
                cnt[i]++;
#pragma omp atomic
                cnt[j]++;
            }
        /* parallel prefix sum: each thread its static block */
        long s = 0;
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++)
            s += cnt[i];
        tsum[(t + 1) * NAS_PAD] = s;
#pragma omp barrier
#pragma omp single
        {
            team = nt;
            tsum[0] = 0;
            for (int u = 1; u <= nt; u++)
                tsum[u * NAS_PAD] += tsum[(u - 1) * NAS_PAD];
            A->rowptr[n] = tsum[nt * NAS_PAD];
            A->col = nas_malloc((size_t)A->rowptr[n] * sizeof *A->col);
            A->val = nas_malloc((size_t)A->rowptr[n] * sizeof *A->val);
        }
        long run = tsum[t * NAS_PAD];
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++) {
            A->rowptr[i] = run;
            cursor[i] = run + 1; /* slot 0 of the row: the diagonal */
            run += cnt[i];
        }
        /* first touch of the entries by their rows' owner */
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++) {
            A->col[A->rowptr[i]] = (int)i;
            A->val[A->rowptr[i]] = 0.0;
            for (long q = A->rowptr[i] + 1; q < A->rowptr[i + 1]; q++) {
                A->col[q] = -1;
                A->val[q] = 0.0;
            }
        }
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++)
            for (int d = 0; d < nonzer; d++) {
                long j = draw_col(i, d, nonzer, n), qi, qj;
                if (j == i)
                    continue;
                double v = draw_val(i, d, nonzer);
#pragma omp atomic capture
                qi = cursor[i]++;
#pragma omp atomic capture
                qj = cursor[j]++;
                A->col[qi] = (int)j;
                A->val[qi] = v;
                A->col[qj] = (int)i;
                A->val[qj] = v;
            }
        /* sort, set the diagonal, Gershgorin bounds */
        double lo = 1e300, hi = -1e300;
#pragma omp for schedule(static)
        for (long i = 0; i < n; i++) {
            long b = A->rowptr[i], e = A->rowptr[i + 1], diag = b;
            /* sorted first, so that the sum's order (and bits) do not
             * depend on the order the atomic cursors filled the row in */
            sort_row(A->col + b, A->val + b, e - b);
            double r = 0.0;
            for (long q = b; q < e; q++) {
                if (A->col[q] == (int)i)
                    diag = q;
                else
                    r += fabs(A->val[q]);
            }
            A->val[diag] = r + shift;
            double dl = shift, dh = 2.0 * r + shift; /* d - R, d + R */
            lo = dl < lo ? dl : lo;
            hi = dh > hi ? dh : hi;
        }
        gpart[t * NAS_PAD * 2] = lo;
        gpart[t * NAS_PAD * 2 + 1] = hi;
    }
    *glo = 1e300;
    *ghi = -1e300;
    for (int t = 0; t < team; t++) {
        *glo = gpart[t * NAS_PAD * 2] < *glo ? gpart[t * NAS_PAD * 2] : *glo;
        *ghi = gpart[t * NAS_PAD * 2 + 1] > *ghi ? gpart[t * NAS_PAD * 2 + 1] : *ghi;
    }
    free(cnt);
    free(cursor);
    free(tsum);
    free(gpart);
}

/* Deterministic team sum of nv values: every thread gets the same result.
 * buf must not be written again by any thread before every thread has
 * passed a barrier after this call (callers alternate two buffers). */
static void team_sum(const double *mine, int nv, double *buf, double *out)
{
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    for (int v = 0; v < nv; v++)
        buf[t * NAS_PAD + v] = mine[v];
#pragma omp barrier
    for (int v = 0; v < nv; v++)
        out[v] = nas_sum_partials(buf + v, nt);
}

static double row_dot(const csr_t *A, long i, const double *p)
{
    double s = 0.0;
    for (long q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
        s += A->val[q] * p[A->col[q]];
    return s;
}

int main(int argc, char **argv)
{
    const char *usage = "cg CLASS [NITER [NA]]  (CLASS = S, W or A; 1 <= NITER <= 10000; 100 <= NA <= 2000000)";
    if (argc < 2 || argc > 4)
        nas_usage(usage);
    int cls = nas_parse_class(argv[1]);
    if (cls < 0)
        nas_usage(usage);
    long niter = class_niter[cls], n = class_na[cls];
    if ((argc > 2 && nas_parse_long(argv[2], 1, 10000, &niter)) ||
        (argc > 3 && nas_parse_long(argv[3], 100, 2000000, &n)))
        nas_usage(usage);
    int nonzer = class_nonzer[cls];
    double shift = class_shift[cls];

    csr_t A;
    double glo, ghi;
    build(&A, n, nonzer, shift, &glo, &ghi);
    char size[96];
    snprintf(size, sizeof size, "NA=%ld, %ld nonzeros (NONZER=%d, SHIFT=%g)", n, A.rowptr[n], nonzer,
             shift);
    nas_header("cg", cls, size, niter);

    /* Vectors: serial initialisation by the master thread. */
    double *x = nas_malloc((size_t)n * sizeof *x), *z = nas_malloc((size_t)n * sizeof *z);
    double *r = nas_malloc((size_t)n * sizeof *r), *p = nas_malloc((size_t)n * sizeof *p);
    double *q = nas_malloc((size_t)n * sizeof *q);
    for (long i = 0; i < n; i++) {
        x[i] = 1.0;
        z[i] = r[i] = p[i] = q[i] = 0.0;
    }
    int nthreads = omp_get_max_threads();
    double *bufa = nas_malloc((size_t)nthreads * NAS_PAD * sizeof *bufa);
    double *bufb = nas_malloc((size_t)nthreads * NAS_PAD * sizeof *bufb);
    double *resid = nas_malloc((size_t)niter * sizeof *resid);
    double *lambda = nas_malloc((size_t)niter * sizeof *lambda);

    int fault = nas_fault("cg", "q(NA/2) *= 1.001 in the last solve's first CG iteration");
    /* WL_LOCALITY=1: owner-local share after every outer iteration (rows
     * split by schedule(static), the matrix by its rows) */
    wl_probe_rows("x", x, sizeof *x, n, 0, n - 1);
    wl_probe_rows("z", z, sizeof *z, n, 0, n - 1);
    wl_probe_rows("r", r, sizeof *r, n, 0, n - 1);
    wl_probe_rows("p", p, sizeof *p, n, 0, n - 1);
    wl_probe_rows("q", q, sizeof *q, n, 0, n - 1);
    wl_probe_rows("rowptr", A.rowptr, sizeof *A.rowptr, n + 1, 0, n - 1);
    wl_probe_csr("col", A.col, sizeof *A.col, A.rowptr, n);
    wl_probe_csr("val", A.val, sizeof *A.val, A.rowptr, n);
    wl_probe_begin();
    double t0 = nas_wtime();
    for (long it = 0; it < niter; it++) {
        int fault_now = fault && it == niter - 1;
#pragma omp parallel
        {
            double mine[4], sum[4], rho, pq;
            /* z = 0, r = p = x, rho = r . r */
            mine[0] = 0.0;
#pragma omp for schedule(static)
            for (long i = 0; i < n; i++) {
                z[i] = 0.0;
                r[i] = p[i] = x[i];
                mine[0] += x[i] * x[i];
            }
            team_sum(mine, 1, bufa, sum);
            rho = sum[0];
            for (int cgit = 0; cgit < CGIT; cgit++) {
                mine[0] = 0.0;
#pragma omp for schedule(static)
                for (long i = 0; i < n; i++) { /* q = A p: p read whole */
                    q[i] = row_dot(&A, i, p);
                    if (fault_now && cgit == 0 && i == n / 2)
                        q[i] *= 1.001;
                    mine[0] += p[i] * q[i];
                }
                team_sum(mine, 1, bufb, sum);
                pq = sum[0];
                double alpha = rho / pq;
                mine[0] = 0.0;
#pragma omp for schedule(static)
                for (long i = 0; i < n; i++) {
                    z[i] += alpha * p[i];
                    r[i] -= alpha * q[i];
                    mine[0] += r[i] * r[i];
                }
                team_sum(mine, 1, bufa, sum);
                double beta = sum[0] / rho;
                rho = sum[0];
#pragma omp for schedule(static)
                for (long i = 0; i < n; i++)
                    p[i] = r[i] + beta * p[i];
            }
            /* true residual x - A z, x . z, z . z, x . x */
            mine[0] = mine[1] = mine[2] = mine[3] = 0.0;
#pragma omp for schedule(static)
            for (long i = 0; i < n; i++) {
                double d = x[i] - row_dot(&A, i, z);
                mine[0] += d * d;
                mine[1] += x[i] * z[i];
                mine[2] += z[i] * z[i];
                mine[3] += x[i] * x[i];
            }
            team_sum(mine, 4, bufb, sum);
            double zinv = 1.0 / sqrt(sum[2]);
#pragma omp for schedule(static)
            for (long i = 0; i < n; i++)
                x[i] = z[i] * zinv;
#pragma omp master
            {
                resid[it] = sqrt(sum[0] / sum[3]);
                lambda[it] = 1.0 / sum[1] * sum[3];
            }
        }
        wl_probe_tick(it + 1);
    }
    double secs = nas_wtime() - t0;

    double worst = 0.0;
    int mono = 1, inside = 1;
    for (long it = 0; it < niter; it++) {
        worst = resid[it] > worst ? resid[it] : worst;
        if (!(lambda[it] >= glo && lambda[it] <= ghi))
            inside = 0;
        if (it > 0 && !(lambda[it] <= lambda[it - 1] * (1.0 + 1e-9)))
            mono = 0;
        if (it < 3 || it == niter - 1)
            printf("cg: iteration %3ld: ||x - A z|| / ||x|| = %.3e, lambda_min estimate %.12f\n",
                   it + 1, resid[it], lambda[it]);
    }
    int ok = nas_check_le("cg", "max ||x - A z|| / ||x||", worst, 1e-10);
    printf("cg: lambda_min estimate %.12f in Gershgorin interval [%.6f, %.6f]: %s\n",
           lambda[niter - 1], glo, ghi, inside ? "yes" : "NO");
    printf("cg: lambda_min estimate non-increasing: %s\n", mono ? "yes" : "NO");
    ok = ok && inside && mono;

    free(A.rowptr);
    free(A.col);
    free(A.val);
    free(x);
    free(z);
    free(r);
    free(p);
    free(q);
    free(bufa);
    free(bufb);
    free(resid);
    free(lambda);
    return nas_finish("cg", secs, ok);
}
