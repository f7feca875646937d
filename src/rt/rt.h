/*
 * rt: run time services under every other layer except util.
 *   - knob table (knobs.def): parsed once by rmpi_knobs_init(), read through rmpi_knobs.NAME
 *     (typed: an ENUM holds RMPI_<NAME>_<CHOICE>).
 *     No getenv outside this layer.
 *   - logging: rmpi_log/rmpi_fatal; fatal errors end the whole job through the process manager.
 *   - process-manager client (PMI-1 wire protocol, as served by RailMPI's mpiexec and by
 *     MPICH's hydra; PMI-2 wire protocol, as served by Slurm's srun --mpi=pmi2; PMIx through
 *     libpmix): rank, size, key-value exchange, fence, abort. Without any of them in the
 *     environment the process is a singleton of size 1.
 *   - topology: node id of every rank (ranks with the same host name share a node).
 * Threading: called with the library lock held (or before threads exist). Not reentrant.
 */
#ifndef RMPI_RT_H
#define RMPI_RT_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

/* ---- knobs ---- */
#include "knobs_enum.h" /* enum rmpi_knob_<name> of each ENUM knob (tools/gen_knobs.py) */

#define RMPI_KTYPE_BOOL int
#define RMPI_KTYPE_INT long long
#define RMPI_KTYPE_COUNT long long /* 0: auto */
#define RMPI_KTYPE_SIZE long long
#define RMPI_KTYPE_STR const char *
#define RMPI_KTYPE_ENUM int /* RMPI_<NAME>_<CHOICE> of knobs_enum.h */
#define RMPI_KTYPE_FLOAT double
struct rmpi_knobs {
#define KNOB(name, type, dflt, layer, choices, doc) RMPI_KTYPE_##type name;
#include "knobs.def"
#undef KNOB
};
extern struct rmpi_knobs rmpi_knobs;

typedef enum {
    RMPI_KNOB_BOOL,
    RMPI_KNOB_INT,
    RMPI_KNOB_COUNT, /* "auto" (stored as 0) or a count >= 1 */
    RMPI_KNOB_FLOAT,
    RMPI_KNOB_SIZE,
    RMPI_KNOB_STR,
    RMPI_KNOB_ENUM
} rmpi_knob_type_t;
/* One row of the table, for whoever walks it (rmpi_info, docs/knobs.md, an MPI_T layer). */
typedef struct rmpi_knob_desc {
    const char *name; /* without RMPI_ */
    rmpi_knob_type_t type;
    const char *type_name, *dflt, *layer;
    const char *choices; /* ENUM: "a|b|c", index = stored value; others: "" */
    const char *doc;
    size_t offset; /* of the typed value in struct rmpi_knobs */
} rmpi_knob_desc_t;

/* Parse the whole RMPI_* environment into rmpi_knobs, once (later calls return at once).
 * Warns on unknown RMPI_ variables; a value that does not parse as its type ends the
 * process with "RMPI_<NAME>=<value>: expected ..." (rmpi_fatal). */
void rmpi_knobs_init(void);
/* Row i of the table (0 <= i < rmpi_knobs_count()). */
size_t rmpi_knobs_count(void);
const rmpi_knob_desc_t *rmpi_knob_at(size_t i);
/* The text a knob's value came from (the environment's, else the default); NULL for an
 * unknown name. Valid after rmpi_knobs_init. */
const char *rmpi_knob_text(const char *name);
/* Scoped size knob: "N" or "scope:N,scope:N"; returns the value for scope or dflt. */
long long rmpi_knob_scoped_size(const char *knob, const char *value, const char *scope, long long dflt);
/* Whether the user set RMPI_<knob> (automatic tuning leaves such a knob alone). */
int rmpi_knob_given(const char *knob);
/* Print the knob table: fmt 0 = text (current values), 1 = markdown (defaults). */
/* Print the knob table: 0 = text (current values), 1 = markdown (defaults). */
void rmpi_knobs_print(void *file, int markdown);
/* Environment variable outside the RMPI_ namespace (launcher protocol, and what libraries
 * below us read: libfabric's FI_*, glibc's MALLOC_*). */
const char *rmpi_rt_env(const char *name);
/* Set a variable read by a library below us (libfabric's FI_*) unless the user set it. */
void rmpi_rt_setenv_default(const char *name, const char *value);

