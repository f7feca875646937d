/*
 * coll-internal: rank groups, packed-data helpers, the algorithm builders and selection.
 *
 * Builders append steps to a schedule that the caller created (rmpi_nbc_new). Each one
 * leaves the current round closed when it returns, so what the caller adds next runs after
 * the builder's transfers. They work on PACKED data: count elements of r->esize bytes in
 * one contiguous buffer; the public builders (coll.h) pack and unpack user layouts.
 * Groups: an algorithm runs among the members of a coll_grp_t (the whole communicator, the
 * ranks of one node, the node leaders); member order is the reduction order.
 */
#ifndef RMPI_COLL_IMPL_H
#define RMPI_COLL_IMPL_H

#include "coll.h"

typedef struct coll_grp {
    int n, me;       /* members, my index (-1: not a member) */
    const int *rank; /* member i is communicator rank rank[i]; NULL: rank i */
} coll_grp_t;

static inline int coll_peer(const coll_grp_t *g, int i) { return g->rank ? g->rank[i] : i; }
static inline coll_grp_t coll_grp_all(const rmpi_comm_t *c) { return (coll_grp_t){c->size, c->rank, NULL}; }

typedef struct coll_red {
    MPI_Op op;
    MPI_Datatype type;
    size_t esize; /* packed bytes of one element */
    int commute;
} coll_red_t;

/* My input in packed form: sbuf itself when dt is contiguous, else packed into scratch;
 * for sbuf == MPI_IN_PLACE, rbuf packed into res (res itself when contiguous). */
const void *coll_input(rmpi_nbc_t *s, const void *sbuf, const void *rbuf, void *res, size_t count, rmpi_dtype_t *dt);
/* Where a result of count elements is built: rbuf when dt is contiguous, else scratch
 * (the caller unpacks it at the end). */
void *coll_output(rmpi_nbc_t *s, void *rbuf, size_t count, rmpi_dtype_t *dt);
/* dst = left op right on count elements; right may be clobbered, left too when it is dst. */
void coll_combine(rmpi_nbc_t *s, const coll_red_t *r, const void *left, void *right, void *dst, size_t count);
/* Largest power of two <= n. */
int coll_pof2(int n);

/* Node layout of a communicator (node of comm rank r from rmpi_topo_node_of). Leaders: one
 * per node, the lowest rank, except that root leads its own node (root -1: none). */
typedef struct coll_nodes {
    int nnodes;
    int *leaders;                            /* [nnodes] ordered by the node's lowest rank */
    int *local;                              /* ranks of my node, ascending */
    int nlocal, my_local_idx, my_leader_idx; /* me = local[my_local_idx]; my leader */
    int my_node_idx, root_node_idx;          /* indexes in leaders[] (root_node_idx 0 without root) */
    int contiguous;                          /* every node holds consecutive ranks (keeps reduction order) */
} coll_nodes_t;
void coll_nodes_get(rmpi_comm_t *c, int root, coll_nodes_t *h);
void coll_nodes_free(coll_nodes_t *h);
/* More than one node, and more than one rank on some node. */
int coll_multi_node(rmpi_comm_t *c);

/* Site layout (rmpi_topo_site_of): three tiers, the ranks of a node group (one node within
 * one site: RMPI_SITES may split a node), the group leaders of a site, the site leaders.
 * Sites and groups are numbered by their lowest rank; a leader is the lowest rank of its
 * group or site, except that root leads its own (root -1: none). Built once per
 * communicator (c->coll_site_layout, one block); a call copies only the leaders. */
typedef struct coll_sites {
    int nsites, ngroups;
    int *order;        /* [n] ranks by site, within a site by group, within a group ascending */
    int *pos;          /* [n] where rank r is in order[] */
    int *site_start;   /* [nsites + 1] offsets in order[] */
    int *group_start;  /* [ngroups + 1] offsets in order[]; a site's groups are consecutive */
    int *site_group0;  /* [nsites + 1] first group of each site */
    int *group_leader; /* [ngroups] */
    int *site_leader;  /* [nsites] */
    int *group_of;     /* [n] group of rank r */
    int *site_of;      /* [n] site of rank r (index into site_leader) */
    int *own;          /* this call's group_leader and site_leader (the rest is the communicator's) */
} coll_sites_t;
void coll_sites_get(rmpi_comm_t *c, int root, coll_sites_t *t);
void coll_sites_free(coll_sites_t *t);
/* My group in tier 0 (my node group), 1 (the group leaders of my site) or 2 (the site
 * leaders); g.me is -1 when I am not a member; *lead: the member index of its leader. */
