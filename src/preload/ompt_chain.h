/*
 * ompt_chain.h -- the OpenMP tools interface shared with another tool
 * (ompt_chain.c) and pagehome's own tool (ompt.c).  Private to
 * src/preload/; needs LLVM's omp-tools.h.
 */
#ifndef PH_PRELOAD_OMPT_CHAIN_H
#define PH_PRELOAD_OMPT_CHAIN_H

#include <omp-tools.h>

/* ompt.c: pagehome's own tool, what its ompt_start_tool would return.
 * Its callbacks keep no state in the runtime's ompt_data_t slots (the
 * parallel, task and thread data): when another tool runs beside it,
 * those slots are that tool's, and pagehome's callbacks get NULL. */
ompt_start_tool_result_t *ph_ompt_own_tool(unsigned int omp_version,
                                           const char *runtime_version);

/* ompt_chain.c: the other tool started beside pagehome's, as
 * "FILE (how it was found)", or NULL when there is none. */
const char *ph_ompt_chain_other(void);

#endif
