/*
 * fuzz_elf.c -- the ELF reading of `pagehome run` (tools/pagehome/elf_info.c)
 * under damaged files: a program given to `pagehome run` is any file.
 *
 * fuzz_elf --iterations N --seed S FILE...: each FILE (a real ELF file: a
 * program, a shared library) is read as is, and must be recognised; then
 * N mutants of each, written to a memfd and read through its
 * /proc/self/fd path.  A mutant is the file with 1..8 edits: bit flips,
 * 8-byte words overwritten with 0, all ones, a small or a random value
 * (offsets, addresses, counts and links of the headers and the dynamic
 * and version sections), half of them inside the first 4 KiB where the
 * headers are, or a truncation.  What must hold whatever the input: no
 * crash or sanitizer report (run it under PH_SANITIZE), counts within
 * bounds, every name NUL-terminated, the runtime one of "", "libgomp",
 * "libomp".  The same seed gives the same run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../../tools/pagehome/elf_info.h"

#include "base/rng.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_FILE (8u << 20)

static uint64_t rng_state;

/* A number in [0, n) (0 when n is 0). */
static uint64_t below(uint64_t n)
{
    return n ? ph_splitmix64_next(&rng_state) % n : 0;
}

static void check(const elf_info *e, const char *what, long it)
{
    int ok = e->ngomp_needs >= 0 && e->ngomp_needs <= ELF_MAX_VERSIONS && e->ndefs >= 0 &&
             e->ndefs <= ELF_MAX_VERSIONS && memchr(e->omp, 0, sizeof e->omp) &&
             (!e->omp[0] || !strcmp(e->omp, "libgomp") || !strcmp(e->omp, "libomp"));
    for (int i = 0; ok && i < e->ngomp_needs; i++)
        ok = memchr(e->gomp_needs[i], 0, sizeof e->gomp_needs[i]) != NULL;
    for (int i = 0; ok && i < e->ndefs; i++)
        ok = memchr(e->defs[i], 0, sizeof e->defs[i]) != NULL;
    if (!ok) {
        fprintf(stderr, "fuzz_elf: %s, iteration %ld: inconsistent result\n", what, it);
        abort();
    }
}

static void inspect_bytes(const uint8_t *buf, size_t len, elf_info *e)
{
    int fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
    if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len)) {
        perror("fuzz_elf: memfd");
        exit(2);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    elf_inspect(path, e);
    close(fd);
}

static void mutate(uint8_t *buf, size_t *len)
{
    int edits = below(2) ? 1 : 1 + (int)below(8);
    for (int k = 0; k < edits && *len > 8; k++) {
        size_t span = below(2) && *len > 4096 ? 4096 : *len;
        size_t at = below(span);
        switch (below(4)) {
        case 0: /* a bit flip */
            buf[at] ^= (uint8_t)(1u << below(8));
            break;
        case 1: { /* an 8-byte word (aligned, as the fields are) */
            at &= ~(size_t)7;
            if (at + 8 > *len)
                break;
            uint64_t v;
            switch (below(4)) {
            case 0: v = 0; break;
            case 1: v = UINT64_MAX; break;
            case 2: v = below(4096); break;
            default: v = ph_splitmix64_next(&rng_state); break;
            }
            memcpy(buf + at, &v, 8);
            break;
        }
        case 2: { /* a 4-byte word: counts, links, string offsets */
            at &= ~(size_t)3;
            if (at + 4 > *len)
                break;
            uint32_t v = below(2) ? (uint32_t)below(64) : (uint32_t)ph_splitmix64_next(&rng_state);
            memcpy(buf + at, &v, 4);
            break;
        }
        default: /* a truncation */
            if (below(4) == 0)
                *len = at;
            break;
        }
    }
}

int main(int argc, char **argv)
{
    long iters = 2000;
    uint64_t seed = 1;
    int first = 1;
    for (; first + 1 < argc && argv[first][0] == '-'; first += 2) {
        if (!strcmp(argv[first], "--iterations"))
            iters = atol(argv[first + 1]);
        else if (!strcmp(argv[first], "--seed"))
            seed = strtoull(argv[first + 1], NULL, 10);
        else
            break;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: fuzz_elf [--iterations N] [--seed S] FILE...\n");
        return 2;
    }
    rng_state = seed;
    uint8_t *orig = malloc(MAX_FILE), *buf = malloc(MAX_FILE);
    if (!orig || !buf)
        return 2;
    long total = 0, with_versions = 0;
    for (int f = first; f < argc; f++) {
        FILE *in = fopen(argv[f], "rb");
        if (!in) {
            perror(argv[f]);
            return 2;
        }
        size_t n = fread(orig, 1, MAX_FILE, in);
        fclose(in);
        elf_info e;
        inspect_bytes(orig, n, &e);
        check(&e, argv[f], -1);
        if (!e.is_elf) {
            fprintf(stderr, "fuzz_elf: %s: a seed must be an ELF file\n", argv[f]);
            free(orig);
            free(buf);
            return 1;
        }
        printf("fuzz_elf: %s: %d needs of libgomp.so.1, %d versions defined\n", argv[f],
               e.ngomp_needs, e.ndefs);
        int versions = e.ngomp_needs + e.ndefs;
        for (long it = 0; it < iters; it++) {
            size_t len = n;
            memcpy(buf, orig, n);
            mutate(buf, &len);
            inspect_bytes(buf, len, &e);
            check(&e, argv[f], it);
            total++;
            with_versions += versions && e.ngomp_needs + e.ndefs > 0;
        }
    }
    printf("fuzz_elf: %ld mutants read safely, %ld of them still with version names\n", total,
           with_versions);
    free(orig);
    free(buf);
    if (!with_versions) {
        fprintf(stderr, "fuzz_elf: no mutant kept a version name: the version reading was "
                        "not exercised (seeds without DT_VERNEED of libgomp.so.1 or DT_VERDEF?)\n");
        return 1;
    }
    return 0;
}
