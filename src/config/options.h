/*
 * options.h -- typed access to the tunables of options.def.
 *
 * Values live in one static array, initialised from the defaults and the
 * PAGEHOME_* environment the first time any is read (ph_options_init), and
 * changed by ph_config_set().  Readers are lock-free (atomic loads), so a
 * value may be read from any thread, including a signal handler.
 */
#ifndef PH_CONFIG_OPTIONS_H
#define PH_CONFIG_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

typedef enum ph_opt_id {
#define PH_OPT(id, name, type, def, min, max, unit, choices, doc) PH_OPT_##id,
#include "config/options.def"
#undef PH_OPT
    PH_OPT_COUNT
} ph_opt_id;

typedef enum ph_opt_type {
    PH_OT_BOOL, PH_OT_INT, PH_OT_SIZE, PH_OT_DOUBLE, PH_OT_ENUM, PH_OT_STRING
} ph_opt_type;

typedef enum ph_opt_source {
    PH_SRC_DEFAULT, PH_SRC_ENV, PH_SRC_API
} ph_opt_source;

/* Read the environment once (thread-safe, idempotent). */
void ph_options_init(void);
/* Forget every value set, return to defaults and re-read the environment
 * (tests). */
void ph_options_reset(void);

int ph_opt_bool(ph_opt_id id);
int64_t ph_opt_int(ph_opt_id id);     /* INT, SIZE, BOOL, ENUM (index) */
double ph_opt_double(ph_opt_id id);
/* ENUM: the choice's text; STRING: the value (never NULL). The pointer
 * stays valid until the tunable is set again. */
const char *ph_opt_str(ph_opt_id id);

/* Set from text with a given source: 0, or -1/EINVAL with a message. */
int ph_opt_set(ph_opt_id id, const char *text, ph_opt_source src);
int ph_opt_find(const char *name); /* id or -1 */

const char *ph_opt_name(ph_opt_id id);
ph_opt_source ph_opt_source_of(ph_opt_id id);
const char *ph_opt_source_name(ph_opt_source src);

/* Text of the current value (e.g. "2M" for SIZE when exact, "512"). */
void ph_opt_format(ph_opt_id id, char *buf, size_t len);

/* Every tunable as the value of an object member the caller has keyed:
 * {"name": {"value": "as text", "source": "default|env|api"}, ...}
 * (the statistics files of the engine and of transparent mode). */
struct ph_jw;
void ph_opt_write_json(struct ph_jw *w);

/* Print all: markdown=0: "name = value (source)" lines with env var and
 * doc; markdown=1: the README table (name, env, type, default, range,
 * unit, doc) */
void ph_options_print(FILE *out, int markdown);

/* Parse a size with optional K/M/G/T suffix (powers of 1024). */
int ph_parse_size(const char *text, uint64_t *out);

#endif
