/* Adaptive striping (the weight update of Liu et al., 'Building Multirail InfiniBand
 * Clusters: MPI-Level Designs and Performance Evaluation', sec. 4.5) against simulated
 * rails: stripe time = latency + len / bandwidth. From equal weights the shares must reach
 * the bandwidth ratio, the stripes must then end together, changes must be followed, the
 * floor must keep a slow rail measured, and a failed rail must drop out. Prints how many
 * messages each scenario took. */
#include "vc/sched.h"

#include <stdint.h>
#include <string.h>

#include "../unit_check.h"

#define MSG ((size_t)4 << 20)
#define LAT_NS 50000.0
#define MB_S(x) ((x)*1e6 / 1e9) /* bytes per ns */
#define FAST MB_S(125.0)
#define SLOW MB_S(31.25)
#define TOL 0.02    /* relative distance to the target share that counts as converged */
#define MAX_MSGS 10 /* messages allowed to get there */

typedef struct sim {
    rmpi_sched_t s;
    int nsub;
    double bw[RMPI_SCHED_MAX];
    double tmax, tmin; /* stripe times of the last message */
    int nstripes;
} sim_t;

static double dabs(double x) { return x < 0 ? -x : x; }

static void sim_init(sim_t *m, int nsub, const double *bw, double alpha, double floor)
{
    rmpi_sched_cfg_t c = {0};
    c.small_policy = RMPI_SMALL_POLICY_RR;
    c.stripe_policy = RMPI_STRIPE_POLICY_ADAPTIVE;
    c.window = 1;
    c.alpha = alpha;
    c.floor = floor;
    c.min_stripe = 65536;
    memset(m, 0, sizeof *m);
    rmpi_sched_init(&m->s, &c, nsub, NULL);
    m->nsub = nsub;
    memcpy(m->bw, bw, sizeof m->bw[0] * (size_t)nsub);
}

/* One message: cut, "send", feed the delivery times back. */
static void sim_msg(sim_t *m)
{
    rmpi_stripe_t st[RMPI_SCHED_MAX];
    uint64_t t[RMPI_SCHED_MAX];
    int n = rmpi_sched_stripe(&m->s, MSG, st, RMPI_SCHED_MAX);
    m->nstripes = n;
    m->tmax = 0;
    m->tmin = 1e300;
    for (int k = 0; k < n; k++) {
        double ns = LAT_NS + (double)st[k].len / m->bw[st[k].sub];
        t[k] = (uint64_t)ns;
        m->tmax = ns > m->tmax ? ns : m->tmax;
        m->tmin = ns < m->tmin ? ns : m->tmin;
        rmpi_sched_stripe_done(&m->s, &st[k]);
    }
    rmpi_sched_feedback(&m->s, st, n, t);
}

/* The share each live rail should end with: proportional to bandwidth, floor applied. */
static void targets(const sim_t *m, double floor, double *out)
{
    double sum = 0;
    for (int i = 0; i < m->nsub; i++)
        sum += m->s.up[i] ? m->bw[i] : 0;
    for (int i = 0; i < m->nsub; i++)
        out[i] = m->s.up[i] ? m->bw[i] / sum : 0;
    int pinned = 0;
    double rest = 1, free_sum = 0;
    for (int i = 0; i < m->nsub; i++) {
        if (m->s.up[i] && out[i] < floor) {
            out[i] = floor;
            pinned++;
            rest -= floor;
        } else {
            free_sum += out[i];
        }
    }
    if (pinned)
        for (int i = 0; i < m->nsub; i++)
            if (m->s.up[i] && out[i] > floor)
                out[i] *= rest / free_sum;
}

static int converged(const sim_t *m, double floor)
{
    double want[RMPI_SCHED_MAX];
    targets(m, floor, want);
    for (int i = 0; i < m->nsub; i++)
        if (m->s.up[i] && dabs(m->s.weight[i] - want[i]) > TOL * want[i])
            return 0;
    return 1;
}

static int weights_ok(const sim_t *m, const char *what)
{
    double sum = 0;
    int ok = 1;
    for (int i = 0; i < m->nsub; i++) {
        double w = m->s.weight[i];
        if (!(w >= 0 && w <= 1) || (!m->s.up[i] && w != 0))
            ok = 0;
        sum += w;
    }
    CHECK(ok && dabs(sum - 1) < 1e-9, "%s: weights out of shape (sum %.12f)", what, sum);
    return ok;
}