/* ---- logging ---- */
void rmpi_log_set_rank(int rank);
void rmpi_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rmpi_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "[rmpi rank N] message" and end the whole job (PMI abort, then exit). */
_Noreturn void rmpi_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- process manager (PMI-1, PMI-2 or PMIx; src/rt/README.md says which when) ---- */
enum { RMPI_PM_SINGLETON, RMPI_PM_PMI1, RMPI_PM_PMI2, RMPI_PM_PMIX };
typedef struct rmpi_pm_info {
    int rank, size, appnum;
    int singleton; /* no process manager: size 1 */
    int kind;      /* RMPI_PM_* */
    char kvsname[256];
} rmpi_pm_info_t;

int rmpi_pmi_init(rmpi_pm_info_t *info);
int rmpi_pmi_put(const char *key, const char *value);
int rmpi_pmi_fence(void);
/* Fetch another rank's value (after a fence). Returns 0, or -1 if absent. */
int rmpi_pmi_get(const char *key, char *value, size_t len);
int rmpi_pmi_finalize(void);
/* Dynamic processes (hydra's PMI-1 additions). Spawn count commands as one new world
 * whose key-value space holds the npre preput pairs; 0, or -1 (message printed). */
typedef struct rmpi_pmi_spawn_cmd {
    const char *cmd;
    char **argv; /* NULL-terminated, or NULL */
    int maxprocs;
    int ninfo;
    const char **ikeys, **ivals;
} rmpi_pmi_spawn_cmd_t;
int rmpi_pmi_spawn(int count, const rmpi_pmi_spawn_cmd_t *cmds, int npre, const char *const *pkeys,
                   const char *const *pvals);
/* Name service: 0 done, 1 refused (already published / not found), -1 no process manager
 * or not representable on the wire (spaces, '='). */
int rmpi_pmi_publish(const char *service, const char *port);
int rmpi_pmi_unpublish(const char *service);
int rmpi_pmi_lookup(const char *service, char *port, size_t len);
/* The job key every connection of the job proves (docs/wire/auth.md): from the launcher
 * (RAILMPI_JOB_KEY, RailMPI's mpiexec), else made by rank 0 and shared through the
 * key-value space in rmpi_topo_init (launchers that hand out none, such as hydra; as safe
 * as that launcher's PMI port), else random for a singleton. NULL before rmpi_topo_init. */
const uint8_t *rmpi_rt_job_key(void);
int rmpi_rt_set_job_key(const uint8_t key[RMPI_AUTH_KEY_BYTES]);
/* Ask the process manager to end the job; does not return. */
_Noreturn void rmpi_pmi_abort(int code, const char *msg);
/* fn runs in rmpi_pmi_abort (and so rmpi_fatal) before the process ends, to remove what
 * would outlive it (shared-memory names). At most 8; fn must not call rmpi_fatal. */
void rmpi_rt_at_abort(void (*fn)(void));
/* Called from the progress engine's idle path: at most every 100 ms, whether the process
 * manager's connection is still open; if mpiexec is gone the rank ends (rmpi_fatal), so a
 * killed launcher leaves no rank spinning. Costs a clock read otherwise. */
void rmpi_pmi_watch(void);

/* ---- topology ---- */
/* Exchange host names through PMI (one put, one fence, size gets) and number nodes. */
int rmpi_topo_init(const rmpi_pm_info_t *pm);
/* Ranks beyond the world (dynamic peers) each count as a node of their own. */
int rmpi_topo_node_of(int rank);
int rmpi_topo_my_node(void);
int rmpi_topo_local_rank(int rank); /* index of rank among ranks of its node */
int rmpi_topo_local_size(int node);
const char *rmpi_topo_hostname(void);
/* The prefix of this job's shared-memory segment names (rmpi_shm_job_prefix of the PM's
 * job id): mpiexec removes by it what a killed rank left in /dev/shm. "" before init. */
const char *rmpi_topo_shm_prefix(void);
/* Hash of this node's host name and boot id (tells nodes apart across jobs). */
uint32_t rmpi_topo_node_tag(void);
/* CPUs the ranks of this node may run on together (the union of their affinity masks at
 * MPI_Init, exchanged with the host names); fewer than its ranks: oversubscribed. */
int rmpi_topo_node_cpus(void);
/* More ranks on this machine's kernel (boot id) than CPUs their masks give them together:
 * a rank that spins holds a CPU the rank it waits for needs. Counted per kernel, not per
 * host name, so namespaces and fake nodes of one machine count together. */
