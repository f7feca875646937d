/* Small-frame (multiplexing) policies of the VC scheduler: exact pick sequences for 1-4
 * subchannels, failed subchannels skipped, spare subchannels asleep until woken, and two
 * schedulers fed the same calls agree. */
#include "vc/sched.h"

#include <math.h>
#include <string.h>

#include "../unit_check.h"

static rmpi_sched_cfg_t cfg_of(int small, int stripe, unsigned window, int bind)
{
    rmpi_sched_cfg_t c = {0};
    c.small_policy = small;
    c.stripe_policy = stripe;
    c.window = window;
    c.alpha = 0.5;
    c.floor = 0.02;
    c.min_stripe = 0;
    c.bind = bind;
    return c;
}

/* Compare n picks with a string of subchannel letters ('A' = 0). */
static void expect_seq(rmpi_sched_t *s, const char *want, const char *what)
{
    for (size_t k = 0; want[k]; k++) {
        int got = rmpi_sched_small(s);
        CHECK(got == want[k] - 'A', "%s: pick %zu is %c, want %c (sequence %s)", what, k, 'A' + got, want[k], want);
    }
}

static void test_binding(void)
{
    for (int nsub = 1; nsub <= 4; nsub++) {
        for (int bind = -2; bind < 9; bind++) {
            rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_BINDING, RMPI_STRIPE_POLICY_EVEN, 1, bind);
            rmpi_sched_t s;
            rmpi_sched_init(&s, &c, nsub, NULL);
            int want = ((bind % nsub) + nsub) % nsub;
            for (int k = 0; k < 10; k++) {
                int got = rmpi_sched_small(&s);
                CHECK(got == want, "binding nsub %d bind %d: pick %d, want %d", nsub, bind, got, want);
            }
        }
    }
    /* The bound subchannel fails: the next live one takes over, deterministically. */
    rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_BINDING, RMPI_STRIPE_POLICY_EVEN, 1, 2);
    rmpi_sched_t s;
    rmpi_sched_init(&s, &c, 4, NULL);
    expect_seq(&s, "CCC", "binding before failure");
    CHECK(rmpi_sched_fail(&s, 2) == 3, "3 live after one failure");
    expect_seq(&s, "DDD", "binding after C failed");
    CHECK(rmpi_sched_fail(&s, 3) == 2, "2 live after two failures");
    expect_seq(&s, "AAA", "binding after C, D failed (wraps)");
    rmpi_sched_fail(&s, 0);
    expect_seq(&s, "BBB", "binding, B the last one");
    CHECK(rmpi_sched_fail(&s, 1) == 0, "no live subchannel left");
    CHECK(rmpi_sched_small(&s) == -1, "no live subchannel: -1");
}

static void test_rr(void)
{
    static const char *want[] = {"", "AAAAAA", "ABABABAB", "ABCABCABC", "ABCDABCDABCD"};
    for (int nsub = 1; nsub <= 4; nsub++) {
        rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_RR, RMPI_STRIPE_POLICY_EVEN, 1, 3);
        rmpi_sched_t s;
        rmpi_sched_init(&s, &c, nsub, NULL);
        expect_seq(&s, want[nsub], "round robin");
    }
    rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_RR, RMPI_STRIPE_POLICY_EVEN, 1, 0);
    rmpi_sched_t s;
    rmpi_sched_init(&s, &c, 4, NULL);
    expect_seq(&s, "A", "round robin start");
    rmpi_sched_fail(&s, 1);
    expect_seq(&s, "CDACDACD", "round robin, B failed just before its turn");
    rmpi_sched_fail(&s, 0);
    expect_seq(&s, "CDCD", "round robin, A and B failed");
    rmpi_sched_fail(&s, 3);
    expect_seq(&s, "CCC", "round robin, only C");
}

