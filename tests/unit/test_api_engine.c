/*
 * test_api_engine.c -- the engine through the public API, on the simulated
 * 4-node machine with the real SIGSEGV sampler: the sampling mechanism's
 * memory-manager thread wakes on its own (every 10 ms), sees the main
 * thread (virtual node 0) sweep an array placed on node 3, and moves it;
 * then API misuse, statistics as JSON, and calls after ph_finalize().
 */
#include "check.h"

#include "pagehome.h"
#include "sample/sigsegv.h" /* PH_SIG_MAX_SLOTS: the sampler's room */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define N (256 * 512) /* doubles: 256 pages */

static double grid[N];

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(void)
{
    setenv("PAGEHOME_TOPOLOGY", "nodes=4,cpus_per_node=1", 1);
    setenv("PAGEHOME_ENGINE", "sampling", 1);
    setenv("PAGEHOME_SAMPLE_PERIOD_MS", "10", 1);
    setenv("PAGEHOME_SAMPLE_PAGES", "64", 1);
    setenv("PAGEHOME_SAMPLE_BUDGET", "0", 1);
    /* 64 pages an interval from the start (no first sweep of all 254), so
     * that moving them all takes at least 254 / 64 invocations; and the
     * area never cold: on a loaded machine intervals pass while the main
     * thread does not run, and three sweeps without a candidate left the
     * last pages remote (both seen in 2 of 25 runs beside three CPU hogs,
     * with the builds of 2026-12-01 and 12-02 alike) */
    setenv("PAGEHOME_SAMPLE_FIRST_PAGES", "0", 1);
    setenv("PAGEHOME_COLD_AFTER", "0", 1);
    char stats_path[64];
    snprintf(stats_path, sizeof stats_path, "/tmp/ph_stats_file_%d.json",
             (int)getpid());
    setenv("PAGEHOME_STATS_FILE", stats_path, 1);

    /* engine calls work before ph_init: they initialise the library */
    double *page_aligned = grid + (512 - ((uintptr_t)grid / 8) % 512) % 512;
    size_t bytes = (size_t)(N - 1024) * sizeof(double);
    for (size_t i = 0; i < N; i++)
        grid[i] = 1.0;
    ph_placement_t pl;
    CHECK_EQ(ph_placement_parse(&pl, "node:3"), 0);
    CHECK_EQ(ph_place(page_aligned, bytes, &pl, NULL), 0);
    ph_hotarea_t *a = ph_area_register(page_aligned, bytes, "grid");
    CHECK(a != NULL);
    size_t pages = bytes / 4096;

    /* misuse */
    CHECK(ph_area_register(page_aligned + 512, 4096, "inside") == NULL);
    CHECK_EQ(errno, EEXIST);
    CHECK(ph_area_register(grid, 100, "tiny") == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK(strstr(ph_last_error(), "no whole 4 KiB page") != NULL);
    /* more areas than the sampler has ranges for: refused, and the
     * message names the area refused */
    enum { MANY = PH_SIG_MAX_SLOTS + 100 };
    char *many = mmap(NULL, (size_t)MANY * 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(many != MAP_FAILED);
    ph_hotarea_t **reg = calloc(MANY, sizeof *reg);
    int refused = -1;
    for (int k = 0; many != MAP_FAILED && reg && k < MANY && refused < 0; k++) {
        char name[32];
        snprintf(name, sizeof name, "many%d", k);
        reg[k] = ph_area_register(many + (size_t)k * 4096, 4096, name);
        if (!reg[k])
            refused = k;
    }
    CHECK(refused > 0);
    if (refused > 0) {
        char want[64];
        snprintf(want, sizeof want, "hot area \"many%d\": the ", refused);
        CHECK(strstr(ph_last_error(), want) != NULL);
        CHECK(strstr(ph_last_error(), "source refused it") != NULL);
    }
    for (int k = 0; reg && k < MANY; k++)
        if (reg[k])
            CHECK_EQ(ph_area_unregister(reg[k]), 0);
    free(reg);
    if (many != MAP_FAILED)
        munmap(many, (size_t)MANY * 4096);
    CHECK_EQ(ph_phase_end(1), -1);
    CHECK_EQ(ph_area_unregister(NULL), -1);
    CHECK_EQ(ph_area_unregister((ph_hotarea_t *)grid), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(ph_engine_stats(NULL), -1);

    /* the program just computes; the manager wakes by itself (up to 60 s
     * for it: a loaded machine delays the manager thread, and the loop
     * ends as soon as every page is home) */
    size_t counts[4] = {0};
    double sum = 0;
    for (int round = 0; round < 12000; round++) {
        for (size_t i = 0; i < bytes / sizeof(double); i++)
            page_aligned[i] += 1.0;
        ph_node_histogram(page_aligned, bytes, counts, 4);
        if (counts[0] == pages)
            break;
        sleep_ms(5);
    }
    CHECK_EQ(counts[0], pages);
    ph_engine_stats_t st;
    CHECK_EQ(ph_engine_stats(&st), 0);
    CHECK(st.migrated >= pages);
    CHECK(st.invocations >= pages / 64);
    ph_area_stats_t as;
    CHECK_EQ(ph_area_stats(a, &as), 0);
    CHECK_EQ(as.migrated, st.migrated);
    for (size_t i = 0; i < bytes / sizeof(double); i++)
        sum += page_aligned[i];
    CHECK(sum > (double)(bytes / sizeof(double)) * 1.5); /* data kept */

    /* statistics as JSON */
    char path[] = "/tmp/ph_api_stats_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(ph_stats_write(fd), 0);
    close(fd);
    FILE *f = fopen(path, "r");
    char buf[256] = "";
    CHECK(f && fgets(buf, sizeof buf, f));
    if (f)
        fclose(f);
    unlink(path);
    CHECK(strchr(buf, '{') != NULL);

    CHECK_EQ(ph_area_unregister(a), 0);
    CHECK_EQ(ph_finalize(), 0);
    /* the statistics went to stats_file */
    f = fopen(stats_path, "r");
    CHECK(f != NULL);
    if (f) {
        char text[4096] = "";
        size_t got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        CHECK(got > 0 && strstr(text, "\"pagehome_stats\"") != NULL);
    }
    unlink(stats_path);
    CHECK_EQ(ph_finalize(), -1);
    CHECK_EQ(ph_iteration_end(), -1);
    CHECK(strstr(ph_last_error(), "after ph_finalize") != NULL);
    CHECK(ph_area_register(page_aligned, bytes, "late") == NULL);
    /* placement still works */
    CHECK(ph_node_histogram(page_aligned, bytes, counts, 4) >= 0);
    return check_summary("test_api_engine");
}
