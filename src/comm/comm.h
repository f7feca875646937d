/*
 * comm: communicators, groups, topologies, attributes and info objects.
 *
 * A communicator is a context id pair (ctx for point-to-point, ctx+1 for collectives), a
 * rank map and MPI attributes (error handler, name, info hints, cached attributes,
 * topology). Context ids are agreed among members at creation (the maximum of every
 * member's next free id, confirmed free by all, agree.c), so they are unique wherever two
 * members meet.
 *
 * Intercommunicators: `world` maps *remote* ranks (the ranks that point-to-point
 * destinations and sources name) and `rsize` is the remote group's size; `rank`/`size`
 * and `lworld` describe the local group. The header of a message carries the sender's
 * rank in its local group, which is what the receiver names as source. For an
 * intracommunicator rsize == size and lworld == world, so point-to-point code reads
 * `world`/`rsize` and is correct for both kinds. An intercommunicator also holds an
 * internal intracommunicator over its local group (`local`, context ctx+2) for the
 * agreement steps of dup and merge; its context ids are reserved with the intercomm's.
 * Collectives on intercommunicators (coll/inter.c) run their steps inside one group on
 * `local`'s collective context (ctx+3) with NBC tags, which this layer never uses.
 *
 * Tags on a collective context (ctx+1) that this layer uses: 0x7ff0..0x7fff,
 * RMPI_COMM_TAG_IDUP | (sequence number) for each MPI_Comm_idup of the communicator, and
 * RMPI_COMM_TAG_USER | (user tag) for Comm_create_group and Intercomm_create.
 *
 * Who calls: api, coll. Ownership: refcounted; MPI_COMM_WORLD and MPI_COMM_SELF are static;
 * groups and topologies are refcounted and immutable once built.
 * Threading: caller holds the library lock; collective creation calls block in the core
 * (except MPI_Comm_idup's agreement, which a progress hook runs).
 * The attribute store (attr.c) runs user callbacks: call it without the lock.
 */
#ifndef RMPI_COMM_H
#define RMPI_COMM_H

#include <mpi.h>

#include "../core/core.h"

#define RMPI_COMM_MAGIC 0x434f4d4du
#define RMPI_GROUP_MAGIC 0x47525550u
#define RMPI_INFO_MAGIC 0x494e464fu
#define RMPI_COMM_TAG_USER 0x40000000
#define RMPI_COMM_TAG_IDUP 0x00800000 /* up to the schedules' bit 24 (coll/coll.h, RMPI_NBC_TAG) */

typedef struct rmpi_comm_topo rmpi_comm_topo_t;
typedef struct rmpi_info rmpi_info_t;

