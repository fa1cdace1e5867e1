/*
 * xsbench.c -- the macroscopic cross-section lookup of Monte Carlo
 * neutron transport, in the manner of the XSBench proxy application: a
 * large read-only table of nuclide grids (for each of XS_NUCLIDES
 * nuclides, XS points of energy and five cross sections: total, elastic,
 * absorption, fission, nu-fission), and many independent lookups.  One
 * lookup draws a particle energy and a material; for each nuclide of the
 * material it binary-searches that nuclide's energy grid, interpolates
 * the five cross sections between the two neighbouring points, and adds
 * them, weighted by the nuclide's concentration, into the material's
 * macroscopic cross sections.  Random reads over a table far larger than
 * any cache: latency bound, and every thread reads every page.
 *
 *   xsbench GRID_MB LOOKUPS [PLACEMENT]
 *
 * GRID_MB sizes the table (MiB); LOOKUPS is the number of lookups.  The
 * table is initialised serially, as the original does; without PLACEMENT
 * it is ordinary heap memory (malloc: first touch puts it on the master's
 * node), with one (any pagehome placement: interleave, block, node:1...)
 * it comes from ph_alloc.
 *
 * Lookup i draws from its own random stream (seed from i), so its result
 * does not depend on which thread runs it.  Each lookup's result (the sum
 * of its five macroscopic cross sections) is rounded to fixed point (2^-24)
 * and summed in 64-bit integers (modulo 2^64): exact, so the total does
 * not depend on the order or the thread count.  The lookups run in blocks
 * (`parallel for schedule(dynamic)`, one block per chunk) of 1000
 * lookups, or more when there would be over XS_MAX_BLOCKS blocks; each
 * block's sum is kept.
 * Verification: for LOOKUPS <= 100000 every block is recomputed
 * sequentially and the totals must be equal; above, XS_CHECK_BLOCKS
 * blocks spread over the run are recomputed and must be equal (a spot
 * check, said so in the verdict).
 */
#include "common.h"

#include <omp.h>
#include <pagehome.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "xsbench"
#define USAGE PROG " GRID_MB LOOKUPS [PLACEMENT]" \
                   "  (1 <= GRID_MB <= 65536, 1 <= LOOKUPS <= 10^12; PLACEMENT as pagehome's, e.g. interleave)"
#define XS_NUCLIDES 68
#define XS_MATERIALS 12
#define XS_MAX_PER_MATERIAL 32
#define XS_BLOCK_MIN 1000
#define XS_MAX_BLOCKS 100000
#define XS_CHECK_BLOCKS 16
#define FULL_CHECK_MAX_LOOKUPS 100000
#define FIXED_POINT_SCALE 16777216.0 /* 2^24 */
#define SEED_TABLE 11
#define SEED_LOOKUP 29

typedef struct xs_point {
    double energy, total, elastic, absorption, fission, nu_fission;
} xs_point;

typedef struct material {
    int count;
    int nuclide[XS_MAX_PER_MATERIAL];
    double concentration[XS_MAX_PER_MATERIAL];
} material;

typedef struct problem {
    const xs_point *grid; /* XS_NUCLIDES rows of points each */
    size_t points;
    material mat[XS_MATERIALS];
} problem;

/* Material 0 is the fuel (many nuclides, drawn most often). */
static const int material_sizes[XS_MATERIALS] = {32, 4, 6, 4, 24, 16, 16, 12, 12, 8, 6, 6};

/* Serial: energies rise from 0 to 1 by random steps, cross sections in
 * [0, 1). */
static void init_table(xs_point *grid, size_t points)
{
    for (size_t nuc = 0; nuc < XS_NUCLIDES; nuc++) {
        xs_point *g = grid + nuc * points;
        double e = 0.0;
        for (size_t k = 0; k < points; k++) {
            uint64_t base = (nuc * points + k) * 6;
            e += 0.5 + wl_unit(wl_random(SEED_TABLE, base));
            g[k].energy = e;
            g[k].total = wl_unit(wl_random(SEED_TABLE, base + 1));
            g[k].elastic = wl_unit(wl_random(SEED_TABLE, base + 2));
            g[k].absorption = wl_unit(wl_random(SEED_TABLE, base + 3));
            g[k].fission = wl_unit(wl_random(SEED_TABLE, base + 4));
            g[k].nu_fission = wl_unit(wl_random(SEED_TABLE, base + 5));
        }
        double last = g[points - 1].energy, first = g[0].energy;
        for (size_t k = 0; k < points; k++)
            g[k].energy = (g[k].energy - first) / (last - first);
    }
}

static void init_materials(problem *pb)
{
    for (int mt = 0; mt < XS_MATERIALS; mt++) {
        material *ma = &pb->mat[mt];
        ma->count = material_sizes[mt];
        for (int k = 0; k < ma->count; k++) {
            ma->nuclide[k] = (mt * 7 + k * 5) % XS_NUCLIDES;
            ma->concentration[k] = wl_unit(wl_random(SEED_TABLE + 1, (uint64_t)(mt * 64 + k)));
        }
    }
}

/* Index lo with energy[lo] <= e < energy[lo + 1] (clamped to the grid). */
static size_t search(const xs_point *g, size_t points, double e)
{
    size_t lo = 0, hi = points - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].energy > e)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