static void test_wrr(void)
{
    /* Equal (or missing) hints: plain round robin. */
    for (int nsub = 1; nsub <= 4; nsub++) {
        static const char *want[] = {"", "AAAA", "ABABAB", "ABCABC", "ABCDABCD"};
        double zeros[4] = {0};
        rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_WRR, RMPI_STRIPE_POLICY_EVEN, 1, 0);
        rmpi_sched_t s, z;
        rmpi_sched_init(&s, &c, nsub, NULL);
        rmpi_sched_init(&z, &c, nsub, zeros);
        expect_seq(&s, want[nsub], "wrr without hints");
        expect_seq(&z, want[nsub], "wrr with zero hints");
    }

    /* 4:1. The smooth sequence is A A B A A, repeated: B exactly every fifth pick, so any
     * five consecutive picks hold four A and one B. (Runs of four A across the period
     * boundary are unavoidable at 4:1; the smoothness is that B never waits longer.) */
    double h41[2] = {4, 1};
    rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_WRR, RMPI_STRIPE_POLICY_EVEN, 1, 0);
    rmpi_sched_t s;
    rmpi_sched_init(&s, &c, 2, h41);
    int seq[100];
    for (int k = 0; k < 100; k++)
        seq[k] = rmpi_sched_small(&s);
    for (int k = 0; k < 100; k++)
        CHECK(seq[k] == ("AABAA"[k % 5] - 'A'), "wrr 4:1 pick %d is %d, want the A A B A A period", k, seq[k]);
    for (int k = 0; k + 5 <= 100; k++) {
        int a = 0;
        for (int j = 0; j < 5; j++)
            a += seq[k + j] == 0;
        CHECK(a == 4, "wrr 4:1: picks %d..%d hold %d A, want 4", k, k + 4, a);
    }

    /* The classic smooth-WRR example (nginx): 5:1:1 gives A A B A C A A; a plain weighted
     * round robin would send five A in a row. Hints given as bandwidths in bytes/s. */
    double h511[3] = {5e9, 1e9, 1e9};
    rmpi_sched_init(&s, &c, 3, h511);
    for (int p = 0; p < 4; p++)
        expect_seq(&s, "AABACAA", "wrr 5:1:1");

    /* 2:1:1 and 1:2 (order of hints matters, not of subchannels). */
    double h211[3] = {2, 1, 1}, h12[2] = {1, 2};
    rmpi_sched_init(&s, &c, 3, h211);
    expect_seq(&s, "ABCAABCA", "wrr 2:1:1");
    rmpi_sched_init(&s, &c, 2, h12);
    expect_seq(&s, "BABBABBA", "wrr 1:2");

    /* Proportions hold over long runs for awkward ratios too (3:1 with a 0.3/0.1 rounding). */
    double h31[4] = {0.3, 0.1, 0.2, 0.4};
    rmpi_sched_init(&s, &c, 4, h31);
    int cnt[4] = {0};
    for (int k = 0; k < 1000; k++)
        cnt[rmpi_sched_small(&s)]++;
    CHECK(cnt[0] == 300 && cnt[1] == 100 && cnt[2] == 200 && cnt[3] == 400, "wrr 3:1:2:4 over 1000 picks: %d %d %d %d",
          cnt[0], cnt[1], cnt[2], cnt[3]);

    /* A failed subchannel drops out; the rest keep their relative weights. */
    double h411[3] = {4, 1, 1};
    rmpi_sched_init(&s, &c, 3, h411);
    expect_seq(&s, "AABACAAABACA", "wrr 4:1:1");
    rmpi_sched_fail(&s, 0);
    expect_seq(&s, "BCBCBC", "wrr 4:1:1 with A failed");
    rmpi_sched_init(&s, &c, 3, h411);
    rmpi_sched_fail(&s, 1);
    expect_seq(&s, "AACAAAACAA", "wrr 4:1:1 with B failed (A A C A A period)");
    rmpi_sched_fail(&s, 0);
    rmpi_sched_fail(&s, 2);
    CHECK(rmpi_sched_small(&s) == -1, "wrr with nothing live: -1");
}