typedef struct rmpi_comm {
    uint32_t magic;
    uint32_t ctx;   /* point-to-point; ctx + 1 carries collectives */
    int rank, size; /* in the local group */
    int *world;     /* destination/source rank -> world rank (remote group of an intercomm);
                              NULL for MPI_COMM_WORLD */
    int rsize;      /* ranks valid as destination/source: size, or the remote group's size */
    int inter;      /* intercommunicator */
    int refcount;
    int predefined;
    MPI_Comm handle;
    MPI_Errhandler errh;
    int *lworld;             /* local rank -> world rank (== world for intracommunicators) */
    struct rmpi_comm *local; /* intercomm: internal intracomm over the local group */
    rmpi_comm_topo_t *topo;  /* Cartesian, graph or distributed graph; NULL when none */
    void *attrs;             /* cached attributes (attr.c) */
    rmpi_info_t *info;       /* hints set by the user; NULL when none */
    char name[MPI_MAX_OBJECT_NAME];
    uint32_t coll_seq;     /* collectives started on this communicator (coll/coll.h schedule tags) */
    int8_t coll_nodes;     /* coll/common.c's cache of its node layout: 0 not known yet,
                              1 one level, 2 several nodes with several ranks on one */
    int8_t coll_sites;     /* coll/site.c's cache: 0 not known yet, 1 one site, 2 several interleaved, 3 in runs */
    int8_t coll_shm_state; /* coll/shm.c: 0 not tried yet, 1 segment mapped, 2 not possible */
    int8_t coll_shm_cma;   /* coll/shm.c: 1 when every member can read every other's memory (CMA) */
    int8_t coll_shm_over;  /* coll/shm.c: 1 when the node has more ranks than CPUs and only the kinds
                              whose members never wait on each other use the segment */
    void *coll_shm;        /* coll/shm.c's node segment (unmapped with the communicator) */
    size_t coll_shm_len;
    uint64_t coll_shm_step; /* coll/shm.c's steps on that segment (equal on every member) */
    uint64_t coll_shm_free; /* coll/shm.c: every member is known done with the steps up to this */
    uint64_t coll_shm_deep; /* coll/shm.c: the last step in the ring of all step buffers (Bcast) */
    uint64_t coll_shm_own;  /* coll/shm.c: the last step that wrote a rank's own step buffers */
    uint64_t coll_shm_pair; /* coll/shm.c: the last step that took two step buffers (Allgather/Alltoall) */
    void *coll_shm_queue;   /* coll/shm.c: non-blocking calls in the segment not finished yet, oldest first */
    uint64_t coll_shm_cw, coll_shm_cr; /* coll/shm.c, 2 ranks: the cells written into this rank's cell
                                          ring, and read from the other's (equal to what it wrote) */
    uint64_t coll_shm_lw, coll_shm_lr; /* coll/shm.c, 2 ranks: the same in data words of the line frames */
    /* coll/shm.c's 2-rank state probes: the step from which the next one is due (equal on
     * every member: rank 0 publishes it in each probe), rank 0's step and time of the last,
     * the probes run (equal everywhere), the last one's state (1 slow; equal everywhere) */
    uint64_t coll_shm_rt_at, coll_shm_rt_step, coll_shm_rt_ns;
    uint64_t coll_shm_rt_n;
    int8_t coll_shm_slow;
    int8_t coll_shm_nb_state; /* coll/shm.c: a non-blocking call chose by the state since the last probe */
    int8_t coll_shm_two_cma;  /* coll/shm.c two_choose: 2 ranks, single copy (1) or the segment (0) */
    /* coll/shm.c, the oversubscribed node's state (rank 0): its measuring windows, one per
     * kind of call it roots through the segment (Reduce, Bcast, Allreduce: bytes, yields of
     * its waits), and when it last chose slow or tried the segment */
    uint64_t coll_shm_win_bytes[3], coll_shm_win_yields[3], coll_shm_pick_ns;
    uint64_t coll_shm_yields_in; /* rank 0: the others' yields seen; the others: theirs in measured calls */
    void *coll_shm_scratch;      /* coll/shm.c: the oversubscribed single-copy Reduce's root scratch (grows) */
    size_t coll_shm_scratch_len;
    void *coll_site_layout;   /* coll/site.c's tier layout (one block, freed with the communicator) */
    struct rmpi_bpool *bsend; /* buffer of MPI_Comm_attach_buffer (core/core_bsend.c); NULL: none */
    uint32_t idup_seq;        /* MPI_Comm_idup calls on this communicator (their tags) */
    rmpi_req_t *pending;      /* made by MPI_Comm_idup: the request completed with the agreement
                              (the object is not a live handle until then) */
    /* coll/shm.c two_choose (rank 0), at the end so the fields the small calls read keep
     * their cache lines: probes since its last trial, its measured calls per path */
    uint32_t coll_shm_two_probes;
    uint64_t coll_shm_two_ns[2], coll_shm_two_bytes[2];
} rmpi_comm_t;

extern rmpi_comm_t rmpi_comm_world, rmpi_comm_self;
/* Communicators, groups and info objects handed out (util.h address sets): a handle is
 * looked up before it is read, so a made-up one is rejected, never dereferenced. */
