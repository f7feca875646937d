/* The provider-neutral half of the channel switch (src/chan/README.md), for providers with
 * channel kinds (shm, ofi); not part of the provider contract (net.h). The J1-J5 protocol
 * of the adaptive-transport-selection seed (sec. 3.4): the receiver owns the kind each
 * sender writes to it on; it readies the new channel and asks (J1-J2), the sender ends the
 * old channel with a marker (J3-J4), and the switch completes when the receiver reads that
 * marker (J5). How a provider keeps frames in order across the two channels is its own
 * (shm holds back frames; ofi orders by its sequence numbers): here is the receiver's state
 * per sender, its accounting, and the test knob RMPI_CHAN_FORCE_SWITCH_MS. Called only from
 * the provider's own calls (progress, chan_switch); no locking. */
#ifndef RMPI_NET_CHAN_SWITCH_H
#define RMPI_NET_CHAN_SWITCH_H

#include "net.h"

/* One sender, as its receiver sees it: kind, the channel it writes on (during a switch:
 * where it is going); waiting: asked to move, its marker not read yet. */
typedef struct rmpi_net_chsw {
    int kind, waiting;
} rmpi_net_chsw_t;

/* J1: 0 when the switch starts (kind is now `to`: the provider readies that channel and
 * asks the sender); 1 when there is nothing to start (already there, or a switch of this
 * sender is under way: one at a time). */
int rmpi_net_chsw_start(rmpi_net_chsw_t *x, int to);
/* J5: the sender's marker for a move to `to` was read. A marker nobody asked for is a
 * corrupt peer: the job ends naming sender and receiver. Counts the switch, and the ring:
 * asked for -> in use (to dedicated), in use -> left (to shared). */
void rmpi_net_chsw_marked(rmpi_net_chsw_t *x, int to, rmpi_net_chan_stats_t *st, int sender, int me);

/* RMPI_CHAN_FORCE_SWITCH_MS (tests): every few ms one random sender changes channel. */
typedef struct rmpi_net_chsw_force {
    uint64_t ns, next;
    unsigned seed;
} rmpi_net_chsw_force_t;
/* Armed only under RMPI_CHANNELS=adaptive with the knob set (else ns = 0). */
void rmpi_net_chsw_force_init(rmpi_net_chsw_force_t *f, int rank, unsigned salt);
/* When due: a random index in [0, n) other than me, else -1. */
int rmpi_net_chsw_force_pick(rmpi_net_chsw_force_t *f, int n, int me);

#endif
