/* Re-admission of a failed subchannel: the probe schedule (first try after RMPI_RAIL_PROBE,
 * each bounded by the wait before the next, doubling to the maximum), the scheduler starting
 * its weights over (rmpi_sched_readmit), and the VC's state machine on fake rails: up ->
 * failed (RAIL_DOWN sent with the connection's epoch byte, counted) -> the provider reports
 * a new connection (rmpi_vc_on_up) -> up again, counted, time down summed; RAIL_DOWN of the
 * old epoch after that is ignored, of the current one fails it again. */
#include <string.h>

#include "../unit_check.h"
#include "vc/vc.h"

#define MS 1000000ull

static void test_probe(void)
{
    rmpi_probe_t p;
    rmpi_probe_start(&p, 1000 * MS, 250.0 * MS);
    uint64_t want_at[] = {1250, 1500, 2000, 3000, 5000, 9000, 13000, 17000};
    uint64_t want_tmo[] = {250, 500, 1000, 2000, 4000, 4000, 4000, 4000};
    uint64_t t = 1000 * MS;
    for (int k = 0; k < 8; k++) {
        for (; t < want_at[k] * MS; t += MS)
            CHECK(rmpi_probe_due(&p, t, 4000.0 * MS) == 0, "try %d early at %llu ms", k, (unsigned long long)(t / MS));
        uint64_t tmo = rmpi_probe_due(&p, t, 4000.0 * MS);
        CHECK(tmo == want_tmo[k] * MS, "try %d at %llu ms: bound %llu ms, want %llu", k, (unsigned long long)(t / MS),
              (unsigned long long)(tmo / MS), (unsigned long long)want_tmo[k]);
        CHECK(rmpi_probe_due(&p, t, 4000.0 * MS) == 0, "try %d twice", k);
    }
    /* a failure starts the schedule over */
    rmpi_probe_start(&p, t, 250.0 * MS);
    CHECK(rmpi_probe_due(&p, t + 249 * MS, 4000.0 * MS) == 0 &&
              rmpi_probe_due(&p, t + 250 * MS, 4000.0 * MS) == 250 * MS,
          "restarted schedule");
}

static void test_sched(void)
{
    double hints[3] = {8, 2, 1};
    rmpi_sched_cfg_t cfg = {RMPI_SMALL_POLICY_RR, RMPI_STRIPE_POLICY_ADAPTIVE, 1, 0.5, 0.0, 4096, 0};
    rmpi_sched_t s;
    rmpi_sched_init(&s, &cfg, 3, hints);
    /* learn 8:2:1-ish weights */
    rmpi_stripe_t st[3] = {{0, 0, 8 << 20, 0}, {1, 8 << 20, 2 << 20, 0}, {2, 10 << 20, 1 << 20, 0}};
    uint64_t t[3] = {1000000, 4000000, 4000000};
    rmpi_sched_feedback(&s, st, 3, t);
    CHECK(s.updates == 1 && s.learned == 1, "one update");
    CHECK(rmpi_sched_fail(&s, 2) == 2, "two left");
    CHECK(s.weight[2] == 0 && s.weight[0] + s.weight[1] > 0.999, "failed weight goes to the others");
    CHECK(rmpi_sched_readmit(&s, 2) == 3 && s.up[2], "three again");
    for (int i = 0; i < 3; i++)
        CHECK(s.weight[i] > 0.333 && s.weight[i] < 0.334, "adaptive starts equal: weight[%d] %g", i, s.weight[i]);
    CHECK(s.learned == 0 && s.updates == 1 && s.rate[2] == 0, "learning starts over, the count of updates stays");
    CHECK(rmpi_sched_readmit(&s, 2) == 3 && rmpi_sched_readmit(&s, 7) == 3, "a live or unknown one: nothing");
    /* the next measurement replaces the weights whole (alpha 1 on a fresh start) */
    rmpi_sched_feedback(&s, st, 3, t);
    CHECK(s.weight[0] > 2 * s.weight[1], "measured again: %g %g %g", s.weight[0], s.weight[1], s.weight[2]);
    cfg.stripe_policy = RMPI_STRIPE_POLICY_WEIGHTED;
    rmpi_sched_init(&s, &cfg, 3, hints);
    rmpi_sched_fail(&s, 0);
    rmpi_sched_readmit(&s, 0);
    CHECK(s.weight[0] > 0.72 && s.weight[0] < 0.73, "weighted: back to its hint 8/11, got %g", s.weight[0]);
}

