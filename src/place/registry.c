/*
 * registry.c -- the live allocations of ph_alloc (see alloc.h).
 *
 * An array of pointers to areas, sorted by base, under one mutex.  Areas
 * never overlap (each is inside its own mapping), so the area containing
 * an address is the last one whose base is <= it, if it reaches that far.
 * Insertion and removal move pointers (memmove), which stays cheap for the
 * tens of thousands of allocations a program may hold.
 */
#include "place/alloc.h"

#include "base/error.h"
#include "base/sorted.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static ph_area **reg;
static size_t reg_n, reg_cap;

static uintptr_t area_end(const ph_area *a)
{
    return (uintptr_t)a->base + a->npages * a->page_bytes;
}

/* Index of the first area whose base is > addr.  Lock held. */
static size_t upper(uintptr_t addr)
{
    size_t at;
    PH_UPPER(at, reg, reg_n, it->base, addr);
    return at;
}

/* The area containing addr, or NULL.  Lock held. */
static ph_area *containing(uintptr_t addr, size_t *at)
{
    size_t i = upper(addr);
    if (i == 0)
        return NULL;
    ph_area *a = reg[i - 1];
    if (addr >= area_end(a))
        return NULL;
    if (at)
        *at = i - 1;
    return a;
}

int ph_registry_add(const ph_area *a)
{
    if (!a || !a->base || a->npages == 0)
        return ph_fail(EINVAL, "registry: bad area");
    ph_area *copy = malloc(sizeof *copy);
    if (!copy)
        return ph_fail(ENOMEM, "registry: out of memory recording a block");
    *copy = *a;
    pthread_mutex_lock(&reg_lock);
    uintptr_t b = (uintptr_t)a->base;
    size_t at = upper(b);
    if ((at > 0 && area_end(reg[at - 1]) > b) ||
        (at < reg_n && (uintptr_t)reg[at]->base < area_end(a))) {
        pthread_mutex_unlock(&reg_lock);
        free(copy);
        return ph_fail(EEXIST, "registry: block at %p overlaps a recorded "
                       "one", a->base);
    }
    if (reg_n == reg_cap) {
        size_t cap = reg_cap ? reg_cap * 2 : 64;
        ph_area **n = realloc(reg, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&reg_lock);
            free(copy);
            return ph_fail(ENOMEM, "registry: out of memory recording a "
                           "block");
        }
        reg = n;
        reg_cap = cap;
    }
    memmove(reg + at + 1, reg + at, (reg_n - at) * sizeof *reg);
    reg[at] = copy;
    reg_n++;
    pthread_mutex_unlock(&reg_lock);
    return 0;
}

int ph_registry_remove(const void *ptr, ph_area *out)
{
    pthread_mutex_lock(&reg_lock);
    size_t at = 0;
    ph_area *a = containing((uintptr_t)ptr, &at);
    if (!a || a->base != ptr) {
        void *inside = a ? a->base : NULL;
        size_t bytes = a ? a->bytes : 0;
        pthread_mutex_unlock(&reg_lock);
        if (inside)
            return ph_fail(EINVAL, "%p was not returned by ph_alloc: it lies "
                           "inside the block at %p (%zu bytes)", ptr, inside,
                           bytes);
        return ph_fail(EINVAL, "%p was not returned by ph_alloc (or was "
                       "already freed)", ptr);
    }
    memmove(reg + at, reg + at + 1, (reg_n - at - 1) * sizeof *reg);
    reg_n--;
    if (reg_n == 0) {
        free(reg);
        reg = NULL;
        reg_cap = 0;
    }
    pthread_mutex_unlock(&reg_lock);
    if (out)
        *out = *a;
    else
        ph_plan_release(&a->plan);
    free(a);
    return 0;
}

int ph_registry_find(const void *addr, ph_area *out)
{
    pthread_mutex_lock(&reg_lock);
    ph_area *a = containing((uintptr_t)addr, NULL);
    int rc = 0;
    if (!a) {
        rc = ph_fail(ENOENT, "%p is not inside a block from ph_alloc", addr);
    } else if (out) {
        ph_area copy = *a;
        rc = ph_plan_copy(&copy.plan, &a->plan);
        if (rc == 0)
            *out = copy;
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

size_t ph_registry_count(void)
{
    pthread_mutex_lock(&reg_lock);
    size_t n = reg_n;
    pthread_mutex_unlock(&reg_lock);
    return n;
}

int ph_registry_replan(const void *start, size_t len, const ph_plan *plan)
{
    uintptr_t s = (uintptr_t)start, e = s + len;
    int rc = 0;
    pthread_mutex_lock(&reg_lock);
    /* Areas overlapping [s, e): from the one containing s (or the first
     * after it) on. */
    size_t i = upper(s);
    if (i > 0 && area_end(reg[i - 1]) > s)
        i--;
    for (; i < reg_n && (uintptr_t)reg[i]->base < e; i++) {
        ph_area *a = reg[i];
        if (area_end(a) <= s)
            continue;
        if ((uintptr_t)a->base == s && a->page_bytes == plan->page_bytes &&
            a->npages * a->page_bytes == len) {
            ph_plan copy;
            if (ph_plan_copy(&copy, plan) != 0) {
                a->mixed = 1;
                rc = -1;
                continue;
            }
            ph_plan_release(&a->plan);
            a->plan = copy;
            a->mixed = 0;
        } else {
            a->mixed = 1;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}
