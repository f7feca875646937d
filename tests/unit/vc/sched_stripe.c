/* Striping policies of the VC scheduler: every cut covers [0, len) exactly once in
 * subchannel order with no empty stripe; shares follow the policy within one 64-byte unit;
 * small shares fold into the largest; binding gives one stripe. */
#include "vc/sched.h"

#include <stdint.h>
#include <string.h>

#include "../unit_check.h"

static rmpi_sched_cfg_t cfg_of(int stripe, size_t min_stripe, int bind)
{
    rmpi_sched_cfg_t c = {0};
    c.small_policy = RMPI_SMALL_POLICY_RR;
    c.stripe_policy = stripe;
    c.window = 1;
    c.alpha = 0.5;
    c.floor = 0.02;
    c.min_stripe = min_stripe;
    c.bind = bind;
    return c;
}

static double dabs(double x) { return x < 0 ? -x : x; }

/* The partition property every cut must have, whatever the policy. */
static int check_partition(const rmpi_sched_t *s, const rmpi_stripe_t *st, int n, size_t len, int max, const char *what)
{
    int before = unit_failures;
    if (len == 0) {
        CHECK(n == 0, "%s: len 0 gave %d stripes", what, n);
        return n == 0;
    }
    CHECK(n >= 1 && n <= max, "%s: len %zu gave %d stripes (max %d)", what, len, n, max);
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        CHECK(st[k].off == off, "%s: len %zu stripe %d starts at %zu, want %zu", what, len, k, st[k].off, off);
        CHECK(st[k].len > 0, "%s: len %zu stripe %d is empty", what, len, k);
        CHECK(st[k].sub >= 0 && st[k].sub < s->nsub && s->up[st[k].sub], "%s: stripe %d on subchannel %d (not live)",
              what, k, st[k].sub);
        CHECK(k == 0 || st[k].sub > st[k - 1].sub, "%s: stripes not in subchannel order (%d after %d)", what, st[k].sub,
              k ? st[k - 1].sub : -1);
        CHECK(k == n - 1 || st[k].len % 64 == 0, "%s: len %zu stripe %d of %zu bytes is not a multiple of 64", what,
              len, k, st[k].len);
        CHECK(n == 1 || st[k].len >= s->cfg.min_stripe, "%s: len %zu stripe %d of %zu bytes is below min_stripe %zu",
              what, len, k, st[k].len, s->cfg.min_stripe);
        off += st[k].len;
    }
    CHECK(off == len, "%s: stripes cover %zu of %zu bytes", what, off, len);
    return unit_failures == before;
}

static const size_t special_len[] = {1,     2,     63,     64,      65,      127,           128,    129,  191,
                                     192,   255,   256,    257,     511,     4095,          4096,   4097, 65535,
                                     65536, 65537, 131072, 1000000, 1 << 20, (1 << 20) + 1, 4 << 20};

static void test_partition_random(void)
{
    unit_rng_t rng = {0xc0ffee1234ULL};
    static const size_t mins[] = {0, 1, 64, 100, 4096, 65536, 1 << 20};
    int trials = 0;
    for (int trial = 0; trial < 20000; trial++) {
        int nsub = (int)unit_range(&rng, 1, RMPI_SCHED_MAX);
        double hints[RMPI_SCHED_MAX];
        for (int i = 0; i < nsub; i++)
            hints[i] = (double)unit_range(&rng, 0, 1000) / 10.0;
        rmpi_sched_cfg_t c =
            cfg_of((int)unit_range(&rng, 0, 3), mins[unit_range(&rng, 0, 6)], (int)unit_range(&rng, 0, 9));
        rmpi_sched_t s;
        rmpi_sched_init(&s, &c, nsub, unit_range(&rng, 0, 4) ? hints : NULL);
        int nfail = (int)unit_range(&rng, 0, (uint64_t)nsub - 1);
        for (int f = 0; f < nfail; f++)
            rmpi_sched_fail(&s, (int)unit_range(&rng, 0, (uint64_t)nsub - 1));
        /* Adaptive weights anywhere on the simplex, as feedback could leave them. */
        if (c.stripe_policy == RMPI_STRIPE_POLICY_ADAPTIVE) {
            double sum = 0;
            for (int i = 0; i < nsub; i++) {
                s.weight[i] = s.up[i] ? (double)unit_range(&rng, 1, 1000) : 0;
                sum += s.weight[i];
            }
            for (int i = 0; i < nsub; i++)
                s.weight[i] /= sum;
        }
        size_t len;
        uint64_t pick = unit_range(&rng, 0, 3);
        if (pick == 0)
            len = special_len[unit_range(&rng, 0, sizeof special_len / sizeof special_len[0] - 1)];
        else if (pick == 1)
            len = (size_t)unit_range(&rng, 0, 1 << 12);
        else if (pick == 2)
            len = (size_t)unit_range(&rng, 0, 1 << 26);
        else
            len = (size_t)unit_range(&rng, 0, (uint64_t)1 << (sizeof(size_t) > 4 ? 40 : 31));
        int max = unit_range(&rng, 0, 3) ? RMPI_SCHED_MAX : (int)unit_range(&rng, 1, RMPI_SCHED_MAX);
        rmpi_stripe_t st[RMPI_SCHED_MAX];
        int n = rmpi_sched_stripe(&s, len, st, max);
        char what[96];
        snprintf(what, sizeof what, "trial %d policy %d nsub %d min %zu max %d", trial, c.stripe_policy, nsub,
                 c.min_stripe, max);
        check_partition(&s, st, n, len, max, what);
        trials++;
        CHECK_BAIL();
    }
    CHECK(trials == 20000, "random partitions stopped early");
}