coll_grp_t coll_sites_tier(const coll_sites_t *t, int tier, int me, int *lead);
/* One tree over tiers 1 and 0 of my site: buf from the site leader to every rank. */
void coll_site_bcast_down(rmpi_nbc_t *s, const coll_sites_t *t, int me, void *buf, size_t bytes);
/* The communicator spans several sites (and RMPI_COLL_SITES is on); cached like coll_multi_node. */
int coll_multi_site(rmpi_comm_t *c);
/* The communicator spans sites, and each site's nodes come one after the other in the order
 * of the nodes' first ranks (block placement), so the node-aware algorithms' leaders cross
 * the long links only where their halves meet. */
int coll_sites_in_runs(rmpi_comm_t *c);

/* ---- builders (packed data) ---- */
void coll_barrier_dissemination(rmpi_nbc_t *s, const coll_grp_t *g);
void coll_bcast_binomial(rmpi_nbc_t *s, const coll_grp_t *g, void *buf, size_t bytes, int root);
void coll_bcast_scatter_allgather(rmpi_nbc_t *s, const coll_grp_t *g, void *buf, size_t bytes, int root);
void coll_bcast_two_level(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes, int root);
/* The table's size rule among the members of g (binomial or scatter-allgather). */
void coll_bcast_flat(rmpi_nbc_t *s, const coll_grp_t *g, void *buf, size_t bytes, int root);

/* Result at member root in out (may equal in there); in is read only. */
void coll_reduce_binomial(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *out,
                          size_t count, int root);
void coll_reduce_rabenseifner(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *out,
                              size_t count, int root);
void coll_reduce_two_level(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, void *out, size_t count,
                           int root);
void coll_reduce_flat(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *out, size_t count,
                      int root);

/* buf holds my contribution and receives the result (ring: see below). */
void coll_allreduce_recursive_doubling(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *buf,
                                       size_t count);
void coll_allreduce_rabenseifner(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *buf, size_t count);
/* Ring: in is my vector (may be buf: then a scratch block receives). */
void coll_allreduce_ring(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *buf,
                         size_t count);
/* The ring's halves (commutative operations): after the reduce-scatter member me holds
 * block (me + 1) % n of the result in buf, which is what the allgather starts from. */
void coll_ring_reduce_scatter(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *buf,
                              size_t count);
void coll_ring_allgather(rmpi_nbc_t *s, const coll_grp_t *g, size_t es, void *buf, size_t count);
/* Block b of count elements cut into n: the first count % n blocks one element longer. */
static inline size_t coll_block_off(size_t count, int n, int b)
{
    size_t q = count / (size_t)n, extra = count % (size_t)n;
    return (size_t)b * q + ((size_t)b < extra ? (size_t)b : extra);
}
static inline size_t coll_block_len(size_t count, int n, int b)
{
    return count / (size_t)n + ((size_t)b < count % (size_t)n);
}
/* Reduce-scatter by recursive halving, then allgather (root < 0: every w gets the result)
 * or gather to member root (root's w gets it); w holds my vector and is overwritten. */
void coll_rsag(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *w, size_t count, int root);
void coll_allreduce_two_level(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, void *buf, size_t count);
void coll_allreduce_flat(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *buf, size_t count);

/* ---- site-aware (site.c): tiers of coll_sites_t, each long link crossed once per pair of
 * sites; commutative operations only (the table checks) ---- */
void coll_barrier_site(rmpi_nbc_t *s, rmpi_comm_t *c);
void coll_bcast_site(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes, int root);
/* One pipelined chain through the group leaders, each group's tree below (large vectors). */
void coll_bcast_site_chain(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes, int root);
void coll_reduce_site(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, void *out, size_t count,
                      int root);
void coll_allreduce_site(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, void *buf, size_t count);

/* ---- intercommunicators (inter.c): the public builders hand over when c->inter ----
 * root: MPI_ROOT, MPI_PROC_NULL or a remote rank; counts (reduce_scatter) are per local
 * rank. The data-movement ones are in gather_sched.h. */
rmpi_nbc_t *coll_inter_barrier(rmpi_comm_t *c);
rmpi_nbc_t *coll_inter_bcast(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root);
rmpi_nbc_t *coll_inter_reduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op,
                              int root);
rmpi_nbc_t *coll_inter_allreduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                 MPI_Op op);
rmpi_nbc_t *coll_inter_reduce_scatter(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts,
                                      rmpi_dtype_t *dt, MPI_Op op);

