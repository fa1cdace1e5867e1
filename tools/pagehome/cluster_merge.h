/*
 * cluster_merge.h -- one report from the statistics files of a cluster
 * run's ranks (see cluster_merge.c).
 */
#ifndef PH_CLUSTER_MERGE_H
#define PH_CLUSTER_MERGE_H

#include <jansson.h>

/* The rank a per-rank file is for: the number in its name after the last
 * "rank" (rank-3.json, stats.rank12.json), else the "rank" member of the
 * object or of its "cluster" object (the DSM's layout), else -1. */
int cluster_rank_of(const char *path, json_t *obj);

/* Read the per-rank JSON objects in files[0..nfiles) and write
 *   {"pagehome_cluster_stats": 1,
 *    "cluster": {...info..., "ranks_reported": K, "missing_ranks": [...],
 *                "unreadable": [...], "totals": {sums}},
 *    "ranks": [ each rank's object with "rank": R, by rank ]}
 * to out_path.  `info` (may be NULL; borrowed) gives the cluster object's
 * first members; "ranks" in it, when an integer, is the number of ranks
 * expected (missing ones are listed).  "totals" sums every number found
 * at the same place in the ranks' objects (nested objects summed member
 * by member), except the members that name or size things rather than
 * count them: rank, ranks, nranks, pid, version, pagehome_stats, anything
 * ending in _id, and whole "config" and "cluster" objects (a rank's
 * description: the DSM puts its rank, host, arena size there).  A file that is not a JSON
 * object is listed under "unreadable" with the reason.  Returns the
 * number of ranks merged, or -1 (message on stderr) when out_path cannot
 * be written. */
int cluster_merge(const char *out_path, char *const *files, int nfiles, json_t *info);

#endif
