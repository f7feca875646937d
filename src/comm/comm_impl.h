/* comm-internal: member sets for the agreement steps, allocation of communicator objects. */
#ifndef RMPI_COMM_IMPL_H
#define RMPI_COMM_IMPL_H

#include "comm.h"

/* Some members of an intracommunicator c (ranks[i] is the c-rank of member i; NULL: all
 * of c), talking on c's collective context with one tag. me: the caller's index. */
typedef struct rmpi_mset {
    rmpi_comm_t *c;
    int n, me;
    const int *ranks;
    int tag;
} rmpi_mset_t;

static inline rmpi_mset_t rmpi_mset_all(rmpi_comm_t *c, int tag)
{
    return (rmpi_mset_t){c, c->size, c->rank, NULL, tag};
}
/* Everyone's `len` bytes, in member order, into all[n * len]. */
void rmpi_mset_allgather(const rmpi_mset_t *m, const void *mine, size_t len, void *all);
/* Binomial broadcast from member root. */
void rmpi_mset_bcast(const rmpi_mset_t *m, void *buf, size_t len, int root);
/* A fresh context id agreed by the members, ctx..ctx+span reserved (agree.c): blocking,
 * while other agreements of this process progress beside it. */
uint32_t rmpi_mset_agree_ctx(const rmpi_mset_t *m, unsigned span);
/* The same, non-blocking: on_done runs inside progress once the members agreed (ctx
 * reserved); the agreement object is freed after it. across: an intercommunicator whose
 * local group is m (all of its `local`): both groups agree (NULL: m's members only). */
typedef struct rmpi_agree rmpi_agree_t;
rmpi_agree_t *rmpi_agree_start(const rmpi_mset_t *m, rmpi_comm_t *across, unsigned span,
                               void (*on_done)(rmpi_agree_t *a, uint32_t ctx, void *arg), void *arg);
/* The largest next free context id among the members (not yet reserved; for the
 * agreements across two groups, which are blocking). */
uint32_t rmpi_mset_max_ctx(const rmpi_mset_t *m);
/* Reserve context ids up to ctx + span (exclusive) on this process. */
void rmpi_comm_reserve_ctx(uint32_t ctx, unsigned span);
uint32_t rmpi_comm_next_ctx(void);
/* Reserve ctx..ctx+span and return 1 when no id from ctx up is reserved yet on this
 * process (a candidate agreed earlier is still free here), else 0. */
int rmpi_comm_ctx_claim(uint32_t ctx, unsigned span);

/* Ordering of MPI_Comm_split: by key, ties by rank in the parent. Entries start with it. */
typedef struct rmpi_keyrank {
    int key, rank;
} rmpi_keyrank_t;
int rmpi_keyrank_cmp(const void *a, const void *b);

/* An intracommunicator over n world ranks (copied; NULL = identity over n). */
rmpi_comm_t *rmpi_comm_alloc(uint32_t ctx, int rank, int n, const int *world);
/* An intercommunicator (contexts ctx..ctx+3: its own pair and its local comm's). */
rmpi_comm_t *rmpi_comm_alloc_inter(uint32_t ctx, int rank, int lsize, const int *lworld, int rsize, const int *rworld);

/* Collective over both groups of an intercommunicator: agree a fresh context (ctx..ctx+3
 * reserved) and swap between the groups each side's `mine` (the same on all its members)
 * and, when rlist is not NULL, its list of n ints (*rlist: malloc'd copy of the other
 * side's, *rn its length). Returns the context. */
uint32_t rmpi_comm_inter_agree(rmpi_comm_t *c, int mine, const int *list, int n, int *theirs, int **rlist, int *rn);

#endif
