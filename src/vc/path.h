/*
 * Path measurements of a subchannel (seed: infiniband-wan, 3.4): round-trip time smoothed
 * as TCP does it (RFC 6298: SRTT and RTTVAR), and the rendezvous/eager crossover they
 * give. Pure logic: no I/O, no clock, no globals, so the unit tests drive it with
 * synthetic samples. Part of the vc layer (included by vc.h). Threading: caller holds the
 * library lock.
 */
#ifndef RMPI_VC_PATH_H
#define RMPI_VC_PATH_H

#include <stddef.h>
#include <stdint.h>

/* Sources of round-trip samples: RMPI_NET_RTT_* (net.h), the same numbering. */
#define RMPI_PATH_NSRC 3

typedef struct rmpi_path {
    double srtt, rttvar;         /* ns; 0 until the first sample */
    double min_rtt;              /* smallest sample taken (ns) */
    double last[RMPI_PATH_NSRC]; /* newest sample of each source (ns) */
    double min[RMPI_PATH_NSRC];  /* smallest sample of each source (ns) */
    uint64_t n[RMPI_PATH_NSRC];  /* samples taken, by source */
    int measured;                /* a sample other than the handshake's has been taken */
    /* Windowed minimum (the path's round trip without queues): smallest sample of the
     * current window and of the one before; a window lasts RMPI_PATH_WINDOW_NS. */
    double wmin, wmin_prev;
    uint64_t wstart;
} rmpi_path_t;

#define RMPI_PATH_WINDOW_NS 10000000000ull

/* Samples outside (0, RMPI_PATH_RTT_MAX] are refused (a clock step, a broken peer). */
#define RMPI_PATH_RTT_MAX 60e9

/* Take one round-trip sample of rtt_ns from source src at time now_ns. The first sample
 * sets SRTT = R and RTTVAR = R/2; later ones blend in with gains 1/8 and 1/4 (RFC 6298,
 * 2.2-2.3). The handshake's sample is a guess (it includes the peer's delay in noticing the
 * frame): the first sample of another source restarts the estimate from itself. Returns 1
 * when taken. */
int rmpi_path_sample(rmpi_path_t *p, double rtt_ns, int src, uint64_t now_ns);
/* The same sample counted (last, minimum, the window of rmpi_path_base) but not blended
 * into SRTT / RTTVAR: a source that another one stands in for there. */
int rmpi_path_observe(rmpi_path_t *p, double rtt_ns, int src, uint64_t now_ns);
/* The path's round trip without queueing: the smallest sample of the last one to two
 * windows (BBR's min_rtt filter), so a longer route is seen within 20 s. 0: no sample. */
double rmpi_path_base(const rmpi_path_t *p);

/* Largest message for which eager beats rendezvous, in bytes (0: no finite answer, e.g. an
 * unknown RTT). rtt_ns: the round trip a rendezvous adds (RTS, then CTS); copy: bytes/ns
 * the receiver copies an eager message out of its receive buffer at; one: bytes/ns of the
 * single rail an eager frame takes; all: bytes/ns of every rail together, over which
 * rendezvous data is striped (one, all <= 0: unknown, taken as one rail). See path.c. */
double rmpi_path_crossover(double rtt_ns, double copy, double one, double all);

/* Round trips below this (ns) are a LAN: one stream carries them (and nothing is tuned). */
#define RMPI_PATH_FAR_NS 100000.0
/* Streams a path needs (seed infiniband-wan, 3.4: parallel streams on long links), from
 * cur streams in use now: rate (bytes/ns) is what those cur streams delivered together,
 * rtt_ns the path's round trip, window the bytes one stream keeps in flight, cap_rate the
 * path's capacity when known (bytes/ns, <= 0: unknown). Never fewer than cur, at most max;
 * see path.c. */
int rmpi_path_streams(double rate, double rtt_ns, double window, double cap_rate, int cur, int max);

#endif
