/*
 * comm: communicators. A communicator is a context id pair (ctx for point-to-point, ctx+1
 * for collectives), a rank map (communicator rank -> world rank) and MPI attributes such
 * as its error handler and name. Context ids are agreed among members at creation (the
 * maximum of every member's next free id), so they are unique wherever two members meet.
 *
 * Who calls: api, coll. Ownership: refcounted; MPI_COMM_WORLD and MPI_COMM_SELF are static.
 * Threading: caller holds the library lock; collective creation calls block in the core.
 */
#ifndef RMPI_COMM_H
#define RMPI_COMM_H

#include <mpi.h>

#include "../core/core.h"

#define RMPI_COMM_MAGIC 0x434f4d4du

typedef struct rmpi_comm {
    uint32_t magic;
    uint32_t ctx;          /* point-to-point; ctx + 1 carries collectives */
    int rank, size;
    int *world;            /* comm rank -> world rank; NULL for MPI_COMM_WORLD */
    int refcount;
    int predefined;
    MPI_Comm handle;
    MPI_Errhandler errh;
    char name[MPI_MAX_OBJECT_NAME];
    uint32_t coll_seq;     /* collectives started on this communicator (coll/nbc.h tags) */
} rmpi_comm_t;

extern rmpi_comm_t rmpi_comm_world, rmpi_comm_self;

int rmpi_comm_init(int rank, int size);
void rmpi_comm_finalize(void);

/* Object of a handle, or NULL when the handle is not a live communicator. */
static inline rmpi_comm_t *rmpi_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD)
        return &rmpi_comm_world;
    if (h == MPI_COMM_SELF)
        return &rmpi_comm_self;
    if ((uintptr_t)h < 4096)
        return NULL;
    rmpi_comm_t *c = (rmpi_comm_t *)h;
    return c->magic == RMPI_COMM_MAGIC ? c : NULL;
}

static inline int rmpi_comm_world_rank(const rmpi_comm_t *c, int r) { return c->world ? c->world[r] : r; }

/* Collective over parent: a new communicator with the same members and a fresh context. */
int rmpi_comm_dup(rmpi_comm_t *parent, rmpi_comm_t **out);
/* Collective over parent: MPI_Comm_split semantics (color MPI_UNDEFINED: *out = NULL). */
int rmpi_comm_split(rmpi_comm_t *parent, int color, int key, rmpi_comm_t **out);
void rmpi_comm_release(rmpi_comm_t *c);
/* MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL. */
int rmpi_comm_compare(const rmpi_comm_t *a, const rmpi_comm_t *b);

/* Neighbours of a communicator with a topology, in the standard's order (cart: for each dimension, -1 then +1 shift, MPI_PROC_NULL where off the grid and not periodic; graph: the adjacency list, in = out; dist graph: sources then destinations as given). Returns 0, or MPI_ERR_TOPOLOGY when c has none. */
int rmpi_comm_neighbors(rmpi_comm_t *c, int *indegree, const int **sources, int *outdegree, const int **destinations);

/* Blocking point-to-point on a communicator's collective context (for coll and comm). */
int rmpi_comm_coll_send(rmpi_comm_t *c, const void *buf, size_t len, int dest, int tag);
int rmpi_comm_coll_recv(rmpi_comm_t *c, void *buf, size_t len, int src, int tag);
int rmpi_comm_coll_sendrecv(rmpi_comm_t *c, const void *sbuf, size_t slen, int dest, void *rbuf, size_t rlen,
                            int src, int tag);

#endif
