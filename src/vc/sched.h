/*
 * The communication scheduler of a virtual channel (Liu et al., 'Building Multirail
 * InfiniBand Clusters: MPI-Level Designs and Performance Evaluation', secs. 4.4-4.5): which
 * subchannel carries the next small frame (multiplexing policies) and how a large transfer
 * is cut into stripes (striping policies), plus the adaptive weight update fed by the
 * completion filter. Pure logic: no I/O, no clock, no globals; deterministic, so both peers
 * and the unit tests get the same choices from the same inputs. Private to the vc layer:
 * vc.h includes it for the types its struct embeds, and the core uses the scheduler only
 * through vc.h (rmpi_vc_stripe*); nothing outside src/vc includes it but the unit tests.
 * Threading: caller holds the library lock.
 */
#ifndef RMPI_VC_SCHED_H
#define RMPI_VC_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "knobs_enum.h" /* the policies: RMPI_SMALL_POLICY_*, RMPI_STRIPE_POLICY_* (src/rt/knobs.def) */

#define RMPI_SCHED_MAX 8

typedef struct rmpi_sched_cfg {
    int small_policy, stripe_policy; /* enum rmpi_knob_small_policy, rmpi_knob_stripe_policy */
    unsigned window;                 /* window round robin: frames per subchannel before switching */
    double alpha;                    /* adaptive striping's history factor: weight of a new measurement, (0,1] */
    double floor;                    /* least share a live subchannel keeps under adaptive striping */
    size_t min_stripe;               /* no stripe smaller than this (except a message's only stripe) */
    int bind;                        /* binding policies: this process's subchannel index (e.g. local rank) */
    double whole_slack;              /* adaptive: whole on one rail when that ends at most this much later */
} rmpi_sched_cfg_t;

typedef struct rmpi_sched {
    rmpi_sched_cfg_t cfg;
    int nsub;
    int up[RMPI_SCHED_MAX];        /* 0: subchannel failed (never chosen again) or asleep */
    int asleep[RMPI_SCHED_MAX];    /* 1: a spare stream not woken yet (rmpi_sched_wake) */
    double hint[RMPI_SCHED_MAX];   /* static weights: RMPI_RAIL_BW or provider bandwidth hints */
    double weight[RMPI_SCHED_MAX]; /* striping shares, sum 1 over live subchannels */
    /* small-frame state */
    int cur;
    unsigned in_window;
    double credit[RMPI_SCHED_MAX]; /* weighted round robin (smooth WRR) */
    uint64_t updates;              /* adaptive updates applied */
    uint64_t learned;              /* of them since the weights last started over (rmpi_sched_readmit) */
    uint64_t cuts, split;          /* messages cut (rmpi_sched_stripe) and of them into several stripes */
    double rate[RMPI_SCHED_MAX];   /* delivery rate of each subchannel's stripes, bytes/ns (0: none yet) */
    /* stripes cut and not yet done (rmpi_sched_stripe_done): bytes per subchannel, count */
    uint64_t queued[RMPI_SCHED_MAX];
    uint64_t nqueued;
    /* what the providers still hold per subchannel, for the next cut only (rmpi_sched_seen) */
    uint64_t seen[RMPI_SCHED_MAX];
    int seen_ok[RMPI_SCHED_MAX];
} rmpi_sched_t;

typedef struct rmpi_stripe {
    int sub;         /* subchannel index */
    size_t off, len; /* byte range of the message */
    size_t ahead;    /* bytes queued on the subchannel when the stripe was cut */
} rmpi_stripe_t;

/* hints[i] > 0: relative bandwidth of subchannel i (NULL or all 0: equal). Weights start
 * from the hints for weighted striping and EQUAL for adaptive (it needs no hints). A hint
 * that is missing (<= 0) takes the mean of the given ones; nsub is clamped to 1..RMPI_SCHED_MAX. */