extern rmpi_addrset_t rmpi_comm_live, rmpi_group_live, rmpi_info_live;
/* Communicators of a pending MPI_Comm_idup: not live (no communication, no free) until the
 * request completes, but their error handler may be set and read at once, as MPICH and
 * Open MPI allow and mpi4py's Comm.Idup does right after the call. */
extern rmpi_addrset_t rmpi_comm_pending;

int rmpi_comm_init(int rank, int size);
void rmpi_comm_finalize(void);

/* Object of a handle, or NULL when the handle is not a live communicator. */
static inline rmpi_comm_t *rmpi_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD)
        return &rmpi_comm_world;
    if (h == MPI_COMM_SELF)
        return &rmpi_comm_self;
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&rmpi_comm_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_comm_t *c = (rmpi_comm_t *)h;
    return c->magic == RMPI_COMM_MAGIC ? c : NULL;
}

/* rmpi_comm_get, or a communicator whose MPI_Comm_idup is still pending (error handlers). */
static inline rmpi_comm_t *rmpi_comm_get_or_pending(MPI_Comm h)
{
    rmpi_comm_t *c = rmpi_comm_get(h);
    if (c || (uintptr_t)h < 4096 || !rmpi_addrset_has(&rmpi_comm_pending, h, rmpi_thread_multiple))
        return c;
    c = (rmpi_comm_t *)h;
    return c->magic == RMPI_COMM_MAGIC ? c : NULL;
}

/* World rank of a destination/source rank (remote group of an intercommunicator). */
static inline int rmpi_comm_world_rank(const rmpi_comm_t *c, int r) { return c->world ? c->world[r] : r; }
/* World rank of a rank of the local group. */
static inline int rmpi_comm_local_world_rank(const rmpi_comm_t *c, int r) { return c->lworld ? c->lworld[r] : r; }
/* Size of the group that destination and source ranks refer to. */
static inline int rmpi_comm_remote_size(const rmpi_comm_t *c) { return c->rsize; }

/* ---- creation (collective over the parent unless said otherwise) ---- */
/* A new communicator with the same members (and topology) and a fresh context. */
int rmpi_comm_dup(rmpi_comm_t *parent, rmpi_comm_t **out);
/* MPI_Comm_idup (intra- or intercommunicator), in two steps so that the caller can copy
 * attributes in between: the object (context not agreed yet), then the non-blocking
 * agreement, which takes the object out of the live handles until it completes, then sets
 * its context and completes req. n == NULL (the caller gave up on the object) still takes
 * part in the agreement, for the other members. */
rmpi_comm_t *rmpi_comm_idup_object(rmpi_comm_t *parent);
void rmpi_comm_idup_start(rmpi_comm_t *parent, rmpi_comm_t *n, rmpi_req_t *req);
/* MPI_Comm_split semantics (color MPI_UNDEFINED: *out = NULL). Intracommunicators only
 * (rmpi_comm_inter_split for intercommunicators). */
int rmpi_comm_split(rmpi_comm_t *parent, int color, int key, rmpi_comm_t **out);
/* Collective over the members of `world` (n world ranks, ordered; the caller is one of
 * them) only, which must all be members of parent: a communicator over exactly them.
 * tag separates concurrent calls on the same parent (MPI_Comm_create_group). */
int rmpi_comm_create_group(rmpi_comm_t *parent, const int *world, int n, int tag, rmpi_comm_t **out);
/* MPI_Intercomm_create: local_leader is a rank of local, remote_leader a rank of peer
 * (significant at the leader only). */
int rmpi_comm_intercomm_create(rmpi_comm_t *local, int local_leader, rmpi_comm_t *peer, int remote_leader, int tag,
                               rmpi_comm_t **out);
/* MPI_Intercomm_merge: the group passing high = 0 first (ties: the group whose leader has
 * the lower world rank). */
int rmpi_comm_intercomm_merge(rmpi_comm_t *inter, int high, rmpi_comm_t **out);
/* MPI_Comm_create on an intercommunicator: `world` is the caller's local subgroup (n world
 * ranks, n == 0 when the caller is not in it). *out = NULL when either side is empty. */
