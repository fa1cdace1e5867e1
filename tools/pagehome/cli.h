/*
 * cli.h -- the pagehome command: shared helpers of the subcommands.
 *
 * main.c parses global options and dispatches; each cmd_*.c implements one
 * subcommand as `int cmd_X(int argc, char **argv)` returning the exit
 * status (0 ok, 1 failure, 2 usage error).  Messages to stderr start with
 * "pagehome: ", the same prefix the library uses.
 */
#ifndef PH_CLI_H
#define PH_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_USAGE 2

int cmd_topo(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* `name` on PATH (as execvp would find it: executable), its path into
 * out; 0 found, -1 not. */
int cli_find_on_path(const char *name, char *out, size_t len);
int cmd_hugepages(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_cluster(int argc, char **argv);

/* "pagehome: <msg>" to stderr; returns `status`. */
int cli_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Human size: "23.5 GiB". */
void cli_bytes(uint64_t bytes, char *buf, size_t len);
/* CPU list "0-3,8,10-11" from a sorted array. */
void cli_cpulist(const int *cpus, int n, char *buf, size_t len);
/* Option with a value: --name=V or --name V; advances *i.  NULL if argv[*i]
 * is not that option; sets *missing when the value is absent. */
const char *cli_value(int argc, char **argv, int *i, const char *name, int *missing);

#endif