void rmpi_sched_init(rmpi_sched_t *s, const rmpi_sched_cfg_t *cfg, int nsub, const double *hints);
/* Subchannel for the next small frame; -1 when no subchannel is live. */
int rmpi_sched_small(rmpi_sched_t *s);
/* Cut [0, len) into at most max stripes, in subchannel order, covering it exactly once;
 * zero-length stripes are never produced. Returns the number of stripes (>= 1 if len > 0,
 * 0 when no subchannel is live). Cut points fall on 64-byte boundaries; a share below
 * cfg.min_stripe goes to the largest share, ties to the heavier then lower subchannel.
 * Adaptive striping also counts the bytes still queued on each subchannel (stripes cut and
 * not yet done): shares are chosen so that every stripe of the message is expected to end
 * at the same time (water filling over queued_i / weight_i), and a message too small to
 * split goes whole to the subchannel expected to finish it first. Every policy records
 * each stripe's `ahead` and adds it to the queue; report each with rmpi_sched_stripe_done. */
int rmpi_sched_stripe(rmpi_sched_t *s, size_t len, rmpi_stripe_t *out, int max);
/* Before a cut: the provider still has `bytes` to move on subchannel sub (its backlog:
 * queued or in the kernel, undelivered). The next rmpi_sched_stripe counts at most that
 * much ahead of a new stripe there, and then forgets it. A stripe stays in queued[] until
 * its completion comes back (a PUT_ACK a round trip or a scheduling slice of the peer
 * later), so without it a rail whose bytes had all left looked busy, the cut placed
 * nothing on it, and it went idle; its next stripe's `ahead` then counted bytes long
 * delivered and its rate came out many times the link's. */
void rmpi_sched_seen(rmpi_sched_t *s, int sub, uint64_t bytes);
/* Stripe st has been delivered (or abandoned): its bytes leave its subchannel's queue. */
void rmpi_sched_stripe_done(rmpi_sched_t *s, const rmpi_stripe_t *st);
/* Stripe st goes to subchannel `to` instead (its rail failed): its queued bytes move too. */
void rmpi_sched_stripe_move(rmpi_sched_t *s, rmpi_stripe_t *st, int to);
/* Completion-filter feedback for one striped message: t_ns[k] is the delivery time of
 * stripe k, counted from when it was cut, so it includes the `ahead` bytes it queued
 * behind. (ahead_i + len_i) / t_i is the rate the subchannel delivered: every policy keeps
 * it in rate[i] (blended with alpha). Adaptive striping moves the weights toward it, blended
 * with the old weights by alpha and kept above the floor (the update of Liu et al.,
 * 'Building Multirail InfiniBand Clusters: MPI-Level Designs and Performance Evaluation',
 * sec. 4.5). A message carried by one subchannel (a whole message: at 10:1 a 256 KiB
 * message is never split) moves the weights toward the subchannels' measured rates once
 * every live one has a rate, so placement learns from whole messages too. */
void rmpi_sched_feedback(rmpi_sched_t *s, const rmpi_stripe_t *stripes, int n, const uint64_t *t_ns);
/* A subchannel failed: never schedule it again; its weight goes to the others. Returns the
 * number of live subchannels left. */
int rmpi_sched_fail(rmpi_sched_t *s, int sub);
/* A failed subchannel is live again: striping starts over as on a new VC (weighted: the
 * hints; otherwise equal shares, and adaptive striping takes its next measurement whole),
 * and its measured rate is forgotten. Returns the number of live subchannels. */
int rmpi_sched_readmit(rmpi_sched_t *s, int sub);
/* Spare subchannels (parallel streams, seed infiniband-wan 3.4): sleep takes a live one out
 * of every choice until wake brings it back with the live ones' mean weight (weighted
 * striping: its hint) and no rate yet. The last live subchannel never sleeps. wake returns
 * the number of live subchannels. */
void rmpi_sched_sleep(rmpi_sched_t *s, int sub);
int rmpi_sched_wake(rmpi_sched_t *s, int sub);

#endif
