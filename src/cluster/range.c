/*
 * range.c -- first-fit allocation table of the arena (see range.h).
 */
#include "cluster/range.h"

#include "base/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ph_dsm_ranges_init(ph_dsm_ranges *t, size_t total_pages)
{
    memset(t, 0, sizeof *t);
    t->total_pages = total_pages;
}

void ph_dsm_ranges_destroy(ph_dsm_ranges *t)
{
    free(t->r);
    memset(t, 0, sizeof *t);
}

size_t ph_dsm_ranges_largest_gap(const ph_dsm_ranges *t)
{
    size_t best = 0, at = 0;
    for (size_t i = 0; i <= t->n; i++) {
        size_t next = i < t->n ? t->r[i].start : t->total_pages;
        if (next - at > best)
            best = next - at;
        if (i < t->n)
            at = t->r[i].start + t->r[i].npages;
    }
    return best;
}

int ph_dsm_ranges_add(ph_dsm_ranges *t, size_t npages, void *data, size_t *start)
{
    if (npages == 0)
        return ph_fail(EINVAL, "allocation of 0 pages");
    size_t at = 0, pos = t->n;
    int found = 0;
    for (size_t i = 0; i <= t->n; i++) {
        size_t next = i < t->n ? t->r[i].start : t->total_pages;
        if (next >= at && next - at >= npages) {
            pos = i;
            found = 1;
            break;
        }
        if (i < t->n)
            at = t->r[i].start + t->r[i].npages;
    }
    if (!found)
        return ph_fail(ENOMEM, "%zu pages do not fit in the arena (%zu "
                       "pages, %zu in use, largest free range %zu pages)",
                       npages, t->total_pages, t->used_pages,
                       ph_dsm_ranges_largest_gap(t));
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        ph_dsm_range *r = realloc(t->r, cap * sizeof *r);
        if (!r)
            return ph_fail(ENOMEM, "allocation table: out of memory");
        t->r = r;
        t->cap = cap;
    }
    memmove(t->r + pos + 1, t->r + pos, (t->n - pos) * sizeof *t->r);
    t->r[pos].start = at;
    t->r[pos].npages = npages;
    t->r[pos].data = data;
    t->n++;
    t->used_pages += npages;
    *start = at;
    return 0;
}

long ph_dsm_ranges_find(const ph_dsm_ranges *t, size_t page)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid].start <= page)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const ph_dsm_range *r = &t->r[lo - 1];
    return page < r->start + r->npages ? (long)(lo - 1) : -1;
}

long ph_dsm_ranges_find_start(const ph_dsm_ranges *t, size_t start)
{
    long i = ph_dsm_ranges_find(t, start);
    if (i < 0 || t->r[i].start != start)
        return -1;
    return i;
}

void ph_dsm_ranges_remove(ph_dsm_ranges *t, size_t i)
{
    if (i >= t->n)
        return;
    t->used_pages -= t->r[i].npages;
    memmove(t->r + i, t->r + i + 1, (t->n - i - 1) * sizeof *t->r);
    t->n--;
}
