/*
 * Connection epochs of one (rail, peer) pair of the libfabric provider (docs/wire/ofi.md,
 * "Connection epochs and link frames"): which epoch is current, whether it was given up,
 * the HELLO the lower rank has out, and when a connection made again counts as up. Pure
 * logic: no I/O, no clock; ofi_ops.c acts on the answers (numbering, link frames, reports)
 * and the unit test unit/net/ofi_link drives two ends through synthetic traces.
 *
 * A connection made again is up only once each end has heard the other in it, because
 * ofi_rxm keeps its TCP connection through a cut and each direction resumes at its own
 * retransmission (backed off, up to seconds after the link returns). The lower rank knows
 * both directions carry when the HELLO_ACK comes (its HELLO went one way, the answer came
 * the other); the higher rank, when it takes the HELLO, knows only the lower rank's
 * direction, so it waits for the lower rank's UP (or a frame of the new epoch). Reported
 * up at the HELLO, the higher rank's virtual channel sent stripes into a direction still
 * backed off and its failure detector failed the rail again 0.4 s later.
 * Threading: caller holds the library lock.
 */
#ifndef RMPI_OFI_LINK_H
#define RMPI_OFI_LINK_H

#include <stdint.h>

typedef struct rmpi_ofi_link {
    uint32_t epoch;     /* the current connection's */
    uint32_t try_epoch; /* the highest epoch proposed or adopted */
    uint32_t hello;     /* the epoch our HELLO proposes (0: none waiting) */
    int down;           /* the current connection was given up */
    int unconfirmed;    /* adopted from a HELLO; the lower rank not heard in it yet */
} rmpi_ofi_link_t;

/* The current connection is given up: frames of it are dropped from now on. Returns 1 when
 * it was not already. The HELLO out, if any, is given up too (the caller counts it). */
int rmpi_ofi_link_lost(rmpi_ofi_link_t *l);

/* Whether no connection was ever made or tried (epoch 0, never given up, nothing proposed
 * or adopted): a rail whose link was down at launch starts so, and its first connection is
 * then made like one made again (the lower rank's HELLO(1, 0)), which needs epoch 0 given
 * up first at the lower rank and, at the higher rank, nothing to give up. The caller also
 * checks that no frame went either way in epoch 0 (a peer whose rail came up before its
 * virtual channel opened uses it at once, and that connection must be failed, not dropped
 * silently). */
int rmpi_ofi_link_fresh(const rmpi_ofi_link_t *l);

/* Lower rank, connection given up: the epoch of a new HELLO (a; b is l->epoch), one above
 * every epoch used or proposed. */
uint32_t rmpi_ofi_link_propose(rmpi_ofi_link_t *l);

/* Higher rank, HELLO(a, b) came: 1 when it is taken (b is our epoch, a above it): the caller
 * gives up the current connection if it was still up, calls rmpi_ofi_link_take and answers
 * HELLO_ACK; 0: an older try, ignored. */
int rmpi_ofi_link_hello(const rmpi_ofi_link_t *l, uint32_t a, uint32_t b);

/* Higher rank: epoch a of a HELLO taken becomes current. Returns 1 when the connection is
 * up now (report it), 0 while it waits for the lower rank's UP or a frame in a: so far only
 * the lower rank's direction is known to carry. */
int rmpi_ofi_link_take(rmpi_ofi_link_t *l, uint32_t a);

/* Lower rank, HELLO_ACK(a) came: 1 when it answers a try since the current epoch, which is
 * then adopted and up (both directions carried: the caller reports it and sends UP(a)); else
 * 0, ignored. */
int rmpi_ofi_link_ack(rmpi_ofi_link_t *l, uint32_t a);

/* Higher rank, UP(a) came: 1 when it confirms the current, unconfirmed epoch (report it up). */
int rmpi_ofi_link_up(rmpi_ofi_link_t *l, uint32_t a);

/* What a frame of the peer's (not a link frame) with epoch bits `bits` (epoch & mask) is. */
enum {
    RMPI_OFI_LINK_STALE = -1,  /* of a connection given up or an older one: dropped */
    RMPI_OFI_LINK_CURRENT = 0, /* of the current connection: delivered */
    /* Lower rank: the peer's first frame in our proposal l->epoch now (it took the HELLO;
     * that frame may complete before the HELLO_ACK): adopted, confirmed; the caller starts
     * the numbering again, sends UP and reports the connection up. Delivered. */
    RMPI_OFI_LINK_ADOPTED = 1,
    /* Higher rank: the first frame in our unconfirmed epoch, which the lower rank sends in
     * only once it adopted it: up now (report it). Delivered. */
    RMPI_OFI_LINK_CONFIRMED = 2,
};
int rmpi_ofi_link_frame(rmpi_ofi_link_t *l, uint32_t bits, uint32_t mask);

#endif