static void test_window(void)
{
    static const char *want[] = {"", "AAAAAAAAA", "AAABBBAAABBB", "AAABBBCCCAAA", "AAABBBCCCDDDAAAB"};
    for (int nsub = 1; nsub <= 4; nsub++) {
        rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_WINDOW, RMPI_STRIPE_POLICY_EVEN, 3, 1);
        rmpi_sched_t s;
        rmpi_sched_init(&s, &c, nsub, NULL);
        expect_seq(&s, want[nsub], "window 3");
    }
    rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_WINDOW, RMPI_STRIPE_POLICY_EVEN, 1, 0);
    rmpi_sched_t s;
    rmpi_sched_init(&s, &c, 3, NULL);
    expect_seq(&s, "ABCABC", "window 1 is round robin");
    c.window = 0;
    rmpi_sched_init(&s, &c, 2, NULL);
    expect_seq(&s, "ABAB", "window 0 counts as 1");

    /* The current subchannel fails mid-window: the next live one starts a full window. */
    c.window = 3;
    rmpi_sched_init(&s, &c, 3, NULL);
    expect_seq(&s, "AAAB", "window before failure");
    rmpi_sched_fail(&s, 1);
    expect_seq(&s, "CCCAAACCC", "window after B failed mid-window");
    rmpi_sched_fail(&s, 2);
    expect_seq(&s, "AAAAAAA", "window, only A left");
}

/* Two peers (or two runs) fed identical calls must make identical choices. */
static void test_determinism(void)
{
    unit_rng_t rng = {0x5eed5c4edULL};
    for (int trial = 0; trial < 200; trial++) {
        int nsub = (int)unit_range(&rng, 1, RMPI_SCHED_MAX);
        double hints[RMPI_SCHED_MAX];
        for (int i = 0; i < nsub; i++)
            hints[i] = (double)unit_range(&rng, 0, 40) / 4.0;
        rmpi_sched_cfg_t c = cfg_of((int)unit_range(&rng, 0, 3), (int)unit_range(&rng, 0, 3),
                                    (unsigned)unit_range(&rng, 0, 5), (int)unit_range(&rng, 0, 15));
        c.min_stripe = (size_t)unit_range(&rng, 0, 1 << 16);
        rmpi_sched_t a, b;
        rmpi_sched_init(&a, &c, nsub, hints);
        rmpi_sched_init(&b, &c, nsub, hints);
        for (int step = 0; step < 300; step++) {
            uint64_t op = unit_range(&rng, 0, 99);
            if (op < 60) {
                int pa = rmpi_sched_small(&a), pb = rmpi_sched_small(&b);
                CHECK(pa == pb, "trial %d step %d: small picks differ (%d, %d)", trial, step, pa, pb);
                CHECK(pa == -1 || (pa >= 0 && pa < nsub && a.up[pa]), "trial %d: pick %d is not live", trial, pa);
            } else if (op < 97) {
                rmpi_stripe_t sa[RMPI_SCHED_MAX], sb[RMPI_SCHED_MAX];
                size_t len = (size_t)unit_range(&rng, 1, 1 << 24);
                int na = rmpi_sched_stripe(&a, len, sa, RMPI_SCHED_MAX);
                int nb = rmpi_sched_stripe(&b, len, sb, RMPI_SCHED_MAX);
                int same = na == nb;
                for (int k = 0; same && k < na; k++)
                    same = sa[k].sub == sb[k].sub && sa[k].off == sb[k].off && sa[k].len == sb[k].len;
                CHECK(same, "trial %d step %d: stripes differ", trial, step);
                uint64_t t[RMPI_SCHED_MAX];
                for (int k = 0; k < na; k++)
                    t[k] = unit_range(&rng, 0, 1000000);
                rmpi_sched_feedback(&a, sa, na, t);
                rmpi_sched_feedback(&b, sb, nb, t);
            } else {
                int sub = (int)unit_range(&rng, 0, (uint64_t)nsub - 1);
                CHECK(rmpi_sched_fail(&a, sub) == rmpi_sched_fail(&b, sub), "trial %d: live counts differ", trial);
            }
            CHECK(memcmp(a.weight, b.weight, sizeof a.weight) == 0 && a.cur == b.cur && a.in_window == b.in_window,
                  "trial %d step %d: scheduler states differ", trial, step);
            CHECK_BAIL();
        }
    }
}