/* Run messages until the weights are within TOL of the targets and stay there for five
 * more messages; returns how many messages it took (MAX_MSGS + 1 when it did not). */
static int run_to_convergence(sim_t *m, double floor, const char *what)
{
    int took = -1;
    for (int k = 0; k <= MAX_MSGS + 5; k++) {
        if (took < 0 && converged(m, floor))
            took = k;
        else if (took >= 0 && !converged(m, floor))
            took = -1; /* left the band again: not converged after all */
        if (took >= 0 && k - took >= 5)
            break;
        sim_msg(m);
        weights_ok(m, what);
    }
    int msgs = took < 0 ? MAX_MSGS + 1 : took;
    printf("  %-44s %2d message%s  weights", what, msgs, msgs == 1 ? " " : "s");
    for (int i = 0; i < m->nsub; i++)
        printf(" %.4f", m->s.weight[i]);
    printf("\n");
    CHECK(msgs <= MAX_MSGS, "%s: not within %.0f%% of the bandwidth ratio after %d messages", what, TOL * 100,
          MAX_MSGS);
    return msgs;
}

static void check_balanced(sim_t *m, const char *what)
{
    sim_msg(m);
    double spread = m->tmax / m->tmin - 1;
    printf("  %-44s stripes end within %.2f%%\n", what, spread * 100);
    CHECK(m->nstripes >= 2 && spread <= 0.05, "%s: stripes end %.1f%% apart (%d stripes)", what, spread * 100,
          m->nstripes);
}

static void test_static_ratios(double alpha)
{
    static const struct {
        double a, b;
        const char *name;
    } cases[] = {{FAST, SLOW, "4:1"}, {FAST, FAST, "1:1"}, {SLOW, FAST, "1:4"}};
    for (int c = 0; c < 3; c++) {
        sim_t m;
        double bw[2] = {cases[c].a, cases[c].b};
        char what[64];
        sim_init(&m, 2, bw, alpha, 0.02);
        snprintf(what, sizeof what, "alpha %.2f %s from equal", alpha, cases[c].name);
        run_to_convergence(&m, 0.02, what);
        check_balanced(&m, what);
    }
    sim_t m;
    double bw3[3] = {MB_S(400), MB_S(200), MB_S(100)};
    sim_init(&m, 3, bw3, alpha, 0.02);
    char what[64];
    snprintf(what, sizeof what, "alpha %.2f 4:2:1 from equal", alpha);
    run_to_convergence(&m, 0.02, what);
    check_balanced(&m, what);
}

static void test_changes(void)
{
    sim_t m;
    double bw[2] = {FAST, SLOW};
    sim_init(&m, 2, bw, 0.5, 0.02);
    for (int k = 0; k < 20; k++)
        sim_msg(&m);
    CHECK(converged(&m, 0.02), "4:1 after 20 messages");
    m.bw[0] = SLOW;
    m.bw[1] = FAST;
    run_to_convergence(&m, 0.02, "4:1 -> 1:4 after 20 messages");
    check_balanced(&m, "after the swap");

    double eq[2] = {FAST, FAST};
    sim_init(&m, 2, eq, 0.5, 0.02);
    for (int k = 0; k < 5; k++)
        sim_msg(&m);
    m.bw[1] = FAST / 10;
    run_to_convergence(&m, 0.02, "1:1, rail 1 slowed to 1/10");
    check_balanced(&m, "rail 1 slow");
    m.bw[1] = FAST;
    run_to_convergence(&m, 0.02, "rail 1 restored");
    check_balanced(&m, "rail 1 restored");
}

static void test_floor(double floor)
{
    sim_t m;
    double bw[2] = {FAST, FAST};
    char what[80];
    sim_init(&m, 2, bw, 0.5, floor);
    m.bw[1] = FAST / 100;
    snprintf(what, sizeof what, "rail 1 100x slower, floor %.2f", floor);
    run_to_convergence(&m, floor, what);
    for (int k = 0; k < 50; k++) {
        sim_msg(&m);
        CHECK(m.nstripes == 2, "%s: the slow rail still gets a stripe (message %d)", what, k);
        CHECK(m.s.weight[1] >= floor - 1e-12, "%s: slow share %.4f below the floor", what, m.s.weight[1]);
        CHECK_BAIL();
    }
    CHECK(dabs(m.s.weight[1] - floor) < 1e-9, "%s: slow share sits at the floor (%.5f)", what, m.s.weight[1]);
    m.bw[1] = FAST;
    snprintf(what, sizeof what, "recovered from 100x slower, floor %.2f", floor);
    run_to_convergence(&m, floor, what);
}

