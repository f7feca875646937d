/*
 * Failure detector of a virtual channel's subchannels: a rail that stops moving data while
 * others move is failed within a few of its round-trip timeouts, a rail that is merely slow
 * (its peer still acknowledges, however little) never is. Pure logic: no I/O, no clock, no
 * globals; vc.c feeds it what the providers report (op `watch`: bytes outstanding and a
 * counter of what the peer acknowledged or sent) and the subchannels' path estimates, and
 * the unit tests feed it synthetic traces. Part of the vc layer (included by vc.h).
 * Threading: caller holds the library lock.
 */
#ifndef RMPI_VC_DETECT_H
#define RMPI_VC_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "path.h"

typedef struct rmpi_detect {
    uint64_t moved;    /* the provider's progress counter at the last look */
    uint64_t t_moved;  /* when it last grew (0: never) */
    uint64_t t_since;  /* start of the current wait: last growth, or when work appeared */
    uint64_t t_nudged; /* when the others were last nudged for this wait (rmpi_detect_nudge) */
    int busy;          /* bytes were outstanding at the last look */
    /* Re-admitted (rmpi_detect_readmit): 2 until the first look reads the provider's counter,
     * then 1 until it grows, i.e. until the peer is first heard in the new connection. */
    int unheard;
    uint64_t grace_end; /* while unheard, never failed before this */
} rmpi_detect_t;

/* One look at a subchannel at now_ns: bytes waiting for the peer's acknowledgement and the
 * provider's progress counter. fresh: the looks before this one are too old to trust (the
 * process did not run progress for a while): every wait restarts now. */
void rmpi_detect_observe(rmpi_detect_t *d, size_t outstanding, uint64_t moved, uint64_t now_ns, int fresh);

/* A failed subchannel comes back (a new connection): every wait starts again, and until the
 * provider's counter first grows, the subchannel is not failed before now_ns + grace_ns. The
 * new connection's first frames can queue behind what its provider still owes from the old
 * one (ofi_rxm keeps its TCP connection through a cut and after it sends the answers to
 * reads the peer gave up, then our frames), so the first acknowledgement may take longer
 * than a healthy rail's timeout; failed at that timeout, the rail counted a second failure
 * for one cut (src/vc/README.md). */
void rmpi_detect_readmit(rmpi_detect_t *d, uint64_t now_ns, double grace_ns);

/* How long a subchannel may wait without progress before it counts as failed, in ns: k
 * round-trip timeouts of its path (SRTT + 4 RTTVAR, RFC 6298 2.3), at least floor_ns (which
 * also stands in while the path has no estimate). */
double rmpi_detect_timeout(const rmpi_path_t *p, double k, double floor_ns);

/* The first live subchannel (up[i]) that has failed at now_ns, or -1: it has had bytes
 * outstanding and no progress for longer than timeout_ns[i], while another live subchannel
 * made progress after that wait began and within timeout_ns[i] of now. A rail alone, or all
 * rails stalled together (the peer stopped, not a rail), is never failed here: the
 * provider's own timeout (RMPI_RAIL_TIMEOUT) decides those. */
int rmpi_detect_failed(const rmpi_detect_t *d, int n, const int *up, const double *timeout_ns, uint64_t now_ns);

/* The first live subchannel that has waited longer than a quarter of its timeout while no
 * other live one moved since its wait began and within its timeout of now (the movement
 * that would fail it), and whose others were not nudged in the last quarter timeout; or -1. The caller then sends a word on every other live subchannel: when
 * the peer waits for what the stalled rail holds, nothing else moves and a dead rail looks
 * like a stopped peer; the peer's host acknowledging the word on another rail is the
 * movement that tells them apart (a stopped or unreachable peer acknowledges nothing, and
 * stays the provider's to judge). Notes the nudge in d[i]. */
int rmpi_detect_nudge(rmpi_detect_t *d, int n, const int *up, const double *timeout_ns, uint64_t now_ns);

/* Re-admission of a failed subchannel: tries to connect it again, the first first_ns after
 * the failure, each bounded by the wait before the next, the waits doubling up to max_ns
 * (exponential backoff: a rail that stays down costs a connect attempt per max_ns). */
typedef struct rmpi_probe {
    uint64_t at;   /* next try */
    uint64_t wait; /* wait after it */
} rmpi_probe_t;
void rmpi_probe_start(rmpi_probe_t *p, uint64_t now_ns, double first_ns);
/* 0 while no try is due; else a try is due now: returns how long it may take (ns) and
 * schedules the next one. */
uint64_t rmpi_probe_due(rmpi_probe_t *p, uint64_t now_ns, double max_ns);

#endif