/* Spare streams: asleep they are never picked, striped to, nor bound to; woken they join
 * with the live ones' mean weight; the last live one never sleeps; a failed one never wakes. */
static void test_spares(void)
{
    rmpi_sched_t s;
    rmpi_sched_cfg_t c = cfg_of(RMPI_SMALL_POLICY_RR, RMPI_STRIPE_POLICY_ADAPTIVE, 1, 0);
    rmpi_sched_init(&s, &c, 4, NULL); /* A B: rail0 and its spare; C D: rail1 and its spare */
    rmpi_sched_sleep(&s, 1);
    rmpi_sched_sleep(&s, 3);
    CHECK(s.asleep[1] && s.asleep[3] && !s.up[1] && !s.up[3], "asleep");
    CHECK(s.weight[0] == 0.5 && s.weight[2] == 0.5 && s.weight[1] == 0, "weights over the live: %g %g", s.weight[0],
          s.weight[2]);
    expect_seq(&s, "ACACAC", "rr with spares asleep");
    rmpi_stripe_t st[4];
    int n = rmpi_sched_stripe(&s, 1 << 20, st, 4);
    CHECK(n == 2 && st[0].sub == 0 && st[1].sub == 2, "stripes only on the live: %d (%d %d)", n, st[0].sub, st[1].sub);
    rmpi_sched_stripe_done(&s, &st[0]);
    rmpi_sched_stripe_done(&s, &st[1]);
    s.weight[0] = 0.8; /* as adaptive striping may have left them */
    s.weight[2] = 0.2;
    CHECK(rmpi_sched_wake(&s, 1) == 3, "three live after waking B");
    CHECK(s.up[1] && !s.asleep[1] && s.rate[1] == 0, "B live, no rate");
    CHECK(fabs(s.weight[1] - 1.0 / 3) < 1e-9 && fabs(s.weight[0] + s.weight[1] + s.weight[2] - 1) < 1e-9,
          "B joins with the mean share: %g", s.weight[1]);
    CHECK(rmpi_sched_wake(&s, 1) == 3, "waking twice changes nothing");
    expect_seq(&s, "ABCAB", "rr after the wake");
    /* binding counts only the subchannels not asleep: bind 1 is C (the second rail), not B */
    rmpi_sched_cfg_t b = cfg_of(RMPI_SMALL_POLICY_BINDING, RMPI_STRIPE_POLICY_EVEN, 1, 1);
    rmpi_sched_init(&s, &b, 4, NULL);
    rmpi_sched_sleep(&s, 1);
    rmpi_sched_sleep(&s, 3);
    expect_seq(&s, "CCC", "binding 1 with spares asleep");
    /* the last live one never sleeps; a failed spare never wakes */
    rmpi_sched_init(&s, &c, 2, NULL);
    rmpi_sched_sleep(&s, 1);
    rmpi_sched_sleep(&s, 0);
    CHECK(s.up[0] && !s.asleep[0], "the last live one stays");
    CHECK(rmpi_sched_fail(&s, 1) == 1 && !s.asleep[1], "a failed spare is no spare");
    CHECK(rmpi_sched_wake(&s, 1) == 1 && !s.up[1], "and is never woken");
    expect_seq(&s, "AAA", "only A");
}

int main(void)
{
    test_spares();
    test_binding();
    test_rr();
    test_wrr();
    test_window();
    test_determinism();
    return finish("sched_policies");
}