int rmpi_comm_inter_create(rmpi_comm_t *inter, const int *world, int n, rmpi_comm_t **out);
/* MPI_Comm_split on an intercommunicator: the local members of a colour face the remote
 * members of the same colour; *out = NULL when either is empty or color is MPI_UNDEFINED. */
int rmpi_comm_inter_split(rmpi_comm_t *inter, int color, int key, rmpi_comm_t **out);
void rmpi_comm_release(rmpi_comm_t *c);
/* MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL (groups and, for intercomms, remote groups). */
int rmpi_comm_compare(const rmpi_comm_t *a, const rmpi_comm_t *b);

/* Blocking point-to-point on a communicator's collective context (for coll and comm). */
int rmpi_comm_coll_send(rmpi_comm_t *c, const void *buf, size_t len, int dest, int tag);
int rmpi_comm_coll_recv(rmpi_comm_t *c, void *buf, size_t len, int src, int tag);
int rmpi_comm_coll_sendrecv(rmpi_comm_t *c, const void *sbuf, size_t slen, int dest, void *rbuf, size_t rlen, int src,
                            int tag);
/* Broadcast from local rank root over an intracommunicator's collective context. */
int rmpi_comm_bcast_small(rmpi_comm_t *c, void *buf, size_t len, int root);

/* ---- node segments (nodeseg.c) ----
 * rmpi_comm_node_of: node of local rank r (rt's node table), -1 for a process of another
 * job (it shares memory with nobody).
 * rmpi_comm_node_segment: collective over intracommunicator c: every rank gets `len`
 * bytes of shared memory (zeroed) that the ranks of its node share. The node's lowest rank
 * creates the segment with its pages reserved (posix_fallocate); it is unlinked once every
 * rank has mapped it. Talks on c's collective context with tags tag and tag + 1.
 * populate: map every page now (no page faults at first use). Returns 0, or MPI_ERR_NO_MEM
 * on every rank when any rank failed (warned, with `what` saying what happens instead). */
int rmpi_comm_node_of(const rmpi_comm_t *c, int r);
int rmpi_comm_node_segment(rmpi_comm_t *c, size_t len, int tag, const char *what, int populate, void **out);
#define RMPI_COMM_TAG_NODESEG 0x7ffa /* and 0x7ffb: rmpi_comm_node_segment for coll/shm.c */

/* ---- dynamic processes (dpm.c; wire: docs/wire/dpm.md) ---- */
/* MPI_Open_port: a listening socket of this process; its name (< MPI_MAX_PORT_NAME) to name. */
int rmpi_dpm_open_port(char *name);
/* MPI_Close_port: MPI_ERR_PORT when name is not a port open in this process. */
int rmpi_dpm_close_port(const char *name);
void rmpi_dpm_finalize(void);
/* Collective over intracommunicator c: MPI_Comm_accept (accept = 1; port open at root) or
 * MPI_Comm_connect. port is significant at root only. Returns the same error class on
 * every member (MPI_ERR_PORT: not a port / nobody accepted within RMPI_PORT_TIMEOUT). */
int rmpi_dpm_connect_accept(const char *port, int root, rmpi_comm_t *c, int accept, rmpi_comm_t **out);
/* MPI_Comm_join over a connected socket (both ends call it). */
int rmpi_dpm_join(int fd, rmpi_comm_t **out);

/* ---- groups (group.c): ordered sets of world ranks (and dynamic peers: indices past
 * the world's size, see core.h rmpi_core_peer_add) ---- */
typedef struct rmpi_group {
    uint32_t magic;
    int refcount; /* MPI_GROUP_EMPTY is static (refcount ignored) */
    int size;
    int rank;   /* this process's rank in the group, or MPI_UNDEFINED */
    int *world; /* group rank -> world rank */
} rmpi_group_t;

extern rmpi_group_t rmpi_group_empty;

