/*
 * cluster_probe.c -- what `pagehome cluster info` starts on every rank:
 * where the ranks run and what MPI gives them.
 *
 * Built once per MPI found at build time (cluster-probe-openmpi,
 * cluster-probe-mpich; installed in LIBEXECDIR/pagehome).  Every rank
 * reports its host, pid, CPUs and network namespace; rank 0 prints
 *   ranks: N on H host(s)           and one line per rank
 *   mpi: the library's version string, the thread level it granted
 *   transport: the MPI's component settings (Open MPI: the pml, btl, osc
 *              and mtl MCA variables through MPI_T, i.e. what is asked
 *              for, not what was chosen; MPICH: the ch4 netmod), and the
 *              UCX_* variables
 *   rma: one MPI_Win_allocate window, lock_all, MPI_Fetch_and_op on rank 0
 *        and a 4 KiB MPI_Get from every rank's right neighbour, checked;
 *        the median MPI_Get+flush round trip from rank 0 to the last rank
 *   arena: the DSM's arena, from the DSM itself: the probe built with the
 *        MPI libpagehome_cluster uses starts cluster mode on every rank
 *        (ph_cluster_init over the MPI it initialised) and prints what
 *        ph_cluster_info says -- the arena's address (the same in every
 *        rank), its size, the page size, the fault mechanism of every
 *        rank (gathered through a shared allocation, which is checked) and
 *        the default placement (the tunable cluster_placement); a probe of
 *        another MPI says that the library uses the other one
 * A window that cannot be made (Open MPI over TCP without osc pt2pt or
 * ucx) is reported, not fatal.  Exit status 0 when the RMA check and (where
 * it runs) cluster mode's start passed.
 */
#include <mpi.h>
#ifdef PH_CLUSTER_LIB_LINKED
#include <pagehome.h>
#endif

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE 256
#define PAGE_BYTES 4096
#define TIMED_GETS 200

static void cpulist(char *out, size_t len)
{
    cpu_set_t set;
    size_t used = 0;
    out[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(out, len, "?");
        return;
    }
    for (int c = 0; c < CPU_SETSIZE && used + 16 < len;) {
        if (!CPU_ISSET(c, &set)) {
            c++;
            continue;
        }
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
            e++;
        used += (size_t)snprintf(out + used, len - used, e > c ? "%s%d-%d" : "%s%d",
                                 used ? "," : "", c, e);
        c = e + 1;
    }
}

/* A string control variable through MPI_T; "" when the MPI has none. */
static void cvar_string(const char *want, char *out, int len)
{
    int n = 0;
    out[0] = '\0';
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        return;
    for (int i = 0; i < n; i++) {
        char name[256], desc[8];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) !=
                MPI_SUCCESS ||
            strcmp(name, want) != 0 || dt != MPI_CHAR || bind != MPI_T_BIND_NO_OBJECT)
            continue;
        MPI_T_cvar_handle h;
        int count;
        if (MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
            return;
        /* a string's count is its buffer's size */
        char *buf = calloc((size_t)(count > 0 ? count : 0) + 4096, 1);
        if (buf && MPI_T_cvar_read(h, buf) == MPI_SUCCESS)
            snprintf(out, (size_t)len, "%s", buf);
        free(buf);
        MPI_T_cvar_handle_free(&h);
        return;
    }
}