static void test_failure(void)
{
    sim_t m;
    double bw[3] = {MB_S(400), MB_S(200), MB_S(100)};
    sim_init(&m, 3, bw, 0.5, 0.02);
    for (int k = 0; k < 15; k++)
        sim_msg(&m);
    double w0 = m.s.weight[0], w2 = m.s.weight[2];
    CHECK(rmpi_sched_fail(&m.s, 1) == 2, "two rails left");
    CHECK(m.s.weight[1] == 0, "failed rail has weight %g", m.s.weight[1]);
    weights_ok(&m, "after failure");
    CHECK(dabs(m.s.weight[0] / m.s.weight[2] - w0 / w2) < 1e-9, "the others keep their ratio (%g vs %g)",
          m.s.weight[0] / m.s.weight[2], w0 / w2);
    for (int k = 0; k < 10; k++) {
        rmpi_stripe_t st[RMPI_SCHED_MAX];
        int n = rmpi_sched_stripe(&m.s, MSG, st, RMPI_SCHED_MAX);
        for (int j = 0; j < n; j++) {
            CHECK(st[j].sub != 1, "a stripe on the failed rail");
            rmpi_sched_stripe_done(&m.s, &st[j]);
        }
        sim_msg(&m);
    }
    CHECK(converged(&m, 0.02), "4:1 between the two left: %.4f %.4f", m.s.weight[0], m.s.weight[2]);
    CHECK(rmpi_sched_fail(&m.s, 0) == 1 && m.s.weight[2] == 1, "one left takes everything");
    CHECK(rmpi_sched_fail(&m.s, 2) == 0, "none left: 0 (the caller fails the job)");
}

/* Feedback that carries no usable information leaves the weights alone. */
static void test_no_information(void)
{
    sim_t m;
    double bw[3] = {FAST, FAST, FAST};
    sim_init(&m, 3, bw, 0.5, 0.02);
    m.s.weight[0] = 0.5;
    m.s.weight[1] = 0.3;
    m.s.weight[2] = 0.2;
    rmpi_sched_t before = m.s;
    rmpi_stripe_t one = {0, 0, MSG};
    uint64_t t1 = 1000;
    rmpi_sched_feedback(&m.s, &one, 1, &t1);
    CHECK(memcmp(m.s.weight, before.weight, sizeof before.weight) == 0 && m.s.updates == 0, "single stripe: no change");

    /* Two stripes on one rail are still one rail's worth of information. */
    rmpi_stripe_t same[2] = {{1, 0, 1000}, {1, 1000, 1000}};
    uint64_t t2[2] = {10, 500};
    rmpi_sched_feedback(&m.s, same, 2, t2);
    CHECK(m.s.updates == 0, "stripes of one rail only: no update");

    /* Rail 1 carried nothing: it keeps 0.3, rails 0 and 2 split 0.7 by what they saw. */
    rmpi_stripe_t two[2] = {{0, 0, 1 << 20}, {2, 1 << 20, 1 << 20}};
    uint64_t t[2] = {1000000, 3000000};
    rmpi_sched_feedback(&m.s, two, 2, t);
    CHECK(m.s.updates == 1, "an update counted");
    CHECK(dabs(m.s.weight[1] - 0.3) < 1e-12, "rail without a stripe keeps its share (%g)", m.s.weight[1]);
    /* targets 0.525 and 0.175; the first measurement replaces the starting guess */
    CHECK(dabs(m.s.weight[0] - 0.525) < 1e-12 && dabs(m.s.weight[2] - 0.175) < 1e-12, "first update: %g %g",
          m.s.weight[0], m.s.weight[2]);
    /* later ones blend, (1 - alpha) * old + alpha * target with alpha 0.5: targets swap to
     * 0.175 and 0.525 */
    uint64_t tw[2] = {3000000, 1000000};
    rmpi_sched_feedback(&m.s, two, 2, tw);
    CHECK(dabs(m.s.weight[0] - 0.35) < 1e-12 && dabs(m.s.weight[2] - 0.35) < 1e-12, "blended update: %g %g",
          m.s.weight[0], m.s.weight[2]);

    /* A zero time is a very short one, not a division by zero. */
    uint64_t tz[2] = {0, 1000000};
    rmpi_sched_feedback(&m.s, two, 2, tz);
    weights_ok(&m, "zero time");
    CHECK(m.s.weight[2] >= 0.02 - 1e-12 && m.s.weight[0] > 0.5, "zero time: rail 0 looks fastest (%g %g %g)",
          m.s.weight[0], m.s.weight[1], m.s.weight[2]);

    /* Other policies ignore feedback. */
    for (int pol = RMPI_STRIPE_POLICY_BINDING; pol < RMPI_STRIPE_POLICY_ADAPTIVE; pol++) {
        rmpi_sched_cfg_t c = m.s.cfg;
        c.stripe_policy = pol;
        rmpi_sched_t s;
        double h[3] = {1, 2, 3};
        rmpi_sched_init(&s, &c, 3, h);
        rmpi_sched_t s0 = s;
        rmpi_sched_feedback(&s, two, 2, t);
        CHECK(memcmp(s.weight, s0.weight, sizeof s.weight) == 0 && s.updates == 0, "policy %d ignores feedback", pol);
    }
}