/* Lengths right at the alignment edges, on every policy and subchannel count, no folding. */
static void test_partition_edges(void)
{
    double hints[RMPI_SCHED_MAX] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int pol = 0; pol < 4; pol++) {
        for (int nsub = 1; nsub <= RMPI_SCHED_MAX; nsub++) {
            rmpi_sched_cfg_t c = cfg_of(pol, 0, nsub + 1);
            rmpi_sched_t s;
            rmpi_sched_init(&s, &c, nsub, hints);
            for (size_t i = 0; i < sizeof special_len / sizeof special_len[0]; i++) {
                rmpi_stripe_t st[RMPI_SCHED_MAX];
                size_t len = special_len[i];
                int n = rmpi_sched_stripe(&s, len, st, RMPI_SCHED_MAX);
                check_partition(&s, st, n, len, RMPI_SCHED_MAX, "edges");
            }
            rmpi_stripe_t st[RMPI_SCHED_MAX];
            CHECK(rmpi_sched_stripe(&s, 0, st, RMPI_SCHED_MAX) == 0, "len 0: no stripe");
            CHECK(rmpi_sched_stripe(&s, 100, st, 0) == 0, "no room: no stripe");
        }
    }
    /* len 1, 63: one stripe, since a share of 0 bytes is never sent. */
    rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_EVEN, 0, 0);
    rmpi_sched_t s;
    rmpi_sched_init(&s, &c, 4, NULL);
    rmpi_stripe_t st[RMPI_SCHED_MAX];
    CHECK(rmpi_sched_stripe(&s, 1, st, RMPI_SCHED_MAX) == 1 && st[0].len == 1, "len 1 is one stripe");
    CHECK(rmpi_sched_stripe(&s, 63, st, RMPI_SCHED_MAX) == 1 && st[0].len == 63, "len 63 is one stripe");
    int n = rmpi_sched_stripe(&s, 65, st, RMPI_SCHED_MAX);
    CHECK(n == 1 && st[0].len == 65, "len 65 over 4 even: one 64-byte unit, so one stripe (got %d)", n);
    n = rmpi_sched_stripe(&s, 256, st, RMPI_SCHED_MAX);
    CHECK(n == 4 && st[0].len == 64 && st[3].len == 64, "len 256 over 4 even: 4 x 64 (got %d)", n);
}

