/* The library's count of received frames (rmpi_chan_lib_note, select.h) and its ticks
 * (select_run.c): the count trigger's run comes at the frame that completes the count,
 * wherever the idle path's ticks (every 1024 idle polls, core.c) fell before it. Before,
 * the entry ticked every 256th frame after the last tick of either kind, so an idle tick at
 * frame 100 moved the count ticks to 356, 612, 868, 1124: a peer of a 4-rank bench/channels
 * job that heard 1,113 frames never ran FIND_MAP. The selector is the library's
 * (rmpi_chan_lib) with a gain of 0, so no run dedicates anything and no switch is asked of
 * the (absent) transport; the clock is the real one, the slot 1 ms.
 * Dedicated peers counted by the receiver (rmpi_chan_lib_counters, the core's role played by
 * a fake here): their counts reach the table at every tick, in the slot the note would have
 * put them in, and when the peer is released; at most h peers are counted; a fixed peer is
 * not wanted, a selectable one is. */
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

static int fake_on[4];
static uint64_t fake_n[4], fake_b[4];

static void fake_count(int peer, int on)
{
    fake_on[peer] = on;
    fake_n[peer] = fake_b[peer] = 0;
}

static void fake_take(int peer, uint64_t *n, uint64_t *bytes)
{
    *n = fake_n[peer], *bytes = fake_b[peer];
    fake_n[peer] = fake_b[peer] = 0;
}

/* a frame as rmpi_core_deliver counts it */
static void deliver(int peer, size_t bytes, int n)
{
    for (int i = 0; i < n; i++) {
        if (fake_on[peer])
            fake_n[peer]++, fake_b[peer] += bytes;
        else
            rmpi_chan_lib_note(peer, bytes);
    }
}

/* whether the table holds these frames and bytes of peer over the last nslots slots */
static int table_has(rmpi_chan_sel_t *s, int peer, int nslots, uint64_t frames, uint64_t bytes)
{
    uint64_t n, b;
    rmpi_chan_sel_sum(s, peer, nslots, &n, &b);
    if (n != frames || b != bytes)
        fprintf(stderr, "peer %d over %d slots: %llu frames, %llu bytes\n", peer, nslots, (unsigned long long)n,
                (unsigned long long)b);
    return n == frames && b == bytes;
}

static void test_counted(void)
{
    static const rmpi_chan_counter_ops_t ops = {fake_count, fake_take};
    rmpi_chan_lib_counters(&ops);
    rmpi_chan_sel_t *s = install(1024);
    rmpi_chan_sel_fix(s, 0, RMPI_CHAN_DEDICATED);
    CHECK(!rmpi_chan_lib_wants(0) && rmpi_chan_lib_wants(1) && rmpi_chan_lib_wants(3),
          "wanted: fixed peer 0 %d, peer 1 %d, peer 3 %d", rmpi_chan_lib_wants(0), rmpi_chan_lib_wants(1),
          rmpi_chan_lib_wants(3));
    rmpi_chan_sel_set(s, 1, RMPI_CHAN_DEDICATED);
    rmpi_chan_lib_counted(1, RMPI_CHAN_DEDICATED);
    CHECK(fake_on[1] == 1, "a dedicated peer is not counted by the receiver");
    deliver(1, 8, 500);
    deliver(2, 16, 300); /* a tick at the 256th of these takes peer 1's count */
    CHECK(fake_n[1] == 0, "the tick left %llu of peer 1's frames untaken", (unsigned long long)fake_n[1]);
    rmpi_chan_lib_tick();
    CHECK(table_has(s, 1, 320, 500, 4000), "counted: want 500 frames, 4000 bytes");
    CHECK(table_has(s, 2, 320, 300, 4800), "noted: want 300 frames, 4800 bytes");
    CHECK(s->total == 800, "total %llu, want 800", (unsigned long long)s->total);
    /* counts land in the slot of the last tick, as noted frames do (cur), not the next one */
    rmpi_chan_lib_tick();
    deliver(1, 8, 100);
    deliver(2, 16, 10);
    pause_ms(3);
    rmpi_chan_lib_tick();
    CHECK(table_has(s, 1, 1, 0, 0), "counted, the slot after the frames: want 0 frames, 0 bytes");
    CHECK(table_has(s, 2, 1, 0, 0), "noted, the slot after the frames: want 0 frames, 0 bytes");
    CHECK(table_has(s, 1, 320, 600, 4800), "counted, all slots: want 600 frames, 4800 bytes");
    /* released: the rest is taken, and its frames are noted one by one again */
    deliver(1, 8, 50);
    rmpi_chan_lib_counted(1, RMPI_CHAN_SHARED);
    rmpi_chan_sel_set(s, 1, RMPI_CHAN_SHARED);
    CHECK(fake_on[1] == 0, "a released peer is still counted by the receiver");
    deliver(1, 8, 7);
    rmpi_chan_lib_tick();
    CHECK(table_has(s, 1, 320, 657, 5256), "released: want 657 frames, 5256 bytes");
    /* at most h (2) counted peers */
    for (int p = 1; p <= 3; p++) {
        rmpi_chan_sel_set(s, p, RMPI_CHAN_DEDICATED);
        rmpi_chan_lib_counted(p, RMPI_CHAN_DEDICATED);
    }
    CHECK(fake_on[1] + fake_on[2] + fake_on[3] == 2, "%d peers counted with h = 2",
          fake_on[1] + fake_on[2] + fake_on[3]);
    for (int p = 1; p <= 3; p++)
        rmpi_chan_lib_counted(p, RMPI_CHAN_SHARED);
    uninstall(s);
    CHECK(!rmpi_chan_lib_wants(1), "no selector, and a peer is wanted");
    static const rmpi_chan_counter_ops_t none = {0};
    rmpi_chan_lib_counters(&none);
}

int main(void)
{
    test_idle_ticks();
    test_odd_count();
    test_counted();
    return finish("chan_lib_count");
}
