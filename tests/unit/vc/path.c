/* Path measurements (src/vc/path.c) and the eager limit RMPI_WAN_TUNE derives from them
 * (rmpi_core_wan_limit): RFC 6298 smoothing on constant, noisy and hostile samples, the
 * handshake's guess replaced by the first real sample, the windowed minimum under queueing
 * and route changes, the crossover formula on one and
 * several rails, and the limit's bounds (100 us floor, 1 MiB cap, unexpected budget,
 * largest frame) on zero, huge and NaN inputs; the rates the limit reads per rail, a rail's
 * streams summed as one (rmpi_vc_rates). */
#include "core/core_impl.h"
#include "vc/path.h"
#include "vc/vc.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../unit_check.h"

#define US 1000.0
#define MS 1000000.0
#define KIB ((size_t)1024)
#define MIB ((size_t)1 << 20)
#define BASE (64 * KIB)
#define FRAME (MIB + 256)

static uint64_t clock_ns = 1;

/* One sample, 1 ms after the one before. */
static int sample(rmpi_path_t *p, double rtt, int src)
{
    clock_ns += 1000000;
    return rmpi_path_sample(p, rtt, src, clock_ns);
}

static void smoothing(void)
{
    rmpi_path_t p;
    memset(&p, 0, sizeof p);
    CHECK(sample(&p, 4 * MS, 1) == 1, "a sample is taken");
    CHECK(p.srtt == 4 * MS && p.rttvar == 2 * MS, "first sample: srtt %g rttvar %g", p.srtt, p.rttvar);
    for (int i = 0; i < 200; i++)
        sample(&p, 4 * MS, 1);
    CHECK(fabs(p.srtt - 4 * MS) < 1, "constant samples: srtt %g", p.srtt);
    CHECK(p.rttvar < 1 * US, "constant samples: rttvar %g decays", p.rttvar);
    CHECK(p.n[1] == 201 && p.min_rtt == 4 * MS, "counts %llu, min %g", (unsigned long long)p.n[1], p.min_rtt);

    /* Noise: uniform 2..6 ms around 4 ms. SRTT stays near the mean, RTTVAR near the mean
     * absolute deviation (1 ms), min reaches the low end. */
    unit_rng_t rng = unit_seed(12);
    for (int i = 0; i < 5000; i++)
        sample(&p, 2 * MS + (double)unit_range(&rng, 0, 4000) * US, 2);
    CHECK(fabs(p.srtt - 4 * MS) < 0.8 * MS, "noisy samples: srtt %g", p.srtt);
    CHECK(p.rttvar > 0.5 * MS && p.rttvar < 2 * MS, "noisy samples: rttvar %g", p.rttvar);
    CHECK(p.min_rtt < 2.01 * MS, "noisy samples: min %g", p.min_rtt);

    /* A step (the route changed): within 30 samples SRTT is within 5% of the new value. */
    for (int i = 0; i < 30; i++)
        sample(&p, 20 * MS, 2);
    CHECK(fabs(p.srtt - 20 * MS) < 1 * MS, "after a step to 20 ms: srtt %g", p.srtt);

    /* Refused: zero, negative, NaN, infinite, beyond a minute, an unknown source. */
    rmpi_path_t q = p;
    double bad[] = {0, -1, NAN, INFINITY, 61e9};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(sample(&p, bad[i], 1) == 0, "sample %g refused", bad[i]);
    CHECK(sample(&p, 1 * MS, RMPI_PATH_NSRC) == 0 && sample(&p, 1 * MS, -1) == 0, "unknown sources refused");
    CHECK(!memcmp(&p, &q, sizeof p), "refused samples change nothing");
    CHECK(sample(&p, 60e9, 1) == 1, "a minute is still a round trip");
}

