/*
 * Private to the data-movement collectives (gather*, scatter*, allgather*, alltoall*,
 * neighbor*): moving blocks (coll.h rmpi_coll_blk_t) through a schedule, and the algorithm
 * choice. A block that is one byte range is sent from and received into user memory; any
 * other is packed into schedule scratch before its send, or received into scratch and
 * unpacked in the next round (gx_round adds those unpacks).
 */
#ifndef RMPI_GATHER_SCHED_H
#define RMPI_GATHER_SCHED_H

#include "coll.h"

typedef struct gx_later gx_later_t;

typedef struct gx {
    rmpi_nbc_t *s;
    int me, n;         /* rank and size of the communicator */
    gx_later_t *later; /* unpacks waiting for the next round */
    size_t nlater, caplater;
    rmpi_coll_blk_t packed_blk; /* last block gx_send packed, reused for the same block */
    void *packed;
} gx_t;

static inline size_t gx_bytes(const rmpi_coll_blk_t *b) { return b->count * b->dt->size; }
/* Start of the block's data when it is one byte range (any pointer when empty), else NULL. */
char *gx_contig(const rmpi_coll_blk_t *b);
/* A block of n plain bytes at p. */
rmpi_coll_blk_t gx_bytes_blk(void *p, size_t n);

void gx_init(gx_t *g, rmpi_comm_t *c);
/* Close the round; the unpacks of its receives open the next one. */
void gx_round(gx_t *g);
/* Close the last round and hand the schedule over. */
rmpi_nbc_t *gx_end(gx_t *g);

void gx_send(gx_t *g, const rmpi_coll_blk_t *b, int peer);
void gx_recv(gx_t *g, const rmpi_coll_blk_t *b, int peer);
/* Receive b's packed bytes at `at` (scratch chosen by the caller, or b's own range);
 * unpacked into b in the next round unless at is b's range. */
void gx_recv_at(gx_t *g, const rmpi_coll_blk_t *b, void *at, int peer);
/* Local steps of this round: block -> block (a block larger than its target goes through
 * a message to self, so the receive reports MPI_ERR_TRUNCATE), block <-> packed bytes. */
void gx_copy(gx_t *g, const rmpi_coll_blk_t *from, const rmpi_coll_blk_t *to);
void gx_pack(gx_t *g, const rmpi_coll_blk_t *b, void *packed);
/* gx_pack into a slot of `room` bytes sized from the receiver's counts; a block of another
 * size (mismatched signatures) goes through a message to self instead, never past the slot. */
void gx_put(gx_t *g, const rmpi_coll_blk_t *b, void *slot, size_t room);
void gx_unpack(gx_t *g, const void *packed, const rmpi_coll_blk_t *b);

/* Where n blocks lie one after the other in one byte range, in rank order: its start. */
char *gx_contig_all(const rmpi_coll_blk_t *b, int n);

/* Binomial trees over ranks relative to the root (vr = (rank - root) mod n): vr's subtree
 * is vr and the next size - 1 relative ranks, size = min(lowest set bit of vr, n - vr)
 * (n for the root); its parent is vr minus that bit, its children vr + m for the powers
 * of two m < size. */
static inline int gx_subtree(int vr, int n) { return vr ? ((vr & -vr) < n - vr ? (vr & -vr) : n - vr) : n; }

/* Intercommunicators (inter.c), every block straight across. rooted: one is the block of
 * a rank of the group across from the root (root = its remote rank), many the c->rsize
 * blocks of the root (root = MPI_ROOT; scatter: the root sends); MPI_PROC_NULL moves
 * nothing. exchange: recv[i] from remote rank i, send[i] (send[0] when one) to it. */
rmpi_nbc_t *coll_inter_rooted(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root,
                              int scatter);
rmpi_nbc_t *coll_inter_exchange(rmpi_comm_t *c, const rmpi_coll_blk_t *send, int one, const rmpi_coll_blk_t *recv);

/* Algorithm choice (gather_select.c): from the knob when forced, else by size and ranks.
 * Every rank must reach the same answer, so the inputs are values all ranks agree on. */
enum { GX_BINOMIAL, GX_LINEAR, GX_BRUCK, GX_RECURSIVE_DOUBLING, GX_RING, GX_PAIRWISE, GX_SITE };
/* gather (0) or scatter (1); GX_LINEAR for the v forms. Each pick is noted for RMPI_REPORT. */
int gx_pick_rooted(int scatter, int form, int n, size_t block);
/* GX_SITE (regular forms only): forced, or the communicator spans sites (coll_multi_site). */
int gx_pick_allgather(rmpi_comm_t *c, size_t total, int form);
int gx_pick_alltoall(rmpi_comm_t *c, size_t block, int form);

/* Site-aware (site_gather.c): blocks of recv[me]'s size through the tiers of coll_sites_t. */
void coll_allgather_site(gx_t *x, rmpi_comm_t *c, const rmpi_coll_blk_t *mine, const rmpi_coll_blk_t *recv,
                         int in_place);
void coll_alltoall_site(gx_t *x, rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv);

#endif