/* alpha = 1 takes the targets as they are (no history): one message is enough; small alpha
 * is slower but gets there. */
static void test_alpha_extremes(void)
{
    sim_t m;
    double bw[2] = {FAST, SLOW};
    sim_init(&m, 2, bw, 1.0, 0.02);
    sim_msg(&m);
    CHECK(converged(&m, 0.02), "alpha 1: converged after one message (%.4f %.4f)", m.s.weight[0], m.s.weight[1]);
    sim_init(&m, 2, bw, 0.1, 0.02);
    int k = 0;
    while (!converged(&m, 0.02) && k < 200) {
        sim_msg(&m);
        k++;
    }
    printf("  %-44s %2d messages\n", "alpha 0.10 4:1 from equal (informative)", k);
    CHECK(k < 200, "alpha 0.1 never converged");
}

/* Windows of messages cut at once and delivered first in first out per rail (as a TCP
 * stream or a send queue does): each stripe ends when its rail has moved everything queued
 * before it and itself. The feedback must still find the bandwidth ratio, and the last
 * stripes of a window must end together. */
/* One window: win messages of len cut back to back on two rails (each rail delivers its
 * stripes first in first out, so a stripe's time is the rail's busy time up to its end), then
 * all done and fed back. Each stripe's `ahead` must be what was cut before it on its rail.
 * busy[] gets each rail's busy time. Returns how many messages were split. */
static int sim_window(sim_t *m, size_t len, int win, int w, double *busy)
{
    rmpi_stripe_t st[64][RMPI_SCHED_MAX];
    int n[64], split = 0;
    size_t cut[2] = {0, 0};
    uint64_t t[64][RMPI_SCHED_MAX];
    busy[0] = busy[1] = 0;
    for (int k = 0; k < win && k < 64; k++) {
        n[k] = rmpi_sched_stripe(&m->s, len, st[k], RMPI_SCHED_MAX);
        split += n[k] > 1;
        for (int j = 0; j < n[k]; j++) {
            int i = st[k][j].sub;
            CHECK(st[k][j].ahead == cut[i], "window %d message %d: %zu bytes ahead on rail %d, want %zu", w, k,
                  st[k][j].ahead, i, cut[i]);
            cut[i] += st[k][j].len;
            busy[i] += (double)st[k][j].len / m->bw[i];
            t[k][j] = (uint64_t)(LAT_NS + busy[i]);
        }
    }
    for (int k = 0; k < win && k < 64; k++) {
        for (int j = 0; j < n[k]; j++)
            rmpi_sched_stripe_done(&m->s, &st[k][j]);
        rmpi_sched_feedback(&m->s, st[k], n[k], t[k]);
    }
    return split;
}

static void test_queued_windows(double slack)
{
    enum { WIN = 8, WINDOWS = 12 };
    static const double bw[2] = {FAST, SLOW};
    sim_t m;
    sim_init(&m, 2, bw, 0.5, 0.02);
    m.s.cfg.whole_slack = slack; /* windows of 8 x 4 MiB are never deep enough to send whole */
    int windows = -1;
    double spread = 1;
    for (int w = 0; w < WINDOWS; w++) {
        double busy[2];
        sim_window(&m, MSG, WIN, w, busy);
        spread = dabs(busy[0] - busy[1]) / (busy[0] > busy[1] ? busy[0] : busy[1]);
        if (windows < 0 && converged(&m, 0.02))
            windows = w + 1;
    }
    CHECK(m.s.nqueued == 0 && m.s.queued[0] == 0 && m.s.queued[1] == 0, "queues empty after every stripe is done");
    CHECK(windows > 0 && windows <= 3, "windows of %d queued messages: 4:1 reached after %d windows (%.4f %.4f)", WIN,
          windows, m.s.weight[0], m.s.weight[1]);
    CHECK(spread < 0.01, "the rails end a window %.2f%% apart", spread * 100);
    printf("  windows of %d queued messages at 4:1, slack %.2f: converged after %d windows, rails end %.3f%% apart\n",
           WIN, slack, windows, spread * 100);
}

