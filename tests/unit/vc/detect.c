/* The VC's failure detector (src/vc/detect.c) on synthetic traces, looked at every 5 ms as
 * rmpi_vc_watch does: a rail that stops acknowledging while another moves is failed after
 * its timeout and not before; rails that are slow, congested (acknowledgements in bursts
 * with gaps up to a TCP retransmission timeout and more), idle, or blocked by a peer that
 * does not read (window closed: nothing counted as waiting) are never failed; all rails
 * stopping together (the peer paused) and a lone rail are left to the provider; a gap in
 * the looks (progress not called) restarts every wait; the timeout follows the path; a rail
 * that stalls the whole job (nothing else has anything to send) is failed once the others
 * are nudged and answer, and a stopped peer still is not; a rail re-admitted and not yet
 * heard in its new connection gets its grace, and only that. */
#include "vc/detect.h"

#include <string.h>

#include "../unit_check.h"

#define MS 1000000ull
#define STEP (5 * MS)
#define FLOOR (400.0 * MS)
#define K 4.0

enum { STEADY, BURSTY, DEAD, IDLE, ZEROWIN, HUSH };

typedef struct model {
    int kind;
    uint64_t from;     /* DEAD / ZEROWIN / IDLE from this time on (steady before) */
    uint64_t rate;     /* bytes acknowledged per ms while moving */
    uint64_t gap_max;  /* BURSTY: longest gap between acknowledgements (ns) */
    uint64_t next_ack; /* BURSTY: when the next burst comes */
    uint64_t moved;
    int nudged; /* HUSH: a word was sent on it since the last look */
} model_t;

static unit_rng_t rng;

/* What the provider's watch would say at time t. */
static size_t look(model_t *m, uint64_t t)
{
    if (t >= m->from) {
        switch (m->kind) {
        case DEAD: return 1 << 20;
        case IDLE:
        case ZEROWIN: return 0;
        case HUSH: /* nothing to send; a word sent on it is acknowledged by the next look */
            m->moved += m->nudged ? 4 : 0;
            m->nudged = 0;
            return 0;
        }
    }
    if (m->kind == BURSTY) {
        if (t >= m->next_ack) {
            m->moved += m->rate;
            m->next_ack = t + unit_range(&rng, MS, m->gap_max);
        }
        return 1 << 20;
    }
    m->moved += m->rate * (STEP / MS);
    return 1 << 20;
}

static int nudging, nudges;

/* Run n rails for `dur` from t0 with looks every `step`; returns the first failed rail (and
 * when, in *when) or -1. A look gap: no looks in [gap_at, gap_at + gap_len). With `nudging`
 * the others are nudged as rmpi_vc_watch does (a word on each, counted in `nudges`). */
static int run(model_t *m, int n, const double *tmo, uint64_t dur, uint64_t gap_at, uint64_t gap_len, uint64_t *when)
{
    nudges = 0;
    rmpi_detect_t d[8];
    int up[8];
    memset(d, 0, sizeof d);
    uint64_t last = 0;
    for (int i = 0; i < n; i++)
        up[i] = 1;
    for (uint64_t t = STEP; t <= dur; t += STEP) {
        if (gap_len && t >= gap_at && t < gap_at + gap_len)
            continue;
        int fresh = last == 0 || (double)(t - last) > FLOOR / 2;
        last = t;
        for (int i = 0; i < n; i++) {
            size_t out = look(&m[i], t);
            rmpi_detect_observe(&d[i], out, m[i].moved, t, fresh);
        }
        int f = rmpi_detect_failed(d, n, up, tmo, t);
        if (f >= 0) {
            *when = t;
            return f;
        }
        if (nudging && (f = rmpi_detect_nudge(d, n, up, tmo, t)) >= 0) {
            nudges++;
            for (int j = 0; j < n; j++)
                m[j].nudged = j != f;
        }
    }
    return -1;
}

static void fill(double *tmo, int n, double v)
{
    for (int i = 0; i < n; i++)
        tmo[i] = v;
}

static void test_timeout(void)
{
    rmpi_path_t p;
    memset(&p, 0, sizeof p);
    CHECK(rmpi_detect_timeout(&p, K, FLOOR) == FLOOR, "no estimate: the floor");
    p.srtt = 0.1 * MS;
    p.rttvar = 0.05 * MS;
    CHECK(rmpi_detect_timeout(&p, K, FLOOR) == FLOOR, "LAN path: the floor");
    p.srtt = 100.0 * MS;
    p.rttvar = 25.0 * MS;
    CHECK(rmpi_detect_timeout(&p, K, FLOOR) == K * 200.0 * MS, "100 ms path: 4 x (100 + 4 x 25) ms, got %g",
          rmpi_detect_timeout(&p, K, FLOOR));
}