int rmpi_topo_oversubscribed(void);
/* The ranks on this kernel and the CPUs of their masks together (RMPI_REPORT). */
void rmpi_topo_kernel_share(int *ranks, int *cpus);
/* What RMPI_BIND did to this rank ("bound to core 1 (cpus 1)", "left as Slurm bound it"),
 * or without it the mask it started with (mpiexec binds local ranks itself); for RMPI_REPORT. */
const char *rmpi_topo_binding(void);
void rmpi_topo_finalize(void);

/* ---- cross-memory attach (cma.c) ----
 * Copy len bytes between local memory and address raddr of process pid on this node
 * (write: local -> remote) with process_vm_readv/writev. Returns 0; RMPI_CMA_REFUSED when
 * RMPI_SHM_CMA=off or the kernel refuses the call itself (ptrace policy, seccomp, no CMA:
 * copy another way; with RMPI_SHM_CMA=on a refusal ends the job, naming rank `peer`); or
 * -errno for a bad address. Used by net/shm's RDMA and coll's single-copy collectives. */
#define RMPI_CMA_REFUSED 1
int rmpi_cma_copy(int pid, void *local, size_t len, uint64_t raddr, int write, int peer);

/* ---- sites (site.c; seed infiniband-wan 3.4: clusters joined by long links) ----
 * A site is a set of ranks whose links to each other are short; collectives that span
 * sites cross each long link once (coll). The map comes from RMPI_SITES (rmpi_topo_init)
 * or from the round trips between nodes measured at MPI_Init (core_sites.c, which hands
 * the result to rmpi_topo_sites_set). Ranks beyond the world are a site each. */
/* RMPI_SITES syntax: sites separated by ':' or ';', a site a comma list of world ranks,
 * ranges A-B and host names (whole, or a prefix ending in '*'; hosts may be NULL).
 * Returns the number of sites and site_of[nranks] (numbered in the order written), or -1
 * with a sentence in msg when every rank is not in exactly one site. */
int rmpi_site_parse(const char *spec, int nranks, const char *const *hosts, int *site_of, char *msg, size_t len);
/* Single linkage on rtt[n * n] (ns; the smaller of i->j and j->i, 0 or NaN: unmeasured),
 * round trips below floor counted as floor: the tree edges sorted, with floor in front,
 * are cut at the largest ratio between neighbours when it is at least gap. Returns the
 * number of sites and site_of[n] (numbered in order of their lowest item). */
int rmpi_site_cluster(const double *rtt, int n, double floor, double gap, int *site_of);
/* Whether the probe should measure a pair again (core_sites.c): its smallest round trip so
 * far (rtt, ns) is at least far, the distance that could make its nodes two sites, and the
 * last batch of rounds does not agree on it: its largest round (hi) is more than 1.25 times
 * its smallest (lo), or its minimum fell below 0.9 times the one before the batch (prev;
 * 0: first batch). A long link's rounds are within a few percent of each other; on a
 * loaded host a ping also holds the time until the peer is scheduled, which varies. */
int rmpi_site_doubt(double rtt, double lo, double hi, double prev, double far);
/* 1 when items with node[i] and site[i] (i < n, in order) have their sites in runs: taking
 * each node once, at its first item, no site comes back after another site's node (block
 * placement); 0 when they interleave (also for a node listed under two sites). */
int rmpi_site_runs(const int *node, const int *site, int n);
/* site_of[n] in RMPI_SITES syntax with ranges ("0-1,4:2-3"); returns the length it needed. */
size_t rmpi_site_format(const int *site_of, int n, char *buf, size_t len);
int rmpi_topo_nnodes(void);
int rmpi_topo_site_of(int rank);
int rmpi_topo_nsites(void);
/* The map still has to be measured: RMPI_SITES=auto, RMPI_WAN_TUNE on, several nodes. */
int rmpi_topo_sites_pending(void);
/* The measured round trips between nodes (rtt[nnodes * nnodes], ns) give the map by
 * rmpi_site_cluster with RMPI_SITE_RTT_MIN and RMPI_SITE_GAP; every rank must pass the
 * same matrix. Logs the map at RMPI_DEBUG=1 (rank 0). */
void rmpi_topo_sites_measured(const double *rtt);

#endif
