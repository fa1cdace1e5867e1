/*
 * machine.h -- the machine pagehome runs on: a topology, the OS table
 * opened on it, a mover, and the settings they were made with.
 *
 * The machine layer sits between move/ and place/.  It is where the
 * tunables that describe the machine are read, once, into a
 * ph_machine_cfg (ph_machine_cfg_from_options); the layers below it take
 * that configuration as arguments and read no tunable themselves.  The
 * layers above (place/, engine/, api/) are handed a ph_machine.
 *
 * One machine per process is made on first use (ph_machine_get): from the
 * tunables as they are at that moment.  Tests and tools can make others
 * with ph_machine_open.
 */
#ifndef PH_MACHINE_MACHINE_H
#define PH_MACHINE_MACHINE_H

#include "move/mover.h"
#include "os/os.h"
#include "topo/topo.h"

typedef enum ph_machine_kind {
    PH_MACHINE_AUTO = 0,  /* the simulator when the topology is synthetic */
    PH_MACHINE_LINUX = 1, /* the kernel */
    PH_MACHINE_SIM = 2    /* the simulator */
} ph_machine_kind;

#define PH_MACHINE_SPEC_MAX 512

typedef struct ph_machine_cfg {
    ph_machine_kind kind;                 /* tunable machine */
    char topology[PH_MACHINE_SPEC_MAX];   /* tunable topology: a synthetic
                                             spec, a JSON file, "" = the
                                             real machine */
    ph_sim_binding sim_binding;           /* tunable sim_binding */
    ph_mover_cfg mover;                   /* move_batch_pages, move_retries,
                                             node_full_backoff_ms,
                                             move_threads */
    int verbose;                          /* tunable verbose: say what was
                                             made, print every tunable */
} ph_machine_cfg;

typedef struct ph_machine {
    ph_topology *topo;
    ph_os *os;
    ph_mover *mover;
    ph_machine_cfg cfg;
} ph_machine;

/* The tunables, read now, into cfg. */
void ph_machine_cfg_from_options(ph_machine_cfg *cfg);

/* A machine made from cfg: the topology (ph_topo_load), the kernel or the
 * simulator over it, a mover.  NULL/errno with a message. */
ph_machine *ph_machine_open(const ph_machine_cfg *cfg);
void ph_machine_close(ph_machine *m);

/* The process machine, made from the tunables on first use (thread-safe;
 * one acquire load once made).  A failure is remembered: every later call
 * fails fast with the same message.  NULL/errno. */
ph_machine *ph_machine_get(void);
/* The same, failing with the message prefixed by "who: ". */
ph_machine *ph_machine_get_for(const char *who);
/* fork(): prepare takes the process machine's lock and then its os's
 * (os.h: innermost, after every lock whose holder may call the machine),
 * parent releases them, child makes them afresh.  Nothing when no
 * machine is made. */
void ph_machine_fork_prepare(void);
void ph_machine_fork_parent(void);
void ph_machine_fork_child(void);
/* Tests only: close the process machine so that the next ph_machine_get()
 * makes a new one from the current tunables.  No other thread may be using
 * pagehome. */
void ph_machine_reset(void);

#endif