/* Lookup i: its macroscopic cross sections, as a fixed-point integer. */
static uint64_t lookup(const problem *pb, uint64_t i)
{
    double e = wl_unit(wl_random(SEED_LOOKUP, 2 * i));
    uint64_t r = wl_random(SEED_LOOKUP, 2 * i + 1);
    /* fuel 30% of the time, otherwise any of the others */
    int mt = (r % 10) < 3 ? 0 : 1 + (int)((r >> 8) % (XS_MATERIALS - 1));
    const material *ma = &pb->mat[mt];
    double macro[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k < ma->count; k++) {
        const xs_point *g = pb->grid + (size_t)ma->nuclide[k] * pb->points;
        size_t lo = search(g, pb->points, e);
        const xs_point *a = &g[lo], *b = &g[lo + 1];
        double f = (b->energy - e) / (b->energy - a->energy);
        double c = ma->concentration[k];
        macro[0] += c * (b->total - f * (b->total - a->total));
        macro[1] += c * (b->elastic - f * (b->elastic - a->elastic));
        macro[2] += c * (b->absorption - f * (b->absorption - a->absorption));
        macro[3] += c * (b->fission - f * (b->fission - a->fission));
        macro[4] += c * (b->nu_fission - f * (b->nu_fission - a->nu_fission));
    }
    double s = macro[0] + macro[1] + macro[2] + macro[3] + macro[4];
    return (uint64_t)(int64_t)(s * FIXED_POINT_SCALE + 0.5);
}

/* Lookups [b * block, (b + 1) * block) of [0, lookups). */
static uint64_t block_sum(const problem *pb, uint64_t b, uint64_t block,
                          uint64_t lookups)
{
    uint64_t end = (b + 1) * block < lookups ? (b + 1) * block : lookups;
    uint64_t s = 0;
    for (uint64_t i = b * block; i < end; i++)
        s += lookup(pb, i);
    return s;
}

int main(int argc, char **argv)
{
    long grid_mb, lookups_l;
    if (argc < 3 || argc > 4 || wl_parse_long(argv[1], 1, 65536, &grid_mb) != 0 ||
        wl_parse_long(argv[2], 1, 1000000000000L, &lookups_l) != 0)
        wl_usage(USAGE);
    ph_placement_t pl;
    if (argc == 4 && ph_placement_parse(&pl, argv[3]) != 0)
        wl_usage(USAGE);
    uint64_t lookups = (uint64_t)lookups_l;

    problem pb;
    pb.points = (size_t)grid_mb * 1048576u / (XS_NUCLIDES * sizeof(xs_point));
    size_t bytes = XS_NUCLIDES * pb.points * sizeof(xs_point);
    xs_point *grid = argc == 4 ? ph_alloc(bytes, &pl) : malloc(bytes);
    if (!grid)
        wl_die(PROG, argc == 4 ? ph_last_error() : "out of memory for the table");
    double t0 = wl_wtime_s();
    init_table(grid, pb.points);
    init_materials(&pb);
    pb.grid = grid;
    double init_s = wl_wtime_s() - t0;

    uint64_t block = (lookups + XS_MAX_BLOCKS - 1) / XS_MAX_BLOCKS;
    if (block < XS_BLOCK_MIN)
        block = XS_BLOCK_MIN;
    uint64_t nblocks = (lookups + block - 1) / block;
    uint64_t *sums = malloc(nblocks * sizeof *sums);
    if (!sums)
        wl_die(PROG, "out of memory for the block sums");
    t0 = wl_wtime_s();
#pragma omp parallel for schedule(dynamic)
    for (uint64_t b = 0; b < nblocks; b++)
        sums[b] = block_sum(&pb, b, block, lookups);
    double time_s = wl_wtime_s() - t0;
    if (wl_fault_injected())
        sums[0] += 1;
    uint64_t total = 0;
    for (uint64_t b = 0; b < nblocks; b++)
        total += sums[b];

    printf("%s: grid_mb=%ld nuclides=%d points=%zu placement=%s lookups=%" PRIu64
           " threads=%d checksum=%" PRIu64 " init_s=%.6f time_s=%.6f lookups_per_s=%.4g\n",
           PROG, grid_mb, XS_NUCLIDES, pb.points, argc == 4 ? argv[3] : "malloc",
           lookups, omp_get_max_threads(), total, init_s, time_s,
           time_s > 0.0 ? (double)lookups / time_s : 0.0);

    char how[160];
    int ok = 1;
    if (lookups <= FULL_CHECK_MAX_LOOKUPS) {
        uint64_t ref = 0;
        for (uint64_t b = 0; b < nblocks; b++)
            ref += block_sum(&pb, b, block, lookups);
        ok = ref == total;
        snprintf(how, sizeof how, "sequential rerun of all %" PRIu64 " lookups: checksum %" PRIu64 " %s",
                 lookups, ref, ok ? "equal" : "DIFFERENT");
    } else {
        int bad = 0;
        /* blocks spread evenly from the first to the last (distinct:
         * there are more than XS_CHECK_BLOCKS blocks here) */
        for (int k = 0; k < XS_CHECK_BLOCKS; k++) {
            uint64_t b = (uint64_t)k * (nblocks - 1) / (XS_CHECK_BLOCKS - 1);
            bad += block_sum(&pb, b, block, lookups) != sums[b];
        }
        ok = bad == 0;
        snprintf(how, sizeof how, "spot check: %d of %" PRIu64 " blocks recomputed sequentially, %d differ",
                 XS_CHECK_BLOCKS, nblocks, bad);
    }
    int status = wl_verdict(ok, how);
    free(sums);
    if (argc == 4)
        ph_free(grid);
    else
        free(grid);
    return status;
}