static void handshake_guess(void)
{
    rmpi_path_t p;
    memset(&p, 0, sizeof p);
    /* The handshake took 50 ms (the peer was busy); the kernel then says 4 ms. */
    sample(&p, 50 * MS, 0);
    CHECK(p.srtt == 50 * MS && !p.measured, "handshake: a guess (srtt %g)", p.srtt);
    sample(&p, 50 * MS, 0);
    CHECK(!p.measured, "handshakes alone never count as measured");
    sample(&p, 4 * MS, 1);
    CHECK(p.srtt == 4 * MS && p.rttvar == 2 * MS && p.measured, "first real sample restarts: srtt %g", p.srtt);
    sample(&p, 8 * MS, 2);
    CHECK(p.srtt == 4.5 * MS, "then blended with gain 1/8: srtt %g", p.srtt);
    /* A later handshake (a reconnect) is just one more sample. */
    sample(&p, 4.5 * MS, 0);
    CHECK(p.srtt == 4.5 * MS && p.n[0] == 3, "later handshake blended: srtt %g", p.srtt);
}

/* The path's base round trip: queueing (samples far above the path) does not move it; a
 * longer route replaces it within two windows; a shorter one at once. */
static void base(void)
{
    rmpi_path_t p;
    memset(&p, 0, sizeof p);
    CHECK(rmpi_path_base(&p) == 0, "no sample: 0");
    unit_rng_t rng = unit_seed(3);
    for (int i = 0; i < 3000; i++) /* 3 s: 4 ms plus 0..30 ms of queue, now and then none */
        sample(&p, 4 * MS + (i % 50 ? (double)unit_range(&rng, 0, 30000) * US : 0), 2);
    CHECK(rmpi_path_base(&p) == 4 * MS, "loaded path: base %g", rmpi_path_base(&p));
    CHECK(p.srtt > 10 * MS, "while SRTT holds the queue: %g", p.srtt);
    /* The route gets longer: 20 ms from now on. */
    uint64_t t0 = clock_ns;
    while (rmpi_path_base(&p) < 20 * MS && clock_ns - t0 < 30 * (uint64_t)1e9) {
        clock_ns += 100 * 1000000ull;
        rmpi_path_sample(&p, 20 * MS, 1, clock_ns);
    }
    double took = (double)(clock_ns - t0) * 1e-9;
    CHECK(rmpi_path_base(&p) == 20 * MS && took > 7 && took <= 20.1, "longer route seen after %g s", took);
    /* Shorter: at once. */
    sample(&p, 1 * MS, 1);
    CHECK(rmpi_path_base(&p) == 1 * MS, "shorter route at once: %g", rmpi_path_base(&p));
    /* A gap of more than two windows forgets the old ones. */
    clock_ns += 25 * (uint64_t)1e9;
    sample(&p, 3 * MS, 1);
    CHECK(rmpi_path_base(&p) == 3 * MS, "after a long silence: %g", rmpi_path_base(&p));
    /* Observed, not blended: the window and counts see it, SRTT does not. */
    double srtt = p.srtt;
    uint64_t n = p.n[1];
    clock_ns += 1000000;
    CHECK(rmpi_path_observe(&p, 2 * MS, 1, clock_ns) == 1, "observed");
    CHECK(p.srtt == srtt && p.n[1] == n + 1 && p.last[1] == 2 * MS && rmpi_path_base(&p) == 2 * MS,
          "observe: srtt %g (was %g), base %g", p.srtt, srtt, rmpi_path_base(&p));
    CHECK(rmpi_path_observe(&p, NAN, 1, clock_ns) == 0, "NaN not observed");
    sample(&p, 3 * MS, 1);
    /* Refused samples leave the window alone. */
    sample(&p, 0, 1);
    sample(&p, NAN, 1);
    CHECK(rmpi_path_base(&p) == 2 * MS, "refused samples: %g", rmpi_path_base(&p));
}