static inline rmpi_group_t *rmpi_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &rmpi_group_empty;
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&rmpi_group_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_group_t *g = (rmpi_group_t *)h;
    return g->magic == RMPI_GROUP_MAGIC ? g : NULL;
}
static inline MPI_Group rmpi_group_handle(rmpi_group_t *g)
{
    return g == &rmpi_group_empty ? MPI_GROUP_EMPTY : (MPI_Group)g;
}

/* A group over n world ranks (copied); n == 0 gives rmpi_group_empty. `me` is this
 * process's world rank (the group's rank is computed from it). */
rmpi_group_t *rmpi_group_new(const int *world, int n, int me);
/* Local (or remote) group of a communicator. */
rmpi_group_t *rmpi_group_of_comm(const rmpi_comm_t *c, int remote);
void rmpi_group_release(rmpi_group_t *g);
/* Rank of world rank w in g, or MPI_UNDEFINED. */
int rmpi_group_rank_of(const rmpi_group_t *g, int w);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int rmpi_group_compare(const rmpi_group_t *a, const rmpi_group_t *b);
void rmpi_group_translate(const rmpi_group_t *a, int n, const int *ranks, const rmpi_group_t *b, int *out);
/* Set algebra in the standard's order (first group's order, then the second's). */
rmpi_group_t *rmpi_group_union(const rmpi_group_t *a, const rmpi_group_t *b, int me);
rmpi_group_t *rmpi_group_intersection(const rmpi_group_t *a, const rmpi_group_t *b, int me);
rmpi_group_t *rmpi_group_difference(const rmpi_group_t *a, const rmpi_group_t *b, int me);
/* incl/excl/range_*: return MPI_SUCCESS or MPI_ERR_RANK (out of range, duplicate) /
 * MPI_ERR_ARG (zero stride, negative n). */
int rmpi_group_incl(const rmpi_group_t *g, int n, const int *ranks, int me, rmpi_group_t **out);
int rmpi_group_excl(const rmpi_group_t *g, int n, const int *ranks, int me, rmpi_group_t **out);
int rmpi_group_range_incl(const rmpi_group_t *g, int n, const int (*ranges)[3], int me, rmpi_group_t **out);
int rmpi_group_range_excl(const rmpi_group_t *g, int n, const int (*ranges)[3], int me, rmpi_group_t **out);

/* ---- topologies (topo.c) ---- */
struct rmpi_comm_topo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int refcount;
    int ndims, *dims, *periods, *coords; /* cart: coords of this process */
    int nnodes, nedges, *index, *edges;  /* graph */
    int weighted;                        /* dist graph: weights given */
    int indeg, outdeg;                   /* neighbours of this process, in the standard's order */
    int *srcs, *dsts, *srcw, *dstw;
};

/* A Cartesian topology for the process of rank `rank` (rank < prod(dims)). */
rmpi_comm_topo_t *rmpi_comm_cart(int ndims, const int *dims, const int *periods, int rank);
rmpi_comm_topo_t *rmpi_comm_graph(int nnodes, const int *index, const int *edges, int rank);
/* Distributed graph from this process's neighbour lists (weights NULL when unweighted). */
rmpi_comm_topo_t *rmpi_comm_dist_graph(int indeg, const int *srcs, const int *srcw, int outdeg, const int *dsts,
                                       const int *dstw, int weighted);
/* Collective over c: MPI_Dist_graph_create's edges (n sources with degs[i] destinations
 * each, weights w when weighted) turned into this process's neighbour lists. */
int rmpi_comm_dist_graph_build(rmpi_comm_t *c, int n, const int *srcs, const int *degs, const int *dsts, const int *w,
                               int weighted, rmpi_comm_topo_t **out);