static void test_even(void)
{
    unit_rng_t rng = {0xe7e7e7ULL};
    for (int nsub = 1; nsub <= RMPI_SCHED_MAX; nsub++) {
        rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_EVEN, 0, 0);
        rmpi_sched_t s;
        double skew[RMPI_SCHED_MAX] = {9, 1, 5, 2, 7, 3, 8, 4};
        rmpi_sched_init(&s, &c, nsub, skew); /* hints do not matter to even striping */
        for (int k = 0; k < 2000; k++) {
            size_t len = (size_t)unit_range(&rng, (uint64_t)64 * nsub, 1 << 30);
            rmpi_stripe_t st[RMPI_SCHED_MAX];
            int n = rmpi_sched_stripe(&s, len, st, RMPI_SCHED_MAX);
            check_partition(&s, st, n, len, RMPI_SCHED_MAX, "even");
            CHECK(n == nsub, "even nsub %d len %zu: %d stripes", nsub, len, n);
            for (int j = 0; j < n; j++)
                CHECK(dabs((double)st[j].len - (double)len / nsub) <= 64,
                      "even nsub %d len %zu: stripe %d is %zu bytes", nsub, len, j, st[j].len);
            CHECK_BAIL();
        }
    }
    /* 16 GiB in one message (where size_t allows): still an exact partition. */
    if (sizeof(size_t) >= 8) {
        size_t len = (size_t)16 << 30;
        for (int nsub = 1; nsub <= RMPI_SCHED_MAX; nsub++) {
            rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_EVEN, 1 << 20, 0);
            rmpi_sched_t s;
            rmpi_sched_init(&s, &c, nsub, NULL);
            rmpi_stripe_t st[RMPI_SCHED_MAX];
            for (size_t extra = 0; extra < 3; extra++) {
                size_t l = len + extra * 63 - extra;
                int n = rmpi_sched_stripe(&s, l, st, RMPI_SCHED_MAX);
                check_partition(&s, st, n, l, RMPI_SCHED_MAX, "even 16 GiB");
                for (int j = 0; j < n; j++)
                    CHECK(dabs((double)st[j].len - (double)l / nsub) <= 64, "16 GiB over %d: stripe %d is %zu", nsub, j,
                          st[j].len);
            }
        }
        /* The largest lengths size_t can hold do not overflow the arithmetic. */
        rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_WEIGHTED, 0, 0);
        double h[3] = {1, 2, 3};
        rmpi_sched_t s;
        rmpi_sched_init(&s, &c, 3, h);
        rmpi_stripe_t st[RMPI_SCHED_MAX];
        size_t big[] = {SIZE_MAX, SIZE_MAX - 63, SIZE_MAX / 2 + 1, SIZE_MAX - 64};
        for (int i = 0; i < 4; i++) {
            int n = rmpi_sched_stripe(&s, big[i], st, RMPI_SCHED_MAX);
            check_partition(&s, st, n, big[i], RMPI_SCHED_MAX, "near SIZE_MAX");
        }
    }
}

static void test_weighted(void)
{
    unit_rng_t rng = {0x3e16b7edULL};
    for (int trial = 0; trial < 3000; trial++) {
        int nsub = (int)unit_range(&rng, 2, RMPI_SCHED_MAX);
        double hints[RMPI_SCHED_MAX], sum = 0;
        for (int i = 0; i < nsub; i++) {
            hints[i] = (double)unit_range(&rng, 1, 100);
            sum += hints[i];
        }
        rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_WEIGHTED, 0, 0);
        rmpi_sched_t s;
        rmpi_sched_init(&s, &c, nsub, hints);
        size_t len = (size_t)unit_range(&rng, 1 << 20, (uint64_t)1 << 34);
        rmpi_stripe_t st[RMPI_SCHED_MAX];
        int n = rmpi_sched_stripe(&s, len, st, RMPI_SCHED_MAX);
        check_partition(&s, st, n, len, RMPI_SCHED_MAX, "weighted");
        CHECK(n == nsub, "weighted: %d stripes over %d subchannels", n, nsub);
        for (int k = 0; k < n; k++) {
            double want = (double)len * hints[st[k].sub] / sum;
            CHECK(dabs((double)st[k].len - want) <= 64, "weighted trial %d: subchannel %d got %zu, want %.1f", trial,
                  st[k].sub, st[k].len, want);
        }
        CHECK_BAIL();
    }
    /* Exact figures: 3:1 of 1 MiB, and 1:2:1 of 1 MiB + 10 (the tail goes to the last). */
    double h31[2] = {3, 1}, h121[3] = {1, 2, 1};
    rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_WEIGHTED, 0, 0);
    rmpi_sched_t s;
    rmpi_stripe_t st[RMPI_SCHED_MAX];
    rmpi_sched_init(&s, &c, 2, h31);
    int n = rmpi_sched_stripe(&s, 1 << 20, st, RMPI_SCHED_MAX);
    CHECK(n == 2 && st[0].len == 786432 && st[1].len == 262144, "3:1 of 1 MiB: %zu + %zu", st[0].len, st[1].len);
    rmpi_sched_init(&s, &c, 3, h121);
    n = rmpi_sched_stripe(&s, (1 << 20) + 10, st, RMPI_SCHED_MAX);
    CHECK(n == 3 && st[0].len == 262144 && st[1].len == 524288 && st[2].len == 262154,
          "1:2:1 of 1 MiB + 10: %zu %zu %zu", st[0].len, st[1].len, st[2].len);
    /* Even policy ignores the hints; adaptive starts equal whatever the hints. */
    c.stripe_policy = RMPI_STRIPE_POLICY_ADAPTIVE;
    rmpi_sched_init(&s, &c, 2, h31);
    CHECK(s.weight[0] == 0.5 && s.weight[1] == 0.5, "adaptive starts equal: %g %g", s.weight[0], s.weight[1]);
}

