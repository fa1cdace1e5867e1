/*
 * launcher.c -- the job launcher's rank and size (launcher.h).
 */
#include "config/launcher.h"

#include "base/path_pattern.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* A non-negative decimal number, or -1. */
static long number(const char *s)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || *end || v < 0 ? -1 : v;
}

ph_launcher ph_launcher_get(void)
{
    /* rank variable, size variable: Open MPI, PMIx-based launchers,
     * Hydra (MPICH, Intel MPI), MVAPICH, Slurm's srun */
    static const char *const vars[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
        {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"},
    };
    ph_launcher l = {.rank = 0, .size = 1, .local_size = 0, .from = NULL};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        long r = number(getenv(vars[i][0]));
        if (r < 0)
            continue;
        long n = number(getenv(vars[i][1]));
        /* srun's plugins start the ranks without the MPI launcher's size
         * variable (--mpi=pmix sets PMIX_RANK alone): the job step's task
         * count, when the step numbers its tasks as the rank does */
        if (n < 0 && number(getenv("SLURM_PROCID")) == r)
            n = number(getenv("SLURM_STEP_NUM_TASKS"));
        l.rank = r;
        l.size = n > r ? n : r + 1;
        l.from = vars[i][0];
        break;
    }
    if (!l.from)
        return l;
    static const char *const local[] = {
        "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE"};
    for (size_t i = 0; i < sizeof local / sizeof local[0] && !l.local_size; i++) {
        long n = number(getenv(local[i]));
        l.local_size = n > 0 && n <= l.size ? n : 0;
    }
    if (!l.local_size && number(getenv("SLURM_STEP_NUM_NODES")) == 1)
        l.local_size = l.size;
    return l;
}

int ph_launcher_expand_path(const char *pattern, long pid, char *out, size_t len)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    ph_path_vars v = {ph_launcher_get().rank, pid, host};
    return ph_path_expand(pattern, &v, out, len);
}