void rmpi_comm_topo_release(rmpi_comm_topo_t *t);
/* Cartesian helpers: rank of coords (periodic dims wrap; -1 when out of range), coords of rank. */
int rmpi_comm_cart_rank(const rmpi_comm_topo_t *t, const int *coords);
void rmpi_comm_cart_coords(const rmpi_comm_topo_t *t, int rank, int *coords);
/* MPI_Cart_shift for a process at coords. */
void rmpi_comm_cart_shift(const rmpi_comm_topo_t *t, const int *coords, int dir, int disp, int *src, int *dst);
/* MPI_Dims_create: MPI_SUCCESS or MPI_ERR_DIMS. Free dims get a balanced factorisation
 * (largest minus smallest as small as possible), in non-increasing order. */
int rmpi_dims_create(int nnodes, int ndims, int *dims);

/* Neighbours of a communicator with a topology, in the standard's order (cart: for each
 * dimension, -1 then +1 shift, MPI_PROC_NULL where off the grid and not periodic; graph:
 * the adjacency list, in=out; dist graph: sources then destinations as given). Returns 0,
 * or MPI_ERR_TOPOLOGY when c has none. */
int rmpi_comm_neighbors(rmpi_comm_t *c, int *indegree, const int **sources, int *outdegree, const int **destinations);

/* ---- attributes (attr.c): keyvals and a per-object attribute list ---- */
enum { RMPI_ATTR_COMM = 1, RMPI_ATTR_TYPE, RMPI_ATTR_WIN };
typedef int (*rmpi_attr_copy_fn)(void *handle, int keyval, void *extra, void *in, void *out, int *flag);
typedef int (*rmpi_attr_delete_fn)(void *handle, int keyval, void *val, void *extra);
/* Copy/delete functions of the object kind's signature, cast; (fn)0 and (fn)1 are the
 * standard's NULL_COPY/NULL_DELETE and DUP_FN. */
int rmpi_keyval_create(int kind, rmpi_attr_copy_fn copy, rmpi_attr_delete_fn del, void *extra);
/* MPI_ERR_KEYVAL when keyval is not a live keyval of that kind. */
int rmpi_keyval_free(int kind, int keyval);
int rmpi_keyval_valid(int kind, int keyval);
/* Set (deleting the old value through the callback first), get, delete one attribute.
 * The errors are the callbacks' return codes or MPI_ERR_KEYVAL. */
int rmpi_attr_set(void **attrs, int kind, void *handle, int keyval, void *val);
int rmpi_attr_get(void *attrs, int keyval, void **val); /* 1 when set */
int rmpi_attr_delete(void **attrs, int kind, void *handle, int keyval);
/* On dup: copy every attribute through its copy callback, in the order they were set. */
int rmpi_attr_copy(void *attrs, int kind, void *old_handle, void **new_attrs);
/* On free: delete every attribute, the last set first. */
int rmpi_attr_delete_all(void **attrs, int kind, void *handle);

/* ---- info objects (info.c): ordered key -> value lists ---- */
struct rmpi_info {
    uint32_t magic;
    int n, cap;
    char **keys, **vals;
};
extern rmpi_info_t rmpi_info_env;
static inline rmpi_info_t *rmpi_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV)
        return &rmpi_info_env;
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&rmpi_info_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_info_t *i = (rmpi_info_t *)h;
    return i->magic == RMPI_INFO_MAGIC ? i : NULL;
}
rmpi_info_t *rmpi_info_new(void);
rmpi_info_t *rmpi_info_dup(const rmpi_info_t *i); /* NULL -> empty */
void rmpi_info_free(rmpi_info_t *i);
void rmpi_info_set(rmpi_info_t *i, const char *key, const char *val);
const char *rmpi_info_lookup(const rmpi_info_t *i, const char *key);
int rmpi_info_delete(rmpi_info_t *i, const char *key); /* 1 when it was there */
/* Fill MPI_INFO_ENV (command, argv, maxprocs, host, wdir, thread_level). */
void rmpi_info_env_init(int argc, char **argv, int maxprocs, const char *thread_level);
void rmpi_info_env_fill(rmpi_info_t *i, int argc, char **argv, int maxprocs, const char *thread_level);

#endif
