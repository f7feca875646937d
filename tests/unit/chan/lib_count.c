/* The library's count of received frames (rmpi_chan_lib_note, select.h) and its ticks
 * (select_run.c): the count trigger's run comes at the frame that completes the count,
 * wherever the idle path's ticks (every 1024 idle polls, core.c) fell before it. Before,
 * the entry ticked every 256th frame after the last tick of either kind, so an idle tick at
 * frame 100 moved the count ticks to 356, 612, 868, 1124: a peer of a 4-rank bench/channels
 * job that heard 1,113 frames never ran FIND_MAP. The selector is the library's
 * (rmpi_chan_lib) with a gain of 0, so no run dedicates anything and no switch is asked of
 * the (absent) transport; the clock is the real one, the slot 1 ms. */
#include <time.h>

#include "chan/select.h"
#include "util/util.h"

#include "../unit_check.h"

#define MS 1000000ull

static rmpi_chan_sel_t *install(uint64_t trigger)
{
    rmpi_chan_params_t p = {0};
    p.r = 0, p.p = 3, p.rho = 200000, p.gamma = 25, p.s = 1;
    p.h = 2, p.tau = 2;
    p.interval_ns = 100000 * MS, p.slot_ns = 1 * MS, p.sigma = 320, p.trigger = trigger;
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(4, &p, rmpi_time_ns());
    rmpi_chan_lib = rmpi_chan_lib_fast = s;
    rmpi_chan_lib_tick(); /* as rmpi_chan_lib_init leaves it */
    return s;
}

static void uninstall(rmpi_chan_sel_t *s)
{
    rmpi_chan_lib = rmpi_chan_lib_fast = NULL;
    rmpi_chan_sel_destroy(s);
}

static void frames(int n)
{
    for (int i = 0; i < n; i++)
        rmpi_chan_lib_note(1 + i % 3, 8);
}

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* idle ticks before the count is reached do not move the run off its frame */
static void test_idle_ticks(void)
{
    rmpi_chan_sel_t *s = install(1024);
    frames(100);
    rmpi_chan_lib_tick(); /* the idle path */
    frames(500);
    rmpi_chan_lib_tick();
    frames(423);
    CHECK(s->runs == 0 && s->total <= 1023, "1023 frames: %llu runs, total %llu", (unsigned long long)s->runs,
          (unsigned long long)s->total);
    frames(1);
    CHECK(s->runs == 1 && s->trigger_runs == 1 && s->total == 1024, "the 1024th frame: %llu runs, total %llu",
          (unsigned long long)s->runs, (unsigned long long)s->total);
    uninstall(s);
}

/* a count that is no multiple of the 256 frames between the entry's ticks, and the doubled
 * count after a run that changed nothing (a slot apart) */
static void test_odd_count(void)
{
    rmpi_chan_sel_t *s = install(1000);
    frames(999);
    CHECK(s->runs == 0, "999 frames: %llu runs", (unsigned long long)s->runs);
    frames(1);
    CHECK(s->runs == 1 && s->total == 1000 && s->trigger_now == 2000,
          "the 1000th frame: %llu runs, total %llu, next count %llu", (unsigned long long)s->runs,
          (unsigned long long)s->total, (unsigned long long)s->trigger_now);
    pause_ms(3); /* a slot */
    frames(1999);
    CHECK(s->runs == 1, "1999 more frames: %llu runs", (unsigned long long)s->runs);
    frames(1);
    CHECK(s->runs == 2 && s->total == 3000, "2000 more frames: %llu runs, total %llu", (unsigned long long)s->runs,
          (unsigned long long)s->total);
    /* the count is there but the slot is not: the entry looks again at least every 256 */
    frames(4000);
    pause_ms(3);
    frames(256);
    CHECK(s->runs == 3 && s->total == 7256, "4256 frames, a slot: %llu runs, total %llu", (unsigned long long)s->runs,
          (unsigned long long)s->total);
    uninstall(s);
}

int main(void)
{
    test_idle_ticks();
    test_odd_count();
    return finish("chan_lib_count");
}
