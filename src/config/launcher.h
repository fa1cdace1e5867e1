/*
 * launcher.h -- which rank of a parallel job this process is, as the job
 * launcher says it in the environment it gives each process (mpirun of
 * Open MPI, MPICH's and Intel MPI's Hydra, MVAPICH, Slurm's srun).  Read
 * without MPI: transparent mode runs inside MPI programs it knows nothing
 * of, before they call MPI_Init, and must name a statistics file per rank
 * (base/path_pattern.h).
 */
#ifndef PH_CONFIG_LAUNCHER_H
#define PH_CONFIG_LAUNCHER_H

#include <stddef.h>

typedef struct ph_launcher {
    long rank;        /* 0 when not started by a launcher */
    long size;        /* processes in the job; 1 when not known */
    long local_size;  /* of them on this host; 0 when not known */
    const char *from; /* the variable that said the rank; NULL: none */
} ph_launcher;

/* The launcher's rank and size from the environment, read now (the
 * first launcher whose rank variable holds a number wins; Slurm counts
 * only inside a job step: SLURM_STEP_NUM_TASKS, which is also the size of
 * a rank variable that comes without its own, as PMIX_RANK under
 * srun --mpi=pmix, when SLURM_PROCID is the same rank).  local_size from
 * the launcher's count of this host's ranks (OMPI_COMM_WORLD_LOCAL_SIZE,
 * MPI_LOCALNRANKS, MV2_COMM_WORLD_LOCAL_SIZE), or a Slurm step on one
 * node (SLURM_STEP_NUM_NODES=1): the whole job. */
ph_launcher ph_launcher_get(void);

/* A file name pattern (base/path_pattern.h) with this process's keys
 * replaced: %r the launcher's rank, %h this host, %p the given pid (the
 * process that will write the file).  0, or -1 with errno as
 * ph_path_expand. */
int ph_launcher_expand_path(const char *pattern, long pid, char *out, size_t len);

#endif