static void transport_line(int level)
{
    char line[1024] = "";
    size_t used = 0;
    int prov;
    static const char *const ompi[] = {"pml", "btl", "osc", "mtl", NULL};
    static const char *const mpich[] = {"MPIR_CVAR_CH4_NETMOD", "MPIR_CVAR_CH4_SHM", NULL};
    /* the level MPI granted: Open MPI 4.1's MPI_T_init_thread sets the
     * MPI's thread level to the one asked (MPI_Query_thread then says
     * single, and cluster mode refuses to start) */
    if (MPI_T_init_thread(level, &prov) == MPI_SUCCESS) {
        for (const char *const *set = ompi; set; set = set == ompi ? mpich : NULL)
            for (int k = 0; set[k]; k++) {
                char v[256];
                cvar_string(set[k], v, sizeof v);
                if (v[0] && used + 8 < sizeof line)
                    used += (size_t)snprintf(line + used, sizeof line - used, "%s%s=%s",
                                             used ? " " : "", set[k], v);
            }
        MPI_T_finalize();
    }
    static const char *const ucx[] = {"UCX_TLS", "UCX_NET_DEVICES", NULL};
    for (int k = 0; ucx[k]; k++) {
        const char *v = getenv(ucx[k]);
        if (v && used + 8 < sizeof line)
            used += (size_t)snprintf(line + used, sizeof line - used, "%s%s=%s",
                                     used ? " " : "", ucx[k], v);
    }
    printf("transport: %s\n", used ? line : "(the MPI names no components)");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Returns 0 when the check passed; rank 0 prints the rma line. */
static int rma_check(int rank, int n)
{
    MPI_Win win;
    unsigned char *base;
    char err[MPI_MAX_ERROR_STRING];
    int len, rc, ok = 1;
    /* whole pages: MPICH 4.0.2 misplaces the other ranks' memory of a
     * shared-memory MPI_Win_allocate window whose size is not a multiple
     * of the page size (tests/cluster-net/README.md) */
    rc = MPI_Win_allocate(2 * PAGE_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    int all_ok = 0, mine = rc == MPI_SUCCESS;
    MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rc != MPI_SUCCESS) {
            MPI_Error_string(rc, err, &len);
        } else {
            snprintf(err, sizeof err, "failed on another rank");
        }
        if (rank == 0)
            printf("rma: MPI_Win_allocate failed: %s (Open MPI over TCP needs osc pt2pt "
                   "or ucx: pagehome cluster --transport tcp|ucx)\n", err);
        if (mine)
            MPI_Win_free(&win);
        return 1;
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(base, rank & 0xff, PAGE_BYTES);
    memset(base + PAGE_BYTES, 0, sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char page[PAGE_BYTES];
    int right = (rank + 1) % n;
    long one = 1, old = 0;
    MPI_Win_lock_all(0, win);
    rc = MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, PAGE_BYTES, MPI_SUM, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(0, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Get(page, PAGE_BYTES, MPI_BYTE, right, 0, PAGE_BYTES, MPI_BYTE, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(right, win);
    if (rc != MPI_SUCCESS)
        ok = 0;
    for (int i = 0; ok && i < PAGE_BYTES; i++)
        ok = page[i] == (unsigned char)(right & 0xff);
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    long counter = 0;
    memcpy(&counter, base + PAGE_BYTES, sizeof counter);
    if (rank == 0 && counter != n)
        ok = 0;
    double median = 0;
    if (rank == 0 && ok) {
        double t[TIMED_GETS];
        int target = n - 1;
        for (int k = 0; k < TIMED_GETS; k++) {
            double t0 = MPI_Wtime();
            MPI_Get(page, PAGE_BYTES, MPI_BYTE, target, 0, PAGE_BYTES, MPI_BYTE, win);
            MPI_Win_flush(target, win);
            t[k] = MPI_Wtime() - t0;
        }
        qsort(t, TIMED_GETS, sizeof t[0], cmp_double);
        median = t[TIMED_GETS / 2] * 1e6;
    }
    MPI_Win_unlock_all(win);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("rma: ok (MPI_Win_allocate, lock_all: MPI_Fetch_and_op on rank 0, a 4 KiB "
                   "MPI_Get from each rank's neighbour); MPI_Get+flush of 4 KiB from rank 0 "
                   "to rank %d: median %.1f us over %d\n",
                   n - 1, median, TIMED_GETS);
        else
            printf("rma: FAILED (wrong data or an MPI error in Fetch_and_op/Get/flush)\n");
    }
    MPI_Win_free(&win);
    return all ? 0 : 1;
}

#ifdef PH_CLUSTER_LIB_LINKED
/* One rank's facts, written into a shared allocation by that rank. */
typedef struct rank_facts {
    char mech[32];
    char host[64];
    unsigned long long arena;     /* the address this rank sees */
    int rank_plus_one;            /* 0 = not written */
} rank_facts;

/* Start cluster mode over the MPI this probe initialised (MPI_THREAD_
 * SERIALIZED: this thread makes no MPI call while it runs), print the
 * arena line on rank 0, stop it.  0 when it started and the ranks' facts
 * arrived through shared memory intact. */
static int arena_line(int *argc, char ***argv, int rank)
{
    fflush(stdout);
    if (ph_cluster_init(argc, argv) != 0) {
        /* collective: every rank fails alike */
        if (rank == 0)
            printf("arena: cluster mode did not start: %s\n", ph_last_error());
        fflush(stdout);
        return 1;
    }
    ph_cluster_info_t in;
    int ok = ph_cluster_info(&in) == 0;
    char placement[128] = "?";
    if (ph_config_get("cluster_placement", placement, sizeof placement) < 0)
        snprintf(placement, sizeof placement, "?");
    int n = in.nranks;
    rank = in.rank;
    rank_facts *f = ph_cluster_alloc((size_t)n * sizeof *f, NULL);
    char refused[200] = "";
    if (!f)       /* collective: every rank refuses alike (a bad default placement) */
        snprintf(refused, sizeof refused, " (refused: %s)", ph_last_error());
    if (f) {
        snprintf(f[rank].mech, sizeof f[rank].mech, "%s", in.fault_mechanism);
        snprintf(f[rank].host, sizeof f[rank].host, "%s", in.host);
        f[rank].arena = (unsigned long long)(uintptr_t)in.arena;
        f[rank].rank_plus_one = rank + 1;
    }
    int bar = ph_cluster_barrier();
    if (rank == 0) {
        /* one mechanism for all, or each rank's */
        char mechs[512] = "";
        size_t used = 0;
        int same = 1, intact = f != NULL && bar == 0;
        for (int r = 0; intact && r < n; r++) {
            intact = f[r].rank_plus_one == r + 1 &&
                     f[r].arena == (unsigned long long)(uintptr_t)in.arena;
            same = same && strcmp(f[r].mech, f[0].mech) == 0;
        }
        if (intact && same) {
            snprintf(mechs, sizeof mechs, "%s (every rank)", f[0].mech);
        } else if (intact) {
            for (int r = 0; r < n && used + 48 < sizeof mechs; r++)
                used += (size_t)snprintf(mechs + used, sizeof mechs - used, "%srank %d %s",
                                         r ? ", " : "", r, f[r].mech);
        } else if (f) {
            snprintf(mechs, sizeof mechs, "%s (rank 0; the ranks' facts did not arrive "
                     "through shared memory intact)", in.fault_mechanism);
            ok = 0;
        } else {
            snprintf(mechs, sizeof mechs, "%s (rank 0)", in.fault_mechanism);
        }
        double gib = (double)in.arena_bytes / (double)(1ull << 30);
        printf("arena: %p, %zu bytes (%.1f GiB) at the same address in every rank; page %zu "
               "bytes; faults by %s; default placement %s%s; %d thread(s) per rank\n",
               in.arena, in.arena_bytes, gib, in.page_bytes, mechs, placement, refused,
               in.threads);
        fflush(stdout);
    }
    int bar2 = ph_cluster_barrier();
    if (f && ph_cluster_free(f) != 0)
        ok = 0;
    if (ph_cluster_finalize() != 0)
        ok = 0;
    return ok && f && bar == 0 && bar2 == 0 ? 0 : 1;
}
#endif

int main(int argc, char **argv)
{
    int provided, rank, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    char me[LINE], host[MPI_MAX_PROCESSOR_NAME] = "?", cpus[128];
    int hl;
    MPI_Get_processor_name(host, &hl);
    cpulist(cpus, sizeof cpus);
    struct stat st;
    unsigned long netns = stat("/proc/self/ns/net", &st) == 0 ? (unsigned long)st.st_ino : 0;
    /* one line per rank; a host name too long for it is cut */
    int w = snprintf(me, sizeof me, "%s %ld %s %lu", host, (long)getpid(), cpus, netns);
    (void)w;
    char *all = rank == 0 ? malloc((size_t)n * LINE) : NULL;
    MPI_Gather(me, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int hosts = 0;
        for (int r = 0; r < n; r++) {
            char h[LINE];
            sscanf(all + (size_t)r * LINE, "%255s", h);
            int seen = 0;
            for (int q = 0; q < r && !seen; q++) {
                char g[LINE];
                sscanf(all + (size_t)q * LINE, "%255s", g);
                seen = strcmp(g, h) == 0;
            }
            hosts += !seen;
        }
        printf("ranks: %d on %d host(s)\n", n, hosts);
        printf("  %-5s %-20s %-8s %-10s %s\n", "rank", "host", "pid", "cpus", "netns");
        for (int r = 0; r < n; r++) {
            char h[LINE], c[128];
            long pid;
            unsigned long ns;
            if (sscanf(all + (size_t)r * LINE, "%255s %ld %127s %lu", h, &pid, c, &ns) == 4)
                printf("  %-5d %-20s %-8ld %-10s %lu\n", r, h, pid, c, ns);
        }
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int vl;
        MPI_Get_library_version(version, &vl);
        /* MPICH: "MPICH Version: V\n...MPICH Device: ch4:ucx\n..." */
        char device[64] = "";
        const char *dev = strstr(version, "Device:");
        if (dev) {
            dev += 7;
            dev += strspn(dev, " \t");
            snprintf(device, sizeof device, ", device %.*s", (int)strcspn(dev, "\n"), dev);
        }
        version[strcspn(version, "\n")] = '\0';
        for (char *p = version; *p; p++)
            if (*p == '\t')
                *p = ' ';
        static const char *const levels[] = {"single", "funneled", "serialized", "multiple"};
        int lv = provided == MPI_THREAD_MULTIPLE     ? 3
                 : provided == MPI_THREAD_SERIALIZED ? 2
                 : provided == MPI_THREAD_FUNNELED   ? 1
                                                     : 0;
        printf("mpi: %s%s (MPI_THREAD_SERIALIZED asked, %s granted)\n", version, device,
               levels[lv]);
        transport_line(provided);
        fflush(stdout);
    }
    free(all);
    int rc = rma_check(rank, n);
#ifdef PH_CLUSTER_LIB_LINKED
    if (arena_line(&argc, &argv, rank) != 0)
        rc = 1;
#else
    if (rank == 0) {
#ifdef PH_CLUSTER_LIB_BUILT
        printf("arena: libpagehome_cluster is built with the other MPI (%s): `pagehome "
               "cluster info --mpi %s` starts it\n", PH_CLUSTER_LIB_MPI, PH_CLUSTER_LIB_MPI);
#else
        printf("arena: cluster library not built\n");
#endif
        fflush(stdout);
    }
#endif
    MPI_Finalize();
    return rc;
}