static void test_folding(void)
{
    rmpi_stripe_t st[RMPI_SCHED_MAX];
    rmpi_sched_t s;
    int n;
    /* Two equal rails, min 64 KiB: below 128 KiB one stripe (on the first), from it two. */
    rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_EVEN, 65536, 0);
    rmpi_sched_init(&s, &c, 2, NULL);
    n = rmpi_sched_stripe(&s, 100000, st, RMPI_SCHED_MAX);
    CHECK(n == 1 && st[0].sub == 0 && st[0].len == 100000, "even 100000 with min 64k: one stripe (got %d)", n);
    n = rmpi_sched_stripe(&s, 131071, st, RMPI_SCHED_MAX);
    CHECK(n == 1, "even 128k - 1 with min 64k: one stripe (got %d)", n);
    n = rmpi_sched_stripe(&s, 131072, st, RMPI_SCHED_MAX);
    CHECK(n == 2 && st[0].len == 65536 && st[1].len == 65536, "even 128k with min 64k: two 64k stripes (got %d)", n);

    /* The folded bytes go to the largest share, so a small message lands on the best rail. */
    double h13[2] = {1, 3};
    c = cfg_of(RMPI_STRIPE_POLICY_WEIGHTED, 65536, 0);
    rmpi_sched_init(&s, &c, 2, h13);
    n = rmpi_sched_stripe(&s, 200000, st, RMPI_SCHED_MAX);
    CHECK(n == 1 && st[0].sub == 1 && st[0].len == 200000,
          "1:3 of 200000, min 64k: whole on subchannel 1 (got %d on %d)", n, st[0].sub);
    for (size_t len = 1; len < 200; len++) {
        n = rmpi_sched_stripe(&s, len, st, RMPI_SCHED_MAX);
        CHECK(n == 1 && st[0].sub == 1, "1:3 len %zu: one stripe on the heavier subchannel (got %d on %d)", len, n,
              st[0].sub);
    }
    c.min_stripe = 0;
    rmpi_sched_init(&s, &c, 2, h13);
    n = rmpi_sched_stripe(&s, 1, st, RMPI_SCHED_MAX);
    CHECK(n == 1 && st[0].sub == 1, "1:3 len 1, no min: on the heavier subchannel (got %d)", st[0].sub);

    /* 6:3:1 of 1 MiB, min 128 KiB: the 10% share (~102 KiB) folds into the 60% one. */
    double h631[3] = {6, 3, 1};
    c = cfg_of(RMPI_STRIPE_POLICY_WEIGHTED, 131072, 0);
    rmpi_sched_init(&s, &c, 3, h631);
    n = rmpi_sched_stripe(&s, 1 << 20, st, RMPI_SCHED_MAX);
    CHECK(n == 2 && st[0].sub == 0 && st[1].sub == 1, "6:3:1 with min 128k: two stripes on 0 and 1 (got %d)", n);
    if (n == 2) {
        CHECK(dabs((double)st[1].len - 0.3 * (1 << 20)) <= 64, "6:3:1: subchannel 1 keeps its 30%% (%zu)", st[1].len);
        CHECK(st[0].len + st[1].len == 1 << 20, "6:3:1: the fold adds up");
    }
    /* The folded share was the last one: its ragged tail moves to the new last stripe. */
    n = rmpi_sched_stripe(&s, (1 << 20) + 5, st, RMPI_SCHED_MAX);
    check_partition(&s, st, n, (1 << 20) + 5, RMPI_SCHED_MAX, "6:3:1 + 5");
    CHECK(n == 2 && st[0].len % 64 == 0 && st[1].len % 64 == 5, "6:3:1 + 5: tail on the last stripe");

    /* Fewer slots than subchannels: the smallest shares fold first. */
    double h4321[4] = {4, 3, 2, 1};
    c = cfg_of(RMPI_STRIPE_POLICY_WEIGHTED, 0, 0);
    rmpi_sched_init(&s, &c, 4, h4321);
    n = rmpi_sched_stripe(&s, 1 << 20, st, 2);
    CHECK(n == 2 && st[0].sub == 0 && st[1].sub == 1, "4:3:2:1 in 2 slots: subchannels 0 and 1 (got %d)", n);
    check_partition(&s, st, n, 1 << 20, 2, "4:3:2:1 in 2 slots");
    n = rmpi_sched_stripe(&s, 1 << 20, st, 1);
    CHECK(n == 1 && st[0].sub == 0 && st[0].len == 1 << 20, "one slot: one stripe on the best");
}

