/* rt/knobs.c: knobs parsed from the environment once (SIZE with suffixes, BOOL spellings,
 * INT bases), defaults for the others, and scoped sizes (RMPI_EAGER_LIMIT=intra:64k,...):
 * the value of the scope asked for, else the plain one, else the caller's default. */
#include <stdlib.h>

#include "../unit_check.h"
#include "rt/rt.h"

static void scoped(void)
{
    static const struct {
        const char *value, *scope;
        long long dflt, want;
    } t[] = {
        {"64k", "intra", 7, 65536},
        {"64k", "wan", 7, 65536},
        {"intra:64k,inter:16k", "intra", 7, 65536},
        {"intra:64k,inter:16k", "inter", 7, 16384},
        {"intra:64k,inter:16k", "wan", 7, 7},
        {"inter:4k,8k", "inter", 7, 4096},
        {"inter:4k,8k", "intra", 7, 8192},
        {"8k,inter:4k", "inter", 7, 4096},
        {"8k,inter:4k", "intra", 7, 8192},
        {"inter:0", "inter", 7, 0},
        {"inter:1m,intra:2m,inter:3m", "inter", 7, 1 << 20}, /* the first match wins */
        {"in:1k", "inter", 7, 7},                            /* scope names match whole */
        {"interx:1k", "inter", 7, 7},
        {"intra:1g", "intra", 7, 1ll << 30},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        long long v = rmpi_knob_scoped_size("TEST", t[i].value, t[i].scope, t[i].dflt);
        CHECK(v == t[i].want, "scoped(\"%s\", %s) = %lld, expected %lld", t[i].value, t[i].scope, v, t[i].want);
    }
    /* the value is not modified (it is the knob's own string) */
    const char *v = "intra:64k,inter:16k";
    char copy[32];
    snprintf(copy, sizeof copy, "%s", v);
    rmpi_knob_scoped_size("TEST", copy, "inter", 0);
    CHECK(!strcmp(copy, v), "the value became '%s'", copy);
}

int main(void)
{
    unit_singleton();
    /* every type of knob from the environment, before the one rmpi_knobs_init */
    setenv("RMPI_UNEXP_MAX", "3m", 1);
    setenv("RMPI_SHM_RING_SIZE", "1048576", 1);
    setenv("RMPI_TCP_CHUNK", "2K", 1);
    setenv("RMPI_HDR_CACHE", "off", 1);
    setenv("RMPI_REPORT", "Yes", 1);
    setenv("RMPI_OFI_TX_SIZE", "0x40", 1);
    setenv("RMPI_EAGER_LIMIT", "intra:32k,inter:8k", 1);
    unsetenv("RMPI_STRIPE_MIN");
    unsetenv("RMPI_OFI_CQ_SIZE");
    rmpi_knobs_init();
    CHECK(rmpi_knobs.UNEXP_MAX == 3ll << 20, "UNEXP_MAX %lld", rmpi_knobs.UNEXP_MAX);
    CHECK(rmpi_knobs.SHM_RING_SIZE == 1 << 20, "SHM_RING_SIZE %lld", rmpi_knobs.SHM_RING_SIZE);
    CHECK(rmpi_knobs.TCP_CHUNK == 2048, "TCP_CHUNK %lld", rmpi_knobs.TCP_CHUNK);
    CHECK(rmpi_knobs.HDR_CACHE == 0, "HDR_CACHE=off gives %d", rmpi_knobs.HDR_CACHE);
    CHECK(rmpi_knobs.REPORT == 1, "REPORT=Yes gives %d", rmpi_knobs.REPORT);
    CHECK(rmpi_knobs.OFI_TX_SIZE == 64, "OFI_TX_SIZE=0x40 gives %lld", rmpi_knobs.OFI_TX_SIZE);
    /* unset: the default of knobs.def */
    CHECK(rmpi_knobs.STRIPE_MIN == 64 << 10, "STRIPE_MIN default %lld, knobs.def says 64k", rmpi_knobs.STRIPE_MIN);
    CHECK(rmpi_knobs.OFI_CQ_SIZE == 0, "OFI_CQ_SIZE default %lld", rmpi_knobs.OFI_CQ_SIZE);
    CHECK(rmpi_knob_scoped_size("EAGER_LIMIT", rmpi_knobs.EAGER_LIMIT, "inter", 1) == 8192 &&
              rmpi_knob_scoped_size("EAGER_LIMIT", rmpi_knobs.EAGER_LIMIT, "intra", 1) == 32768 &&
              rmpi_knob_scoped_size("EAGER_LIMIT", rmpi_knobs.EAGER_LIMIT, "wan", 1) == 1,
          "EAGER_LIMIT '%s' by scope", rmpi_knobs.EAGER_LIMIT);
    /* parsed once: a later change of the environment is not seen */
    setenv("RMPI_TCP_CHUNK", "4k", 1);
    rmpi_knobs_init();
    CHECK(rmpi_knobs.TCP_CHUNK == 2048, "a second rmpi_knobs_init parsed again (TCP_CHUNK %lld)", rmpi_knobs.TCP_CHUNK);
    scoped();
    return finish("rt_knobs");
}