static void test_failure(void)
{
    /* fast rail steady, slow rail (8:1) dies at 1 s: failed after 400 ms, not before */
    double tmo[2];
    fill(tmo, 2, FLOOR);
    model_t m[2] = {{STEADY, UINT64_MAX, 100000, 0, 0, 0}, {DEAD, 1000 * MS, 12500, 0, 0, 0}};
    uint64_t when = 0;
    int f = run(m, 2, tmo, 5000 * MS, 0, 0, &when);
    CHECK(f == 1, "the dead rail is failed (got %d)", f);
    CHECK(when > 1000 * MS + (uint64_t)FLOOR - STEP && when <= 1000 * MS + (uint64_t)FLOOR + 2 * STEP,
          "failed %.0f ms after it stopped, want about %.0f", (double)(when - 1000 * MS) / MS, FLOOR / MS);

    /* the fast rail dies, a 10x slower one goes on */
    model_t m2[2] = {{DEAD, 700 * MS, 100000, 0, 0, 0}, {STEADY, UINT64_MAX, 10000, 0, 0, 0}};
    f = run(m2, 2, tmo, 5000 * MS, 0, 0, &when);
    CHECK(f == 0 && when <= 700 * MS + (uint64_t)FLOOR + 2 * STEP, "fast rail dead: failed %d at %.0f ms", f,
          (double)when / MS);

    /* four rails 8:4:2:1, the third dies: only it */
    double tmo4[4];
    fill(tmo4, 4, FLOOR);
    model_t m4[4] = {{STEADY, UINT64_MAX, 80000, 0, 0, 0},
                     {STEADY, UINT64_MAX, 40000, 0, 0, 0},
                     {DEAD, 2000 * MS, 20000, 0, 0, 0},
                     {BURSTY, UINT64_MAX, 10000, 150 * MS, 0, 0}};
    f = run(m4, 4, tmo4, 5000 * MS, 0, 0, &when);
    CHECK(f == 2 && when <= 2000 * MS + (uint64_t)FLOOR + 2 * STEP, "4 rails: failed %d at %.0f ms", f,
          (double)when / MS);

    /* a long path's timeout is longer: a 1 s wait on a rail whose limit is 1.2 s is fine */
    double tmo_long[2] = {FLOOR, 1200.0 * MS};
    model_t m3[2] = {{STEADY, UINT64_MAX, 100000, 0, 0, 0}, {DEAD, 1000 * MS, 12500, 0, 0, 0}};
    f = run(m3, 2, tmo_long, 2150 * MS, 0, 0, &when);
    CHECK(f == -1, "1.2 s limit: not failed after 1.15 s (got %d at %.0f ms)", f, (double)when / MS);
    f = run(m3, 2, tmo_long, 3000 * MS, 0, 0, &when);
    CHECK(f == 1 && when > 2200 * MS - STEP && when <= 2200 * MS + 2 * STEP, "1.2 s limit: failed %d at %.0f ms", f,
          (double)when / MS);
}