/* Adaptive striping as the VC runs it: alpha 0.5, floor 0.02, smallest stripe 64 KiB. */
static rmpi_sched_cfg_t queue_cfg(void)
{
    rmpi_sched_cfg_t c = {0};
    c.stripe_policy = RMPI_STRIPE_POLICY_ADAPTIVE;
    c.alpha = 0.5;
    c.floor = 0.02;
    c.min_stripe = 65536;
    return c;
}

/* Messages too small to split go whole to the rail expected to finish them first, so a
 * stream of them uses every rail in proportion to its weight; a large message cut behind a
 * queue gives the busy rail less, so both end together. */
static void test_queue_choice(void)
{
    rmpi_sched_cfg_t c = queue_cfg();
    rmpi_sched_t s;
    static const double ratio[2][2] = {{0.5, 0.5}, {0.8, 0.2}};
    for (int r = 0; r < 2; r++) {
        rmpi_sched_init(&s, &c, 2, NULL);
        s.weight[0] = ratio[r][0];
        s.weight[1] = ratio[r][1];
        size_t bytes[2] = {0, 0};
        for (int k = 0; k < 100; k++) {
            rmpi_stripe_t st[RMPI_SCHED_MAX];
            int n = rmpi_sched_stripe(&s, 128 << 10, st, RMPI_SCHED_MAX);
            for (int j = 0; j < n; j++)
                bytes[st[j].sub] += st[j].len;
        }
        double want = 100.0 * (128 << 10) * ratio[r][1];
        CHECK(dabs((double)bytes[1] - want) <= (128 << 10),
              "100 messages of 128 KiB at %.1f:%.1f: %zu and %zu bytes per rail", ratio[r][0], ratio[r][1], bytes[0],
              bytes[1]);
    }
    rmpi_sched_init(&s, &c, 2, NULL);
    s.weight[0] = 0.8;
    s.weight[1] = 0.2;
    rmpi_stripe_t first[RMPI_SCHED_MAX], st[RMPI_SCHED_MAX];
    CHECK(rmpi_sched_stripe(&s, 256 << 10, first, RMPI_SCHED_MAX) == 1 && first[0].sub == 0,
          "256 KiB at 4:1 (a 51 KiB share for rail 1): whole on rail 0");
    int n = rmpi_sched_stripe(&s, 1 << 20, st, RMPI_SCHED_MAX);
    /* rail 0 is free at 256k / 0.8 = 320k: T = (1M + 256k) / 1 = 1280k, shares 768k and 256k */
    CHECK(n == 2 && st[0].sub == 0 && st[0].len == 768 << 10 && st[1].len == 256 << 10 && st[0].ahead == 256 << 10 &&
              st[1].ahead == 0,
          "1 MiB behind 256 KiB on rail 0: %zu (ahead %zu) + %zu", st[0].len, st[0].ahead, n > 1 ? st[1].len : 0);
    rmpi_sched_stripe_move(&s, &first[0], 1);
    CHECK(s.queued[0] == 768 << 10 && s.queued[1] == (256 << 10) + (256 << 10), "a moved stripe moves its bytes");
    rmpi_sched_stripe_done(&s, &first[0]);
    rmpi_sched_stripe_done(&s, &st[0]);
    rmpi_sched_stripe_done(&s, &st[1]);
    CHECK(s.nqueued == 0 && s.queued[0] == 0 && s.queued[1] == 0, "all done: empty queues");
}

/* At 10:1 a 256 KiB message rarely splits above the smallest stripe (64 KiB), so mostly
 * whole messages are measured: they must move the weights to the rates. Here the smallest
 * stripe is the message, so none ever splits. Starting from 4:1 (learned before the slow
 * rail slowed further), windows of 16 messages queued on two rails, the weights must reach
 * 10:1. */
