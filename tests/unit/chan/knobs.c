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
    BAD(CHAN_POLL_COST, -1, "RMPI_CHAN_POLL_COST=-1: expected nanoseconds");
    BAD(CHAN_SETUP_COST, 1e16, "RMPI_CHAN_SETUP_COST=1e+16: expected nanoseconds");
    BAD(CHAN_MAX_DEDICATED, -2, "RMPI_CHAN_MAX_DEDICATED=-2: expected -1 or a number of channels from 0 to 1000000.");
    BAD(CHAN_MAX_SETUP, 0, "RMPI_CHAN_MAX_SETUP=0: expected -1 or a number of channels from 1 to 1000000");
    BAD(CHAN_MAX_SETUP, -3, "RMPI_CHAN_MAX_SETUP=-3: expected");
#undef BAD
    rmpi_knobs = saved;
}

static void test_defaults(void)
{
    rmpi_chan_params_t p;
    char why[256] = "";
    CHECK(rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why) == 0, "defaults refused: %s", why);
    CHECK(p.h == 4 && p.tau == 4, "32 ranks on one node: h %d tau %d, want 4 4", p.h, p.tau);
    CHECK(p.sigma == 320 && p.slot_ns == 50000000ull && p.interval_ns == 1000000000ull && p.trigger == 4096,
          "windows: sigma %d slot %llu interval %llu trigger %llu", p.sigma, (unsigned long long)p.slot_ns,
          (unsigned long long)p.interval_ns, (unsigned long long)p.trigger);
    CHECK(p.r == 1000 && p.p == 3 && p.rho == 200000 && p.gamma == 25 && p.c == 0,
          "costs r %g p %g rho %g gamma %g c %g: not the values measured on shm (src/chan/README.md)", p.r, p.p, p.rho,
          p.gamma, p.c);
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
    rmpi_knobs.CHAN_MAX_DEDICATED = 0;
    rmpi_knobs.CHAN_MAX_SETUP = -1;
    CHECK(rmpi_chan_params_from_knobs(&p, 32, 32, why, sizeof why) == 0 && p.h == 0 && p.tau == 1,
          "MAX_DEDICATED=0: rc, h %d tau %d (%s)", p.h, p.tau, why);
    rmpi_knobs = saved;
}

int main(void)
{
    unit_singleton();
    for (char **e = environ; *e; e++)
        CHECK(strncmp(*e, "RMPI_CHAN_", 10) != 0, "run without RMPI_CHAN_* in the environment: %s", *e);
    rmpi_knobs_init();
    test_refused();
    test_defaults();
    return finish("chan_knobs");
}