static void test_no_false_alarm(void)
{
    double tmo[2];
    fill(tmo, 2, FLOOR);
    uint64_t when = 0;
    /* congestion: a competing flow leaves the slow rail acknowledgements in bursts with gaps
     * up to 350 ms (a retransmission timeout after a tail drop, and then some) */
    for (int trial = 0; trial < 50; trial++) {
        model_t m[2] = {{STEADY, UINT64_MAX, 100000, 0, 0, 0}, {BURSTY, UINT64_MAX, 5000, 350 * MS, 0, 0}};
        int f = run(m, 2, tmo, 20000 * MS, 0, 0, &when);
        CHECK(f == -1, "congested rail failed at %.0f ms (trial %d)", (double)when / MS, trial);
        CHECK_BAIL();
    }
    /* both rails congested */
    model_t mb[2] = {{BURSTY, UINT64_MAX, 50000, 300 * MS, 0, 0}, {BURSTY, UINT64_MAX, 5000, 350 * MS, 0, 0}};
    CHECK(run(mb, 2, tmo, 20000 * MS, 0, 0, &when) == -1, "two congested rails: failed at %.0f ms", (double)when / MS);
    /* the slow rail goes idle (nothing in flight): never failed */
    model_t mi[2] = {{STEADY, UINT64_MAX, 100000, 0, 0, 0}, {IDLE, 500 * MS, 5000, 0, 0, 0}};
    CHECK(run(mi, 2, tmo, 5000 * MS, 0, 0, &when) == -1, "idle rail failed");
    /* the peer stops reading one rail's socket: its window closes, nothing is in flight */
    model_t mz[2] = {{STEADY, UINT64_MAX, 100000, 0, 0, 0}, {ZEROWIN, 500 * MS, 5000, 0, 0, 0}};
    CHECK(run(mz, 2, tmo, 5000 * MS, 0, 0, &when) == -1, "closed window failed the rail");
    /* the peer stops (all rails stop together): left to the provider */
    model_t mp[2] = {{DEAD, 1000 * MS, 100000, 0, 0, 0}, {DEAD, 1000 * MS, 5000, 0, 0, 0}};
    CHECK(run(mp, 2, tmo, 5000 * MS, 0, 0, &when) == -1, "paused peer: rail %d failed",
          run(mp, 2, tmo, 5000 * MS, 0, 0, &when));
    /* one rail alone */
    model_t m1[1] = {{DEAD, 100 * MS, 100000, 0, 0, 0}};
    CHECK(run(m1, 1, tmo, 5000 * MS, 0, 0, &when) == -1, "a lone rail failed");
    /* no looks for 2 s (the process computed): the dead rail's wait restarts at the next look */
    model_t mg[2] = {{STEADY, UINT64_MAX, 100000, 0, 0, 0}, {DEAD, 1000 * MS, 12500, 0, 0, 0}};
    int f = run(mg, 2, tmo, 5000 * MS, 1100 * MS, 2000 * MS, &when);
    CHECK(f == 1 && when >= 3100 * MS + (uint64_t)FLOOR - STEP, "after a gap: failed %d at %.0f ms, want >= %.0f", f,
          (double)when / MS, (3100 * MS + FLOOR) / MS);
}

/* Random traces: a rail that stops for longer than its timeout is always failed (within two
 * looks of it), one whose acknowledgements never pause that long never is. */
static void test_random(void)
{
    double tmo[4];
    fill(tmo, 4, FLOOR);
    for (int trial = 0; trial < 200; trial++) {
        int n = (int)unit_range(&rng, 2, 4);
        model_t m[4];
        int dead = (int)unit_range(&rng, 0, (uint64_t)n - 1);
        int kill = (int)unit_range(&rng, 0, 1);
        uint64_t at = unit_range(&rng, 100, 3000) * MS;
        for (int i = 0; i < n; i++) {
            m[i] = (model_t){BURSTY, UINT64_MAX, unit_range(&rng, 1000, 100000), unit_range(&rng, 5, 350) * MS, 0, 0};
            if (i == dead && kill) {
                m[i].kind = DEAD;
                m[i].from = at;
            }
        }
        uint64_t when = 0;
        int f = run(m, n, tmo, 6000 * MS, 0, 0, &when);
        if (kill) {
            CHECK(f == dead, "trial %d: rail %d died at %.0f ms, failed %d at %.0f ms", trial, dead, (double)at / MS, f,
                  (double)when / MS);
            CHECK(f != dead || when <= at + (uint64_t)FLOOR + 2 * STEP, "trial %d: late by %.0f ms", trial,
                  (double)(when - at - (uint64_t)FLOOR) / MS);
        } else {
            CHECK(f == -1, "trial %d: healthy rail %d failed at %.0f ms", trial, f, (double)when / MS);
        }
        CHECK_BAIL();
    }
}

/* The job stalls behind the dead rail: the peer waits for what it holds, so the other rail
 * has nothing to send and goes quiet at the same moment. Without nudges that looks like a
 * stopped peer; with them the other rail's acknowledged word fails the dead one in its
 * timeout, with a nudge per quarter timeout at most. A stopped peer answers no nudge. */