/* fake rails: record frames */
static int nsent, last_type, last_psn, last_flags, last_rail;
static int fake_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int n)
{
    rmpi_vc_hdr_t h;
    memcpy(&h, iov[0].iov_base, sizeof h);
    nsent++;
    last_type = h.type;
    last_psn = h.psn;
    last_flags = h.flags;
    last_rail = rail->index;
    return 0;
}
static int nabandon;
static void fake_abandon(rmpi_rail_t *rail, int peer, const char *why) { nabandon++; }
static const struct rmpi_net_ops fake_ops = {.version = RMPI_NET_OPS_VERSION,
                                             .name = "fake",
                                             .send = fake_send,
                                             .abandon = fake_abandon};
static rmpi_rail_t rails[2];

static void deliver(rmpi_vc_t *vc, const void *frame, size_t len) {}

static void test_vc(void)
{
    for (int i = 0; i < 2; i++) {
        rails[i].ops = &fake_ops;
        rails[i].index = i;
    }
    rmpi_vc_init(0, 2, deliver, 64);
    rmpi_vc_t *vc = calloc(1, sizeof *vc + 64);
    vc->core = vc + 1;
    vc->peer = 1;
    vc->nsub = 2;
    vc->sub[0].rail = &rails[0];
    vc->sub[1].rail = &rails[1];
    rmpi_sched_cfg_t cfg = {RMPI_SMALL_POLICY_RR, RMPI_STRIPE_POLICY_ADAPTIVE, 1, 0.5, 0.0, 4096, 0};
    rmpi_sched_init(&vc->sched, &cfg, 2, NULL);
    rmpi_vc_table[1] = vc;
    rmpi_vc_on_up(&rails[0], 1, 1);
    rmpi_vc_on_up(&rails[1], 1, 1);
    CHECK(vc->sub[1].epoch == 1 && vc->sub[1].readmits == 0, "first connection: epoch noted, nothing re-admitted");
    for (int cycle = 1; cycle <= 3; cycle++) {
        nsent = 0;
        CHECK(rmpi_vc_rail_failed(vc, 1, "test") == 1, "cycle %d: one left", cycle);
        CHECK(nsent == 1 && last_type == RMPI_VC_RAIL_DOWN && last_psn == 1 && last_flags == cycle && last_rail == 0,
              "cycle %d: RAIL_DOWN(sub 1, epoch %d) on rail 0: sent %d, type %#x psn %d epoch %d rail %d", cycle, cycle,
              nsent, last_type, last_psn, last_flags, last_rail);
        CHECK(!vc->sched.up[1] && vc->sub[1].failures == (uint64_t)cycle, "cycle %d: down, counted", cycle);
        CHECK(rmpi_vc_rail_failed(vc, 1, "again") == 1 && vc->sub[1].failures == (uint64_t)cycle,
              "a second report of the same failure counts nothing");
        usleep(2000);
        rmpi_vc_on_up(&rails[1], 1, (uint32_t)cycle + 1);
        CHECK(vc->sched.up[1] && vc->sub[1].readmits == (uint64_t)cycle, "cycle %d: up again, counted", cycle);
        CHECK(vc->sub[1].epoch == cycle + 1, "cycle %d: new epoch", cycle);
        CHECK(vc->sub[1].down_ns >= (uint64_t)cycle * 2 * MS && vc->sub[1].down_ns < (uint64_t)cycle * 1000 * MS,
              "cycle %d: time down %llu ns", cycle, (unsigned long long)vc->sub[1].down_ns);
        CHECK(vc->sched.weight[1] > 0.49 && vc->sched.learned == 0, "cycle %d: weights start over", cycle);
    }
    /* the peer's word about the old connection (epoch 3) arrives late: ignored */
    rmpi_vc_hdr_t old = {1, RMPI_VC_RAIL_DOWN, 3};
    nabandon = 0;
    rmpi_vc_on_frame(&rails[0], 1, &old, sizeof old);
    CHECK(vc->sched.up[1] && nabandon == 0, "RAIL_DOWN of epoch 3 took down the connection of epoch 4");
    rmpi_vc_hdr_t cur = {1, RMPI_VC_RAIL_DOWN, 4};
    nsent = 0;
    rmpi_vc_on_frame(&rails[0], 1, &cur, sizeof cur);
    CHECK(!vc->sched.up[1] && nabandon == 1 && nsent == 0, "RAIL_DOWN of epoch 4: down, connection abandoned, no echo");
    CHECK(vc->sub[1].failures == 4, "counted");
    rmpi_vc_on_up(&rails[0], 1, 9);
    CHECK(vc->sched.up[0] && vc->sub[0].readmits == 0, "a new connection of a live rail re-admits nothing");
}

int main(void)
{
    unit_singleton();
    rmpi_knobs_init();
    rmpi_pm_info_t pm;
    if (rmpi_pmi_init(&pm) || rmpi_topo_init(&pm))
        return 1;
    test_probe();
    test_sched();
    test_vc();
    return finish("vc_readmit");
}