static void test_whole_messages(void)
{
    enum { WIN = 16, WINDOWS = 40 };
    static const double bw[2] = {FAST, FAST / 10};
    const size_t len = 256 << 10;
    sim_t m;
    sim_init(&m, 2, bw, 0.5, 0.02);
    m.s.cfg.min_stripe = len;
    m.s.weight[0] = 0.8;
    m.s.weight[1] = 0.2;
    m.s.learned = 1;
    int split = 0, windows = -1;
    for (int w = 0; w < WINDOWS; w++) {
        double busy[2];
        split += sim_window(&m, len, WIN, w, busy);
        if (windows < 0 && dabs(m.s.weight[1] - 1.0 / 11) < 0.01)
            windows = w + 1;
    }
    CHECK(split == 0, "smallest stripe 256 KiB: never split (%d were)", split);
    CHECK(windows > 0 && dabs(m.s.weight[1] - 1.0 / 11) < 0.01,
          "whole messages at 10:1: weights %.4f %.4f, want %.4f (reached after %d windows)", m.s.weight[0],
          m.s.weight[1], 1.0 / 11, windows);
    printf("  whole 256 KiB messages at 10:1 from 4:1: within 0.01 of the share after %d windows of %d\n", windows,
           WIN);

    /* A lone stripe while another live rail has no rate yet moves nothing. */
    sim_init(&m, 2, bw, 0.5, 0.02);
    rmpi_stripe_t one = {0, 0, len};
    uint64_t t1 = 1000000;
    rmpi_sched_feedback(&m.s, &one, 1, &t1);
    CHECK(m.s.updates == 0 && m.s.weight[0] == 0.5, "a lone stripe, rail 1 unmeasured: no update");
}

/* What the provider still holds (rmpi_sched_seen) bounds the bytes counted ahead of the
 * next cut: stripes delivered but not yet completed no longer keep a rail looking busy, and
 * the view is forgotten after that cut. */
static void test_seen(void)
{
    rmpi_sched_cfg_t c = queue_cfg();
    rmpi_sched_t s;
    rmpi_sched_init(&s, &c, 2, NULL);
    s.weight[0] = 0.8;
    s.weight[1] = 0.2;
    rmpi_stripe_t a[RMPI_SCHED_MAX], b[RMPI_SCHED_MAX], d[RMPI_SCHED_MAX];
    s.queued[0] = 1 << 20; /* as if stripes of 1 MiB on each were cut and not done */
    s.queued[1] = 1 << 20;
    s.nqueued = 2;
    /* rail 0 free at 1M / 0.8, rail 1 at 1M / 0.2: 256 KiB goes whole to rail 0 */
    CHECK(rmpi_sched_stripe(&s, 256 << 10, a, RMPI_SCHED_MAX) == 1 && a[0].sub == 0 && a[0].ahead == 1 << 20,
          "queues as cut: rail 0 (got %d, ahead %zu)", a[0].sub, a[0].ahead);
    rmpi_sched_seen(&s, 0, (1 << 20) + (256 << 10));
    rmpi_sched_seen(&s, 1, 0); /* rail 1's bytes have all left */
    CHECK(rmpi_sched_stripe(&s, 256 << 10, b, RMPI_SCHED_MAX) == 1 && b[0].sub == 1 && b[0].ahead == 0,
          "rail 1 empty by its provider: the message goes there with nothing ahead (got %d, ahead %zu)", b[0].sub,
          b[0].ahead);
    CHECK(s.queued[1] == (1 << 20) + (256 << 10), "the cut still counts its stripe in queued[] (%llu)",
          (unsigned long long)s.queued[1]);
    CHECK(rmpi_sched_stripe(&s, 256 << 10, d, RMPI_SCHED_MAX) == 1 && d[0].sub == 0,
          "the view is forgotten after one cut: rail 0 again (got %d)", d[0].sub);
    rmpi_sched_seen(&s, 0, 1u << 30); /* a backlog above what was cut counts as what was cut */
    rmpi_sched_seen(&s, 1, 1u << 30);
    rmpi_stripe_t e[RMPI_SCHED_MAX];
    rmpi_sched_stripe(&s, 256 << 10, e, RMPI_SCHED_MAX);
    CHECK(e[0].ahead == s.queued[e[0].sub] - e[0].len, "a larger backlog: ahead %zu is what was cut there", e[0].ahead);
}

int main(void)
{
    printf("adaptive striping, %zu-byte messages, %.0f us latency:\n", MSG, LAT_NS / 1000);
    test_static_ratios(0.5);
    test_changes();
    test_floor(0.02);
    test_floor(0.03);
    test_failure();
    test_no_information();
    test_alpha_extremes();
    test_queued_windows(0);
    test_queued_windows(0.01);
    test_queue_choice();
    test_whole_messages();
    test_seen();
    return finish("sched_adaptive");
}