static void test_stall(void)
{
    double tmo[4];
    fill(tmo, 4, FLOOR);
    uint64_t when = 0;
    model_t m[2] = {{HUSH, 1000 * MS, 100000, 0, 0, 0, 0}, {DEAD, 1000 * MS, 12500, 0, 0, 0, 0}};
    nudging = 0;
    int f = run(m, 2, tmo, 5000 * MS, 0, 0, &when);
    CHECK(f == -1, "without nudges a stall is the provider's to judge (got %d)", f);
    nudging = 1;
    f = run(m, 2, tmo, 5000 * MS, 0, 0, &when);
    CHECK(f == 1 && when <= 1000 * MS + (uint64_t)FLOOR + 2 * STEP, "stall: failed %d at %.0f ms, want rail 1 by %.0f",
          f, (double)when / MS, (1000 * MS + FLOOR + 2 * STEP) / MS);
    CHECK(nudges >= 1 && nudges <= 3, "%d nudges in one wait", nudges);
    /* the fast rail stalls the job, 2 quiet others */
    model_t m3[3] = {{DEAD, 700 * MS, 100000, 0, 0, 0, 0},
                     {HUSH, 700 * MS, 50000, 0, 0, 0, 0},
                     {HUSH, 700 * MS, 10000, 0, 0, 0, 0}};
    f = run(m3, 3, tmo, 5000 * MS, 0, 0, &when);
    CHECK(f == 0 && when <= 700 * MS + (uint64_t)FLOOR + 2 * STEP, "3 rails, stall: failed %d at %.0f ms", f,
          (double)when / MS);
    /* the peer stops: nudges go unanswered, nothing failed, and at most one per quarter */
    model_t mp[2] = {{DEAD, 1000 * MS, 100000, 0, 0, 0, 0}, {DEAD, 1000 * MS, 5000, 0, 0, 0, 0}};
    f = run(mp, 2, tmo, 5000 * MS, 0, 0, &when);
    CHECK(f == -1, "stopped peer with nudges: rail %d failed", f);
    CHECK(nudges <= 2 * (int)(4000 / 100) + 2, "%d nudges in 4 s (want at most one per rail per 100 ms)", nudges);
    /* the other rail moves once more 20 ms after the dead one stopped, then goes quiet: the
     * failure has a 20 ms window, which a 50 ms pause in the looks skips; the wait must not
     * end there (the other's movement is then older than the timeout): nudges follow */
    model_t ml[2] = {{HUSH, 1020 * MS, 100000, 0, 0, 0, 0}, {DEAD, 1000 * MS, 12500, 0, 0, 0, 0}};
    f = run(ml, 2, tmo, 5000 * MS, 1000 * MS + (uint64_t)FLOOR - 10 * MS, 50 * MS, &when);
    CHECK(f == 1 && when <= 1000 * MS + (uint64_t)FLOOR + 60 * MS,
          "late move, window skipped: failed %d at %.0f ms, want rail 1 by %.0f", f, (double)when / MS,
          (1000 * MS + FLOOR + 60 * MS) / MS);
    /* congested and idle rails need no nudge: something else moves, or nothing waits */
    model_t mc[2] = {{STEADY, UINT64_MAX, 100000, 0, 0, 0, 0}, {BURSTY, UINT64_MAX, 5000, 90 * MS, 0, 0, 0}};
    f = run(mc, 2, tmo, 5000 * MS, 0, 0, &when);
    CHECK(f == -1 && nudges == 0, "congested rail beside a moving one: failed %d, %d nudges", f, nudges);
    nudging = 0;
}

/* A subchannel re-admitted (rmpi_detect_readmit): the provider's counter at the first look
 * is no movement; until the counter grows the rail is not failed before its grace, after
 * that at the usual timeout; once heard, the usual timeout from its last movement. */
static void test_readmit(void)
{
    int up[2] = {1, 1};
    double tmo[2] = {FLOOR, FLOOR};
    const double grace = 2000.0 * MS;
    for (int heard = 0; heard < 2; heard++) {
        rmpi_detect_t d[2];
        memset(d, 0, sizeof d);
        uint64_t t0 = 10000 * MS, moved0 = 5000, moved1 = 123456; /* counters from before */
        rmpi_detect_readmit(&d[1], t0, grace);
        uint64_t failed_at = 0, t;
        for (t = t0; t < t0 + 4000 * MS && !failed_at; t += STEP) {
            moved0 += 1000; /* rail0 always moves */
            if (heard && t == t0 + 100 * MS)
                moved1 += 10; /* the peer heard once in the new connection, then nothing */
            rmpi_detect_observe(&d[0], 1 << 20, moved0, t, 0);
            rmpi_detect_observe(&d[1], 1 << 20, moved1, t, 0);
            if (rmpi_detect_failed(d, 2, up, tmo, t) == 1)
                failed_at = t;
        }
        uint64_t want = heard ? t0 + 100 * MS + (uint64_t)FLOOR : t0 + (uint64_t)grace;
        CHECK(failed_at >= want && failed_at <= want + 2 * STEP, "re-admitted, %s: failed %.3f s after, want %.3f",
              heard ? "heard once" : "never heard", (double)(failed_at - t0) * 1e-9, (double)(want - t0) * 1e-9);
    }
}

int main(void)
{
    rng = unit_seed(20);
    test_timeout();
    test_failure();
    test_no_false_alarm();
    test_random();
    test_stall();
    test_readmit();
    return finish("vc/detect");
}