static void crossover(void)
{
    /* One rail: s* = RTT x copy rate, whatever the rail's rate. */
    CHECK(rmpi_path_crossover(1 * MS, 2.0, 0, 0) == 2e6, "one rail, rates unknown: %g",
          rmpi_path_crossover(1 * MS, 2.0, 0, 0));
    CHECK(fabs(rmpi_path_crossover(1 * MS, 2.0, 0.125, 0.125) - 2e6) < 1, "one rail at 1 Gbit/s");
    /* Two equal 1 Gbit/s rails: 1/C + 1/B1 - 1/(2 B1) = 0.5 + 8 - 4 = 4.5 ns/byte. */
    double s = rmpi_path_crossover(1 * MS, 2.0, 0.125, 0.25);
    CHECK(fabs(s - 1e6 / 4.5) < 1, "two equal rails: %g", s);
    /* A fast copy: about twice one rail's bandwidth-delay product. */
    s = rmpi_path_crossover(1 * MS, 1e9, 0.125, 0.25);
    CHECK(fabs(s - 250000) < 1, "two rails, free copy: %g (2 x BDP 250000)", s);
    /* Inconsistent rates (one > all) count as one rail. */
    CHECK(rmpi_path_crossover(1 * MS, 2.0, 0.5, 0.25) == 2e6, "one > all: one rail");
    /* No finite answer: zero, negative, NaN or infinite RTT or copy rate. */
    double bad[] = {0, -1, NAN, INFINITY};
    for (size_t i = 0; i < 4; i++) {
        CHECK(rmpi_path_crossover(bad[i], 2.0, 0, 0) == 0, "rtt %g", bad[i]);
        CHECK(rmpi_path_crossover(1 * MS, bad[i], 0, 0) == 0, "copy %g", bad[i]);
    }
    CHECK(rmpi_path_crossover(1 * MS, 2.0, NAN, INFINITY) == 2e6, "NaN/infinite rates count as unknown");
}

static void limit(void)
{
    size_t unexp = 256 * MIB;
    /* Below 100 us nothing changes, exactly: LAN, loopback, unknown, NaN. */
    double lan[] = {0, -5, 1 * US, 50 * US, 99.9 * US, NAN};
    for (size_t i = 0; i < sizeof lan / sizeof *lan; i++) {
        CHECK(rmpi_core_wan_limit(BASE, lan[i], 0, 0, unexp, FRAME) == BASE, "rtt %g keeps 64 KiB", lan[i]);
        CHECK(rmpi_core_wan_limit(8 * KIB, lan[i], 0.125, 0.25, unexp, FRAME) == 8 * KIB, "rtt %g keeps 8 KiB", lan[i]);
    }
    /* 100 us on one rail: 200 KB, in whole KiB. */
    size_t l = rmpi_core_wan_limit(BASE, 100 * US, 0, 0, unexp, FRAME);
    CHECK(l == 195 * KIB, "100 us: %zu", l);
    /* 1 ms and more: the 1 MiB cap; 1 hour too (huge), and infinity. */
    CHECK(rmpi_core_wan_limit(BASE, 1 * MS, 0, 0, unexp, FRAME) == MIB, "1 ms: the cap");
    CHECK(rmpi_core_wan_limit(BASE, 3.6e12, 0, 0, unexp, FRAME) == MIB, "an hour: the cap");
    CHECK(rmpi_core_wan_limit(BASE, INFINITY, 0, 0, unexp, FRAME) == BASE, "infinite: no answer, the base");
    /* Two equal rails of 1 Gbit/s at 200 us: 1e6/4.5 x 0.2 = 44 KB, under the base: the base. */
    CHECK(rmpi_core_wan_limit(BASE, 200 * US, 0.125, 0.25, unexp, FRAME) == BASE, "two rails at 200 us");
    /* ... at 2 ms: 444 KB. */
    l = rmpi_core_wan_limit(BASE, 2 * MS, 0.125, 0.25, unexp, FRAME);
    CHECK(l == (size_t)(2e6 / 4.5) / 1024 * 1024, "two rails at 2 ms: %zu", l);
    /* Bounds: the receiver's unexpected budget / 256, the largest frame; never below the base. */
    CHECK(rmpi_core_wan_limit(BASE, 1 * MS, 0, 0, 64 * MIB, FRAME) == 256 * KIB, "RMPI_UNEXP_MAX=64m: 256 KiB");
    CHECK(rmpi_core_wan_limit(BASE, 1 * MS, 0, 0, 1 * MIB, FRAME) == BASE, "RMPI_UNEXP_MAX=1m: the base");
    CHECK(rmpi_core_wan_limit(BASE, 1 * MS, 0, 0, SIZE_MAX, FRAME) == MIB, "no unexpected bound: the cap");
    CHECK(rmpi_core_wan_limit(BASE, 1 * MS, 0, 0, unexp, 100000) == 97 * KIB, "a 100000-byte frame bounds it");
    CHECK(rmpi_core_wan_limit(BASE, 1 * MS, 0, 0, unexp, 1000) == BASE, "a tiny frame: the base");
    /* Monotonic in the round trip on noisy inputs: never below the base, never above the cap. */
    unit_rng_t rng = unit_seed(7);
    size_t prev = 0;
    for (int i = 0; i < 2000; i++) {
        double rtt = (double)i * 1 * US + (double)unit_range(&rng, 0, 100);
        l = rmpi_core_wan_limit(BASE, rtt, 0, 0, unexp, FRAME);
        CHECK(l >= BASE && l <= MIB && l >= prev, "rtt %g: %zu (before %zu)", rtt, l, prev);
        prev = l;
        CHECK_BAIL();
    }
}

