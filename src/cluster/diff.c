/*
 * diff.c -- byte-exact runs of changed bytes (see diff.h).
 *
 * The scan reads 8-byte words; equal words (the common case) cost one
 * compare.  A differing word is split by its XOR: each non-zero byte is a
 * changed byte, and runs are extended or cut byte by byte there.
 */
#include "cluster/diff.h"

#include <string.h>

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

size_t ph_dsm_diff(const unsigned char *page, const unsigned char *twin,
                size_t page_bytes, ph_dsm_run *runs, size_t max_runs,
                size_t *changed_bytes)
{
    size_t nruns = 0, changed = 0;
    int open = 0;             /* a run is open */
    size_t start = 0;         /* its first byte */
#define CLOSE_AT(endpos)                                                    \
    do {                                                                    \
        if (nruns < max_runs) {                                             \
            runs[nruns].off = (uint32_t)start;                              \
            runs[nruns].len = (uint32_t)((endpos) - start);                 \
        }                                                                   \
        nruns++;                                                            \
        open = 0;                                                           \
    } while (0)

    for (size_t w = 0; w < page_bytes; w += 8) {
        uint64_t x = load64(page + w) ^ load64(twin + w);
        if (x == 0) {
            if (open)
                CLOSE_AT(w);
            continue;
        }
        if (x == ~(uint64_t)0 || ((x & 0x00000000000000ffull) &&
                                  (x & 0x000000000000ff00ull) &&
                                  (x & 0x0000000000ff0000ull) &&
                                  (x & 0x00000000ff000000ull) &&
                                  (x & 0x000000ff00000000ull) &&
                                  (x & 0x0000ff0000000000ull) &&
                                  (x & 0x00ff000000000000ull) &&
                                  (x & 0xff00000000000000ull))) {
            /* every byte changed */
            if (!open) {
                open = 1;
                start = w;
            }
            changed += 8;
            continue;
        }
        for (size_t b = 0; b < 8; b++) {
            /* byte b of the word in memory order (little or big endian) */
            int diff = page[w + b] != twin[w + b];
            if (diff) {
                changed++;
                if (!open) {
                    open = 1;
                    start = w + b;
                }
            } else if (open) {
                CLOSE_AT(w + b);
            }
        }
    }
    if (open)
        CLOSE_AT(page_bytes);
#undef CLOSE_AT
    *changed_bytes = changed;
    return nruns;
}

int ph_dsm_diff_send_whole(int single_writer, size_t changed_bytes,
                        size_t nruns, size_t max_runs, size_t page_bytes,
                        double whole_share)
{
    if (!single_writer)
        return 0;
    if (nruns > max_runs)
        return 1;
    return (double)changed_bytes > whole_share * (double)page_bytes;
}

void ph_dsm_diff_apply(unsigned char *dst, const unsigned char *src,
                    const ph_dsm_run *runs, size_t nruns)
{
    for (size_t i = 0; i < nruns; i++)
        memcpy(dst + runs[i].off, src + runs[i].off, runs[i].len);
}
