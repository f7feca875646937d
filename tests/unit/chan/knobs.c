/* Channel selection's knobs (RMPI_CHAN_*): the defaults give the parameters of
 * src/chan/README.md for a few job shapes, and every value a knob's type accepts but its
 * meaning does not is refused with a sentence naming the variable, the value and what is
 * allowed. */
#include "chan/select.h"
#include "rt/rt.h"

#include "../unit_check.h"

static void expect_refused(const char *what, const char *want)
{
    rmpi_chan_params_t p;
    char why[256] = "";
    int rc = rmpi_chan_params_from_knobs(&p, 8, 8, why, sizeof why);
    CHECK(rc == -1 && strstr(why, want), "%s: rc %d, message '%s', want '%s'", what, rc, why, want);
}

static void test_refused(void)
{
    const struct rmpi_knobs saved = rmpi_knobs;
#define BAD(field, value, want)                  \
    do {                                         \
        rmpi_knobs = saved;                      \
        rmpi_knobs.field = value;                \
        expect_refused(#field "=" #value, want); \
    } while (0)
    BAD(CHAN_INTERVAL, 0, "RMPI_CHAN_INTERVAL=0: expected milliseconds from 1 to 86400000 (a day).");
    BAD(CHAN_INTERVAL, 86400001, "RMPI_CHAN_INTERVAL=86400001: expected milliseconds");
    BAD(CHAN_SLOT, 0, "RMPI_CHAN_SLOT=0: expected milliseconds from 1 to RMPI_CHAN_INTERVAL (1000).");
    BAD(CHAN_SLOT, 1001, "RMPI_CHAN_SLOT=1001: expected milliseconds from 1 to RMPI_CHAN_INTERVAL (1000).");
    BAD(CHAN_SLOTS, 1, "RMPI_CHAN_SLOTS=1: expected -1 or a number of slots from 2 to 2048 (the seed's Table 2).");
    BAD(CHAN_SLOTS, 4096, "RMPI_CHAN_SLOTS=4096: expected -1 or");
    BAD(CHAN_SLOTS, 0, "RMPI_CHAN_SLOTS=0: expected -1 or");
    BAD(CHAN_TRIGGER, -5, "RMPI_CHAN_TRIGGER=-5: expected a number of received frames, 0 or more.");
    BAD(CHAN_GAMMA, -0.5, "RMPI_CHAN_GAMMA=-0.5: expected nanoseconds from 0 to 1e15.");
    BAD(CHAN_GAIN, 0.0 / 0.0, "RMPI_CHAN_GAIN=");
    BAD(CHAN_GAIN_SHM, -1, "RMPI_CHAN_GAIN_SHM=-1: expected nanoseconds from 0 to 1e15.");
    BAD(CHAN_GAIN_STREAM, 0.0 / 0.0, "RMPI_CHAN_GAIN_STREAM=");
    BAD(CHAN_GAIN_OFI, -2, "RMPI_CHAN_GAIN_OFI=-2: expected -1 (from the provider) or nanoseconds from 0 to 1e15.");
    BAD(CHAN_GAIN_OFI, -0.5, "RMPI_CHAN_GAIN_OFI=-0.5: expected -1");
    BAD(CHAN_GAIN_OFI, 0.0 / 0.0, "RMPI_CHAN_GAIN_OFI=");
    BAD(CHAN_POLL_COST, -1, "RMPI_CHAN_POLL_COST=-1: expected nanoseconds");
    BAD(CHAN_SETUP_COST, 1e16, "RMPI_CHAN_SETUP_COST=1e+16: expected nanoseconds");
    BAD(CHAN_POLL_COST_OFI, -1, "RMPI_CHAN_POLL_COST_OFI=-1: expected nanoseconds");
    BAD(CHAN_SETUP_COST_OFI, 0.0 / 0.0, "RMPI_CHAN_SETUP_COST_OFI=");
    BAD(CHAN_CREDIT_COST_OFI, -1.0, "RMPI_CHAN_CREDIT_COST_OFI=");
    BAD(CHAN_MAX_DEDICATED, -2, "RMPI_CHAN_MAX_DEDICATED=-2: expected -1 or a number of channels from 0 to 1000000.");
    BAD(CHAN_MAX_SETUP, 0, "RMPI_CHAN_MAX_SETUP=0: expected -1 or a number of channels from 1 to 1000000");
    BAD(CHAN_MAX_SETUP, -3, "RMPI_CHAN_MAX_SETUP=-3: expected");
    BAD(CHAN_SMALL_JOB, -2, "RMPI_CHAN_SMALL_JOB=-2: expected -1 (h), 0 (never) or a number of peers up to 1000000.");
    BAD(CHAN_SMALL_JOB, 1000001, "RMPI_CHAN_SMALL_JOB=1000001: expected -1 (h), 0 (never)");
    BAD(CHAN_QUEUE_KEEP_MS, -2,
        "RMPI_CHAN_QUEUE_KEEP_MS=-2: expected -1 (RMPI_CHAN_INTERVAL), 0 (at once) or milliseconds up to 86400000 (a day).");
    BAD(CHAN_QUEUE_KEEP_MS, 86400001, "RMPI_CHAN_QUEUE_KEEP_MS=86400001: expected -1");
    BAD(CHAN_SOURCES, 0, "RMPI_CHAN_SOURCES=0: expected -1 or a number of peers from 2 to 1000000");
    BAD(CHAN_SOURCES, -2, "RMPI_CHAN_SOURCES=-2: expected -1 or");
    /* 8 ranks on one node: h 4, and a full table keeps half its columns */
    BAD(CHAN_SOURCES, 9, "RMPI_CHAN_SOURCES=9: expected at least 2 x (RMPI_CHAN_MAX_DEDICATED + 1) = 10.");
#undef BAD
    rmpi_knobs = saved;
}

static void test_defaults(void)
{
    rmpi_chan_params_t p;
    char why[256] = "";
    CHECK(rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why) == 0, "defaults refused: %s", why);
    CHECK(p.h == 4 && p.tau == 4, "32 ranks on one node: h %d tau %d, want 4 4", p.h, p.tau);
    CHECK(p.sigma == 320 && p.slot_ns == 50000000ull && p.interval_ns == 1000000000ull && p.trigger == 1024,
          "windows: sigma %d slot %llu interval %llu trigger %llu", p.sigma, (unsigned long long)p.slot_ns,
          (unsigned long long)p.interval_ns, (unsigned long long)p.trigger);
    CHECK(p.r == 10 && p.w == 900 && p.p == 3 && p.rho == 200000 && p.gamma == 25 && p.c == 0,
          "costs r %g w %g p %g rho %g gamma %g c %g: not the values measured on shm (src/chan/README.md)", p.r, p.w,
          p.p, p.rho, p.gamma, p.c);
    /* q is the measured empty ring of today's poll loop, no longer p (timed on an older loop) */
    CHECK(p.q == RMPI_CHAN_SHM_IDLE_POLL_NS && p.q < p.p, "idle poll q %g, want %g (below p %g)", p.q,
          RMPI_CHAN_SHM_IDLE_POLL_NS, p.p);
    rmpi_knobs.CHAN_IDLE_POLL_COST = 2;
    rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why);
    CHECK(p.q == 2, "RMPI_CHAN_IDLE_POLL_COST=2: q %g", p.q);
    rmpi_knobs.CHAN_IDLE_POLL_COST = -1;
    rmpi_chan_params_from_knobs(&p, 4, 4, why, sizeof why);
    CHECK(p.h == 3, "4 ranks: h %d, want 3 (every peer)", p.h);
    /* set values win; tau follows h unless set */
    const struct rmpi_knobs saved = rmpi_knobs;
    rmpi_knobs.CHAN_MAX_DEDICATED = 7;
    rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why);
    CHECK(p.h == 7 && p.tau == 7, "MAX_DEDICATED=7: h %d tau %d", p.h, p.tau);
    rmpi_knobs.CHAN_MAX_SETUP = 2;
    rmpi_knobs.CHAN_SLOTS = 100;
    rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why);
    CHECK(p.tau == 2 && p.sigma == 100, "MAX_SETUP=2 SLOTS=100: tau %d sigma %d", p.tau, p.sigma);
    CHECK(p.sources == 0, "columns %d by default, want 0 (rmpi_chan_default_sources)", p.sources);
    rmpi_knobs.CHAN_SOURCES = 16;
    rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why);
    CHECK(p.sources == 16, "SOURCES=16: %d", p.sources);
    rmpi_knobs.CHAN_SOURCES = -1;
    rmpi_knobs.CHAN_MAX_DEDICATED = 0;
    rmpi_knobs.CHAN_MAX_SETUP = -1;
    CHECK(rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why) == 0 && p.h == 0 && p.tau == 1,
          "MAX_DEDICATED=0: rc, h %d tau %d (%s)", p.h, p.tau, why);
    rmpi_knobs = saved;
}