static void test_binding_and_failure(void)
{
    rmpi_stripe_t st[RMPI_SCHED_MAX];
    rmpi_sched_t s;
    for (int nsub = 1; nsub <= 4; nsub++) {
        for (int bind = 0; bind < 8; bind++) {
            rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_BINDING, 0, bind);
            rmpi_sched_init(&s, &c, nsub, NULL);
            int n = rmpi_sched_stripe(&s, 12345678, st, RMPI_SCHED_MAX);
            CHECK(n == 1 && st[0].sub == bind % nsub && st[0].off == 0 && st[0].len == 12345678,
                  "binding nsub %d bind %d: one stripe on %d (got %d on %d)", nsub, bind, bind % nsub, n, st[0].sub);
        }
    }
    rmpi_sched_cfg_t c = cfg_of(RMPI_STRIPE_POLICY_BINDING, 0, 1);
    rmpi_sched_init(&s, &c, 3, NULL);
    rmpi_sched_fail(&s, 1);
    CHECK(rmpi_sched_stripe(&s, 1000, st, RMPI_SCHED_MAX) == 1 && st[0].sub == 2, "binding: failed bound -> next live");

    /* Failed subchannels never carry a stripe; the rest share the message. */
    for (int pol = RMPI_STRIPE_POLICY_EVEN; pol <= RMPI_STRIPE_POLICY_ADAPTIVE; pol++) {
        double h[4] = {1, 1, 2, 4};
        c = cfg_of(pol, 0, 0);
        rmpi_sched_init(&s, &c, 4, h);
        CHECK(rmpi_sched_fail(&s, 2) == 3, "policy %d: 3 live", pol);
        CHECK(rmpi_sched_fail(&s, 2) == 3, "policy %d: failing twice is harmless", pol);
        CHECK(rmpi_sched_fail(&s, 7) == 3 && rmpi_sched_fail(&s, -1) == 3, "policy %d: bad index ignored", pol);
        double sum = s.weight[0] + s.weight[1] + s.weight[3];
        CHECK(s.weight[2] == 0 && dabs(sum - 1) < 1e-12, "policy %d: weights renormalised (%g, sum %g)", pol,
              s.weight[2], sum);
        int n = rmpi_sched_stripe(&s, 1 << 20, st, RMPI_SCHED_MAX);
        check_partition(&s, st, n, 1 << 20, RMPI_SCHED_MAX, "after failure");
        CHECK(n == 3, "policy %d: three stripes after one failure (got %d)", pol, n);
        if (pol == RMPI_STRIPE_POLICY_WEIGHTED)
            CHECK(dabs((double)st[2].len - (1 << 20) * 4.0 / 6.0) <= 64, "weighted 1:1:4 after failure: %zu",
                  st[2].len);
        rmpi_sched_fail(&s, 0);
        rmpi_sched_fail(&s, 1);
        n = rmpi_sched_stripe(&s, 1 << 20, st, RMPI_SCHED_MAX);
        CHECK(n == 1 && st[0].sub == 3 && s.weight[3] == 1, "policy %d: last live takes all", pol);
        CHECK(rmpi_sched_fail(&s, 3) == 0, "policy %d: none left", pol);
        CHECK(rmpi_sched_stripe(&s, 1 << 20, st, RMPI_SCHED_MAX) == 0, "policy %d: nothing live, no stripe", pol);
    }
}

int main(void)
{
    test_partition_edges();
    test_partition_random();
    test_even();
    test_weighted();
    test_folding();
    test_binding_and_failure();
    return finish("sched_stripe");
}