/* The stream count: ceil(BDP / window), one more while the streams in use fill their
 * windows, bounded by the capacity, never below the count in use, at most max. */
static void streams(void)
{
    const double gbit = 0.125; /* 1 Gbit/s in bytes/ns */
    const double w = 256.0 * 1024;
    /* a LAN: 100 us floor */
    CHECK(rmpi_path_streams(gbit, 50 * US, w, 0, 1, 4) == 1, "LAN keeps one");
    CHECK(rmpi_path_streams(gbit, 50 * US, 1, 0, 2, 4) == 2, "never fewer than in use");
    /* unknown inputs change nothing */
    CHECK(rmpi_path_streams(0, 10 * MS, w, 0, 1, 4) == 1, "no rate");
    CHECK(rmpi_path_streams(gbit, 0, w, 0, 1, 4) == 1, "no round trip");
    CHECK(rmpi_path_streams(gbit, 10 * MS, 0, 0, 1, 4) == 1, "no window");
    CHECK(rmpi_path_streams(NAN, 10 * MS, w, 0, 1, 4) == 1 && rmpi_path_streams(gbit, NAN, w, 0, 1, 4) == 1, "NaN");
    CHECK(rmpi_path_streams(gbit, 10 * MS, w, 0, 3, 2) == 3, "max below cur keeps cur");
    /* a window-bound stream on 1gbit@5ms (10 ms RTT): it delivers w / RTT = 26 MB/s, fills
     * its window, so one more is asked for; two fill theirs: three; ... */
    for (int cur = 1; cur < 4; cur++) {
        double r = cur * w / (10 * MS);
        CHECK(rmpi_path_streams(r, 10 * MS, w, 0, cur, 8) == cur + 1, "%d window-bound: %d", cur,
              rmpi_path_streams(r, 10 * MS, w, 0, cur, 8));
    }
    /* ... until the link limits: 5 windows would carry 131 MB/s, the link 125: five fill
     * 95% of theirs, six would not be filled (but 5 > 4.77 windows is what the BDP needs) */
    CHECK(rmpi_path_streams(gbit, 10 * MS, w, 0, 5, 8) == 6, "link-bound at 95%% of the windows: one more");
    CHECK(rmpi_path_streams(gbit, 10 * MS, w, 0, 6, 8) == 6, "link-bound at 79%%: stays");
    /* the capacity bounds it: ceil(1.25 MB / 256 KiB) = 5 */
    CHECK(rmpi_path_streams(gbit, 10 * MS, w, gbit, 5, 8) == 5, "capacity 1 Gbit/s: 5");
    CHECK(rmpi_path_streams(gbit, 10 * MS, w, gbit, 1, 8) == 5, "measured BDP asks 5 at once");
    /* a big measured BDP asks for all it needs at once, bounded by max */
    CHECK(rmpi_path_streams(1.25, 10 * MS, w, 0, 1, 4) == 4, "10 Gbit/s at 10 ms: max");
    CHECK(rmpi_path_streams(0.6 * gbit, 10 * MS, 4.0 * 1024 * 1024, 0, 1, 4) == 1, "a 4 MiB window carries it");
    /* monotone in rate and round trip, always within [cur, max] */
    unit_rng_t rng = unit_seed(11);
    for (int i = 0; i < 20000; i++) {
        double rate = (double)unit_range(&rng, 0, 2000) * 1e-3, rtt = (double)unit_range(&rng, 0, 50000) * US;
        double win = (double)unit_range(&rng, 1, 8 << 20);
        int cur = (int)unit_range(&rng, 1, 8), max = (int)unit_range(&rng, 1, 8);
        int n = rmpi_path_streams(rate, rtt, win, 0, cur, max);
        int n2 = rmpi_path_streams(rate * 1.5, rtt, win, 0, cur, max);
        int n3 = rmpi_path_streams(rate, rtt * 1.5, win, 0, cur, max);
        CHECK(n >= cur && (n <= max || n == cur) && n2 >= n && n3 >= n, "rate %g rtt %g win %g cur %d max %d: %d %d %d",
              rate, rtt, win, cur, max, n, n2, n3);
        CHECK_BAIL();
    }
}