/* r over libfabric: the knob when set; else the shm-measured r on hardware and 0 where the
 * target's progress serves the ring's writes (a software provider such as tcp;ofi_rxm). */
static void test_ofi_gain(void)
{
    CHECK(rmpi_knobs.CHAN_GAIN_OFI == -1, "RMPI_CHAN_GAIN_OFI defaults to %g, want -1 (from the provider)",
          rmpi_knobs.CHAN_GAIN_OFI);
    CHECK(rmpi_chan_ofi_gain(-1, 1000, 1) == 0, "auto on a software provider: r %g, want 0",
          rmpi_chan_ofi_gain(-1, 1000, 1));
    CHECK(rmpi_chan_ofi_gain(-1, 1000, 0) == 1000, "auto on hardware RDMA: r %g, want RMPI_CHAN_GAIN (1000)",
          rmpi_chan_ofi_gain(-1, 1000, 0));
    CHECK(rmpi_chan_ofi_gain(-1, 150, 0) == 150, "auto on hardware follows RMPI_CHAN_GAIN: r %g, want 150",
          rmpi_chan_ofi_gain(-1, 150, 0));
    CHECK(rmpi_chan_ofi_gain(1000, 1000, 1) == 1000, "set to 1000 on a software provider: r %g",
          rmpi_chan_ofi_gain(1000, 1000, 1));
    CHECK(rmpi_chan_ofi_gain(0, 1000, 0) == 0, "set to 0 on hardware: r %g", rmpi_chan_ofi_gain(0, 1000, 0));
    /* with r = 0 no mapping gains: FIND_MAP over a busy window dedicates nobody */
    rmpi_chan_params_t p;
    char why[256] = "";
    CHECK(rmpi_chan_params_from_knobs(&p, 4, 4, why, sizeof why) == 0, "defaults refused: %s", why);
    p.r = rmpi_chan_ofi_gain(-1, p.r, 1);
    const rmpi_chan_src_t src[] = {{1, 0, 60000}, {2, 0, 30000}, {3, 0, 10000}};
    int up[3], down[3];
    rmpi_chan_plan_t plan;
    CHECK(rmpi_chan_find_map(src, 3, &p, up, down, &plan) == 0 && plan.nup == 0 && plan.ndedicated == 0,
          "r 0: FIND_MAP sets up %d and keeps %d dedicated, want none", plan.nup, plan.ndedicated);
    p.r = rmpi_chan_ofi_gain(-1, 1000, 0);
    CHECK(rmpi_chan_find_map(src, 3, &p, up, down, &plan) == 0 && plan.nup == 3 && up[0] == 1,
          "r 1000 (hardware): FIND_MAP sets up %d (first %d), want the 3 senders, busiest first", plan.nup, up[0]);
}

int main(void)
{
    unit_singleton();
    for (char **e = environ; *e; e++)
        CHECK(strncmp(*e, "RMPI_CHAN_", 10) != 0, "run without RMPI_CHAN_* in the environment: %s", *e);
    rmpi_knobs_init();
    test_refused();
    test_defaults();
    test_ofi_gain();
    return finish("chan_knobs");
}
