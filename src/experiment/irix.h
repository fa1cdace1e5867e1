/*
 * irix.h -- an IRIX-like kernel page-migration engine, modelled as 003
 * section 2.2 and IRIX's migration(5) describe it, as pure functions of
 * per-page counters and state (irix.c has the rules and the values).
 */
#ifndef PH_EXPERIMENT_IRIX_H
#define PH_EXPERIMENT_IRIX_H

#include <stddef.h>
#include <stdint.h>

typedef struct ph_exp_irix_params {
    uint32_t threshold;     /* an interrupt when some remote node's count
                               exceeds the local count by more than this */
    unsigned dampening;     /* consecutive interrupts toward one node
                               before the page migrates */
    unsigned freeze_after;  /* migrations after which a page freezes */
    double period_ns;       /* periodic operations: one page every
                               period_ns (ages its counters, melts it) */
} ph_exp_irix_params;

/* The model's defaults (irix.c says where each comes from). */
void ph_exp_irix_defaults(ph_exp_irix_params *p);

/* Per-page state besides the counters. */
typedef struct ph_exp_irix_page {
    uint8_t damp;       /* consecutive interrupts toward damp_node */
    int8_t damp_node;   /* -1 none */
    uint8_t migrations; /* since the last melt */
    uint8_t frozen;
} ph_exp_irix_page;

enum ph_exp_irix_outcome {
    PH_IRIX_NONE = 0,      /* no interrupt */
    PH_IRIX_DAMPENED = 1,  /* interrupt, not enough consecutive ones yet */
    PH_IRIX_FROZEN = 2,    /* interrupt on a frozen page: refused */
    PH_IRIX_MIGRATE = 3    /* migrate to *target */
};

/* The hardware's check of one page after its counters cnt[0..n) grew,
 * and the kernel's decision.  home is the page's node.  Updates the
 * counters (reset after every interrupt: the handler re-arms them, and a
 * migrated page starts with fresh ones) and st.  Returns an outcome;
 * *target gets the node that triggered the interrupt (-1 when none). */
int ph_exp_irix_check(const ph_exp_irix_params *p, uint32_t *cnt, int n,
                      int home, ph_exp_irix_page *st, int *target);

/* The periodic operation on one page: its counters are halved (aging) and
 * a frozen page melts (migrations start counting again). */
void ph_exp_irix_periodic(uint32_t *cnt, int n, ph_exp_irix_page *st);

#endif