/* rmpi_vc_rates: a rail and the further streams over its path (hints.stream > 0) are one
 * rail, whether the streams were woken spares or opened in use; rails of their own stay
 * rails. One stream carries at most its window per round trip, and on a VC of one rail a
 * stream not measured yet counts at that bound. */
static void rates(void)
{
    rmpi_rail_t rails[5];
    memset(rails, 0, sizeof rails);
    rmpi_vc_t *vc = calloc(1, sizeof *vc);
    CHECK(vc != NULL, "calloc");
    if (!vc)
        return;
    rmpi_sched_cfg_t cfg = {RMPI_SMALL_POLICY_RR, RMPI_STRIPE_POLICY_ADAPTIVE, 1, 0.5, 0.0, 4096, 0};
    /* rail0 and its streams #1, #2 (#2 asleep); rail1 and its stream #1 */
    int stream[5] = {0, 1, 2, 0, 1};
    for (int i = 0; i < 5; i++) {
        rails[i].hints.stream = stream[i];
        rails[i].hints.spare = stream[i] > 0;
        vc->sub[i].rail = &rails[i];
    }
    vc->nsub = 3;
    rmpi_sched_init(&vc->sched, &cfg, 3, NULL);
    rmpi_sched_sleep(&vc->sched, 2);
    double one = -1, all = -1;
    /* nothing measured, no window known: one rail, no rate; the crossover is RTT x C */
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && one == 0 && all == 0, "one rail, two live streams unmeasured: %g %g",
          one, all);
    CHECK(rmpi_core_wan_limit(BASE, 20 * MS, one, all, 256 * MIB, FRAME) == MIB, "10 ms, one rail: the cap");
    /* one stream measured, the other (woken by the peer) not: still no rate */
    vc->sched.rate[0] = 0.06;
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && one == 0 && all == 0, "half measured: %g %g", one, all);
    /* both measured, windows unknown: the rail's rate is their sum, one == all */
    vc->sub[1].rate = 0.05; /* the busy-interval rate counts where no stripe rate is */
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && fabs(one - 0.11) < 1e-12 && one == all, "one rail of 2 streams: %g %g",
          one, all);
    CHECK(rmpi_core_wan_limit(BASE, 20 * MS, one, all, 256 * MIB, FRAME) == MIB, "streams' shares: still the cap");
    /* counted as two rails of 20 MB/s each (a read stripe's rate includes its round trip)
     * they would put 10 ms under 1 MiB: 20 ms / (0.5 + 50 - 25 ns/B) = 784 KB */
    CHECK(rmpi_core_wan_limit(BASE, 20 * MS, 0.02, 0.04, 256 * MIB, FRAME) == 765 * KIB, "as rails: below the cap");
    /* a sleeping spare counts nothing, even measured */
    vc->sched.rate[2] = 5;
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && fabs(all - 0.11) < 1e-12, "asleep counts nothing: %g", all);

    /* windows known, the path 20 ms: a stream carries at most window / 20 ms */
    uint64_t t = 1;
    for (int i = 0; i < 5; i++) {
        rails[i].hints.window = (size_t)2 << 20; /* 2 MiB: 0.105 bytes/ns at 20 ms */
        rmpi_path_sample(&vc->sub[i].path, 20 * MS, RMPI_NET_RTT_ACK, t);
    }
    const double wb = (double)(2 << 20) / (20 * MS);
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && fabs(one - wb) < 1e-12 && fabs(all - 0.11) < 1e-12,
          "one message gets one stream's window bound: %g (want %g) %g", one, wb, all);
    /* unmeasured streams count at their window bound on a VC of one rail */
    vc->sched.rate[0] = vc->sub[1].rate = 0;
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && fabs(one - wb) < 1e-12 && fabs(all - 2 * wb) < 1e-12,
          "unmeasured at their bound: %g %g", one, all);
    CHECK(rmpi_core_wan_limit(BASE, 20 * MS, one, all, 256 * MIB, FRAME) == MIB, "2 MiB windows at 10 ms: the cap");
    /* small windows (128 KiB, 4 streams at 5 ms one way): eager only up to about a window */
    for (int i = 0; i < 5; i++)
        rails[i].hints.window = 128 * KIB;
    const double sb = 128.0 * KIB / (20 * MS);
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && fabs(one - sb) < 1e-12, "128 KiB windows: %g", one);
    size_t l = rmpi_core_wan_limit(BASE, 20 * MS, one, all, 256 * MIB, FRAME);
    CHECK(l > 128 * KIB && l < 256 * KIB, "128 KiB windows, 2 streams at 10 ms: %zu", l);

    /* a second rail with a stream: two rails; unmeasured -> 0 even with window bounds */
    vc->nsub = 5;
    rmpi_sched_init(&vc->sched, &cfg, 5, NULL);
    for (int i = 0; i < 5; i++)
        rails[i].hints.window = 0;
    CHECK(rmpi_vc_rates(vc, &one, &all) == 2 && one == 0 && all == 0, "two rails unmeasured: %g %g", one, all);
    rails[0].hints.window = rails[3].hints.window = (size_t)2 << 20;
    CHECK(rmpi_vc_rates(vc, &one, &all) == 2 && one == 0 && all == 0, "two rails, bounds only: %g %g", one, all);
    rails[0].hints.window = rails[3].hints.window = 0;
    double r[5] = {0.03, 0.03, 0.04, 0.01, 0.01};
    for (int i = 0; i < 5; i++)
        vc->sched.rate[i] = r[i];
    CHECK(rmpi_vc_rates(vc, &one, &all) == 2 && fabs(one - 0.10) < 1e-12 && fabs(all - 0.12) < 1e-12,
          "rail0 3 streams 0.10, rail1 2 streams 0.02: %g %g", one, all);
    /* a failed stream leaves its rail; a rail with no live stream is none */
    rmpi_sched_fail(&vc->sched, 3);
    rmpi_sched_fail(&vc->sched, 4);
    CHECK(rmpi_vc_rates(vc, &one, &all) == 1 && fabs(one - 0.10) < 1e-12 && one == all, "rail1 down: %g %g", one, all);
    /* streams opened in use without spares (RMPI_TCP_STREAMS=N) group the same way */
    for (int i = 0; i < 5; i++)
        rails[i].hints.spare = 0;
    rmpi_sched_init(&vc->sched, &cfg, 5, NULL);
    for (int i = 0; i < 5; i++)
        vc->sched.rate[i] = r[i];
    CHECK(rmpi_vc_rates(vc, &one, &all) == 2 && fabs(one - 0.10) < 1e-12, "fixed streams: %g", one);
    /* no streams at all: every rail its own, as before */
    for (int i = 0; i < 5; i++)
        rails[i].hints.stream = 0;
    CHECK(rmpi_vc_rates(vc, &one, &all) == 5 && fabs(one - 0.04) < 1e-12 && fabs(all - 0.12) < 1e-12,
          "five rails: %g %g", one, all);
    free(vc);
}

int main(void)
{
    smoothing();
    handshake_guess();
    base();
    crossover();
    limit();
    streams();
    rates();
    return finish("vc/path");
}