/* ---- selection (select.c) ---- */
enum { COLL_BARRIER, COLL_BCAST, COLL_REDUCE, COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_SCAN, COLL_NKINDS };
/* Algorithm for one call, an RMPI_COLL_<KIND>_<ALG> of the kind's knob (knobs_enum.h, never
 * ..._AUTO): the knob's choice when forced, else the table; with a non-commutative op an
 * algorithm that cannot keep rank order (forced) gives way to one that can. bytes: packed
 * size of the vector each rank contributes (reduce_scatter: the whole input). The choice
 * is noted for RMPI_REPORT (coll_note): call it once per schedule. */
int coll_select(int kind, rmpi_comm_t *c, size_t bytes, size_t count, int commute);

/* ---- what ran (report.c) ----
 * Call classes: the COLL_<KIND>s above, then the data-movement ones. */
enum {
    COLL_CALL_GATHER = COLL_NKINDS,
    COLL_CALL_SCATTER,
    COLL_CALL_ALLGATHER,
    COLL_CALL_ALLGATHERV,
    COLL_CALL_ALLTOALL,
    COLL_CALL_ALLTOALLV,
    COLL_NCALLS
};
/* One call of class call ran algorithm idx of choices ("a|b|c": a knob's choices from
 * coll_knob_choices, or a static string of the caller's; compared by address) with bytes
 * per rank. */
void coll_note(int call, const char *choices, int idx, size_t bytes);
/* While non-zero, coll_note counts nothing: a call made of another kind's call (the 2-rank
 * Gather and Scatter of one Bcast, gather.c) notes itself, not its part. */
extern int coll_note_muted;

/* One block as a message with peer on the collective context with tag (gather.c): an eager
 * send goes at once (NULL), else a request; a layout that is not contiguous goes through a
 * packed temporary (*tmp). coll_msg_end waits for it, sets *err (a truncation too) unless
 * set, unpacks what came and frees *tmp. */
rmpi_req_t *coll_msg_start(rmpi_comm_t *c, int tag, const rmpi_coll_blk_t *b, int peer, int send, char **tmp);
void coll_msg_end(rmpi_req_t *r, const rmpi_coll_blk_t *b, char *tmp, int *err);
/* The 2-rank state probes of shm.c (segment or single copy) for RMPI_REPORT: whether any
 * ran, and their counts and round trips. */
typedef struct coll_state_stats {
    unsigned long long probes, slow;        /* probes run, of which said slow */
    unsigned long long last, min, max;      /* least round trip of a probe, ns */
    unsigned long long two_cma, two_trials; /* two_choose: probes that chose single copy, trials of the other path */
    double two_seg_ns, two_cma_ns;          /* two_choose: ns per KiB of each path when last compared (0: never) */
} coll_state_stats_t;
void coll_shm_state_stats(coll_state_stats_t *s);
/* The oversubscribed Reduce's state (shm.c, rank 0's measuring) for RMPI_REPORT. */
typedef struct coll_over_stats {
    unsigned long long windows, slow, trials, picks; /* windows measured, of which slow; segment trials; word writes */
    double last, min, max;                           /* yields per MiB of a window */
    double us_mib;                                   /* the segment's time per MiB in the last window, us */
} coll_over_stats_t;
void coll_shm_over_stats(coll_over_stats_t *s);
const char *coll_knob_choices(const char *name);
/* The size rules of the table, also used inside two-level algorithms for the leaders. */
int coll_bcast_large(int n, size_t bytes);
int coll_reduce_large(int n, size_t count, size_t bytes);
int coll_allreduce_large(int n, size_t count, size_t bytes);

/* ---- shared-memory calls inside schedules (shm.c, nbc.c) ----
 * A non-blocking or persistent call in the communicator's segment is a schedule of one
 * step (rmpi_nbc_shm, which takes ownership of op). At every start of the step's round
 * the engine starts op (coll_shm_op_start: input packed, op queued behind the
 * communicator's earlier ones) and the round ends when coll_shm_op_test says it finished
 * (err: 0 or MPI_ERR_TRUNCATE); test advances the queue without blocking and sets *moved
 * when an op took a step (progress that keeps a wait from yielding the CPU). */
typedef struct rmpi_coll_shm_op coll_shm_op_t;
void rmpi_nbc_shm(rmpi_nbc_t *s, coll_shm_op_t *op);
void coll_shm_op_start(coll_shm_op_t *op);
int coll_shm_op_test(coll_shm_op_t *op, int *err, int *moved);
void coll_shm_op_free(coll_shm_op_t *op);

#endif
