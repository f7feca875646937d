/* FIND_MAP (seed adaptive-transport-selection, Fig. 6) with two kinds: hand-computed
 * mappings (the seed's Fig. 7 example among them), the caps h and tau, gamma, the polling
 * and credit terms, releases, ties, and every small case against a brute-force search over
 * all mappings. Linked with rmpi_chan_select alone. */
#include "chan/select.h"

#include "../unit_check.h"

/* libm stays out: the selector links with libc alone */
static double fabs_(double x) { return x < 0 ? -x : x; }
static double fmax_(double a, double b) { return a > b ? a : b; }

/* Table 2's costs in ns: r 0.15 us, p 0.01 us, rho 10 us, gamma 0.025 us; no credits. */
static rmpi_chan_params_t table2(int h, int tau)
{
    rmpi_chan_params_t p = {0};
    p.r = 150, p.p = 10, p.c = 0, p.s = 16, p.rho = 10000, p.gamma = 25;
    p.h = h, p.tau = tau;
    p.interval_ns = 1000000000, p.slot_ns = 50000000, p.sigma = 320;
    return p;
}

static int in(const int *a, int n, int peer)
{
    for (int i = 0; i < n; i++)
        if (a[i] == peer)
            return 1;
    return 0;
}

/* Runs FIND_MAP and checks the peers made dedicated and released (as sorted lists). */
static rmpi_chan_plan_t expect(const char *what, const rmpi_chan_src_t *src, int n, const rmpi_chan_params_t *p,
                               const int *want_up, int nup, const int *want_down, int ndown)
{
    int up[64], down[64];
    rmpi_chan_plan_t pl;
    CHECK(rmpi_chan_find_map(src, n, p, up, down, &pl) == 0, "%s: find_map failed", what);
    CHECK(pl.nup == nup && pl.ndown == ndown, "%s: %d up, %d down; want %d, %d (gain %.3f ns)", what, pl.nup, pl.ndown,
          nup, ndown, pl.gain);
    for (int i = 0; i < nup && i < pl.nup; i++)
        CHECK(in(up, pl.nup, want_up[i]), "%s: peer %d not made dedicated", what, want_up[i]);
    for (int i = 0; i < ndown && i < pl.ndown; i++)
        CHECK(in(down, pl.ndown, want_down[i]), "%s: peer %d not released", what, want_down[i]);
    return pl;
}

static int close_to(double a, double b) { return fabs_(a - b) <= 1e-6 * (fabs_(b) + 1); }

/* Fig. 7: rank 0 hears from ranks 1-4, ranks 1 and 2 most; with two channels available the
 * best mapping gives them the fast channels. The seed gives ranks 3 and 4 DC-RDMA, a kind
 * with no counterpart here: they stay on the shared channel. By hand (ns): max n = 1000, so
 * each dedicated channel costs 1000 * 10 / 2 = 5000 of polling; x_1 = 1000 * 150 - 10000 -
 * 5000 = 135000, x_2 = x_1 + 800 * 150 - 10000 - 5000 = 240000; gain 240000 / 2300. */
static void test_fig7(void)
{
    const rmpi_chan_src_t src[] = {{1, 0, 1000}, {2, 0, 800}, {3, 0, 300}, {4, 0, 200}};
    rmpi_chan_params_t p = table2(2, 256);
    rmpi_chan_plan_t pl = expect("Fig. 7, h = 2", src, 4, &p, (int[]){1, 2}, 2, NULL, 0);
    CHECK(close_to(pl.x_new, 240000) && close_to(pl.x_cur, 0) && close_to(pl.gain, 240000.0 / 2300),
          "Fig. 7: x_new %.1f x_cur %.1f gain %.3f", pl.x_new, pl.x_cur, pl.gain);
    CHECK(pl.apply && pl.ndedicated == 2, "Fig. 7: apply %d, %d dedicated", pl.apply, pl.ndedicated);
    /* with h = 4 ranks 3 (+30000) and 4 (+15000) pay too: x = 285000 */
    p.h = 4;
    pl = expect("Fig. 7, h = 4", src, 4, &p, (int[]){1, 2, 3, 4}, 4, NULL, 0);
    CHECK(close_to(pl.x_new, 285000), "Fig. 7 h = 4: x_new %.1f", pl.x_new);
    /* the order of the input does not matter */
    const rmpi_chan_src_t rev[] = {{4, 0, 200}, {3, 0, 300}, {2, 0, 800}, {1, 0, 1000}};
    p.h = 2;
    expect("Fig. 7 reversed", rev, 4, &p, (int[]){1, 2}, 2, NULL, 0);
    /* the mapping in place: nothing to change, no gain */
    const rmpi_chan_src_t cur[] = {{1, 1, 1000}, {2, 1, 800}, {3, 0, 300}, {4, 0, 200}};
    pl = expect("Fig. 7 applied", cur, 4, &p, NULL, 0, NULL, 0);
    CHECK(close_to(pl.x_cur, 1000 * 150 + 800 * 150 - 2 * 5000) && pl.gain == 0 && !pl.apply,
          "Fig. 7 applied: x_cur %.1f gain %.3f", pl.x_cur, pl.gain);
}

/* One busy source: x = n * (150 - 5) - 10000, gain = 145 - 10000 / n, which passes gamma
 * (25) from n = 84 on (n = 83: 24.52). */
static void test_gamma(void)
{
    rmpi_chan_params_t p = table2(4, 4);
    rmpi_chan_src_t one = {7, 0, 83};
    rmpi_chan_plan_t pl = expect("n = 83", &one, 1, &p, NULL, 0, NULL, 0);
    CHECK(close_to(pl.gain, 145 - 10000.0 / 83) && !pl.apply, "n = 83: gain %.3f apply %d", pl.gain, pl.apply);
    one.n = 84;
    pl = expect("n = 84", &one, 1, &p, (int[]){7}, 1, NULL, 0);
    CHECK(close_to(pl.gain, 145 - 10000.0 / 84), "n = 84: gain %.3f", pl.gain);
    p.gamma = 30;
    expect("n = 84, gamma 30", &one, 1, &p, NULL, 0, NULL, 0);
    p.gamma = 0;
    one.n = 70; /* 70 * 145 = 10150 > 10000: worth it at gamma 0 */
    expect("n = 70, gamma 0", &one, 1, &p, (int[]){7}, 1, NULL, 0);
    one.n = 68; /* 9860 < 10000: the set-up is never paid back */
    expect("n = 68, gamma 0", &one, 1, &p, NULL, 0, NULL, 0);
}

/* The receives of sources without a column (peer -1) count in the total only: one busy
 * source of 200 (x = 200 * 145 - 10000 = 19000) beside 500 such receives gains
 * 19000 / 700 = 27.1 per message and is dedicated; beside 800, 19000 / 1000 = 19 < gamma.
 * The -1 entry is never dedicated and its n, though the largest, is not the polling term's
 * max (else 800 * 10 / 2 would cost 4000 more). */
static void test_spill(void)
{
    rmpi_chan_params_t p = table2(4, 4);
    rmpi_chan_src_t src[] = {{-1, 0, 500, 0}, {7, 0, 200, 0}};
    rmpi_chan_plan_t pl = expect("spill 500", src, 2, &p, (int[]){7}, 1, NULL, 0);
    CHECK(close_to(pl.gain, 19000.0 / 700) && pl.ndedicated == 1, "spill 500: gain %.3f, %d dedicated", pl.gain,
          pl.ndedicated);
    src[0].n = 800;
    pl = expect("spill 800", src, 2, &p, NULL, 0, NULL, 0);
    CHECK(close_to(pl.gain, 19000.0 / 1000) && !pl.apply, "spill 800: gain %.3f apply %d", pl.gain, pl.apply);
}

/* The polling term weighs every dedicated channel by the busiest source's receives: next to
 * a source of 10000 receives, one of 100 costs 50000 of polling and brings 15000 - 10000. */
static void test_polling(void)
{
    rmpi_chan_params_t p = table2(8, 8);
    const rmpi_chan_src_t src[] = {{1, 0, 10000}, {2, 0, 100}, {3, 0, 100}};
    rmpi_chan_plan_t pl = expect("busy + quiet", src, 3, &p, (int[]){1}, 1, NULL, 0);
    CHECK(close_to(pl.x_new, 10000 * 150 - 10000 - 50000), "x_new %.1f", pl.x_new);
    /* credits: c / s = 3000 / 16 = 187.5 > r, so no dedicated channel ever pays */
    p.c = 3000;
    expect("credits dearer than the gain", src, 3, &p, NULL, 0, NULL, 0);
    /* c / s = 50: x = 10000 * 100 - 10000 - 50000 */
    p.c = 800;
    pl = expect("credits", src, 3, &p, (int[]){1}, 1, NULL, 0);
    CHECK(close_to(pl.x_new, 10000 * 100 - 10000 - 50000), "credits: x_new %.1f", pl.x_new);
}

/* The idle ring (q): rank 1 sent 1000 frames, rank 2, dedicated in an earlier phase, none.
 * By hand, Table 2's costs (p 10, gamma 25) and q = 10 ns: every pass, idle or not, waits for
 * one of rank 1's frames, so rank 1's ring is never charged (1000 * 150 - 1000 * 10 / 2 =
 * 145000) and rank 2's costs 5000 + 10 * (1000 + I) (its empty polls at every pass).
 * Releasing it saves 15 + I / 100 ns per message, past gamma from I > 1000 idle polls. The
 * seed's model (q = 0) saves 5 ns per message (A.1's max-n term alone) and keeps it
 * whatever I is. */
static void test_idle_ring(void)
{
    rmpi_chan_params_t p = table2(4, 4);
    const rmpi_chan_src_t src[] = {{1, 1, 1000}, {2, 1, 0}};
    int up[4], down[4];
    rmpi_chan_plan_t pl;
    CHECK(rmpi_chan_find_map_idle(src, 2, 1000000, &p, up, down, &pl) == 0 && !pl.apply && close_to(pl.gain, 5),
          "q = 0, a million idle polls: apply %d gain %.3f; want none, 5 ns", pl.apply, pl.gain);
    p.q = 10;
    CHECK(rmpi_chan_find_map_idle(src, 2, 0, &p, up, down, &pl) == 0 && !pl.apply && close_to(pl.gain, 15),
          "q = 10, no idle poll: apply %d gain %.3f; want none, 15 ns", pl.apply, pl.gain);
    CHECK(rmpi_chan_find_map_idle(src, 2, 1000, &p, up, down, &pl) == 0 && !pl.apply && close_to(pl.gain, 25),
          "q = 10, 1000 idle polls: apply %d gain %.3f; want none, 25 ns (not above gamma)", pl.apply, pl.gain);
    CHECK(rmpi_chan_find_map_idle(src, 2, 2000, &p, up, down, &pl) == 0 && pl.apply && pl.nup == 0 && pl.ndown == 1 &&
              down[0] == 2 && pl.ndedicated == 1 && close_to(pl.x_cur, 145000 - 35000) && close_to(pl.x_new, 145000) &&
              close_to(pl.gain, 35),
          "q = 10, 2000 idle polls: apply %d, %d up %d down (%d), x_cur %.1f x_new %.1f gain %.3f; want 2 released, "
          "35 ns",
          pl.apply, pl.nup, pl.ndown, pl.ndown ? down[0] : -1, pl.x_cur, pl.x_new, pl.gain);
    /* with a third source of 500 frames and 1500 idle polls each frame's pass comes with one
     * idle poll (1500 / 1500): rank 1's ring is empty at 2 * 500 passes (135000), rank 2's at
     * 2 * 1500 (-35000), and rank 3 is worth a ring: 500 * 150 - 5000 - 10 * 2 * 1000 - 10000
     * = 40000. x 175000 against x_cur 100000: 75000 over 1500 frames */
    const rmpi_chan_src_t three[] = {{1, 1, 1000}, {2, 1, 0}, {3, 0, 500}};
    CHECK(rmpi_chan_find_map_idle(three, 3, 1500, &p, up, down, &pl) == 0 && pl.apply && pl.nup == 1 && up[0] == 3 &&
              pl.ndown == 1 && down[0] == 2 && close_to(pl.x_new, 175000) && close_to(pl.x_cur, 100000) &&
              close_to(pl.gain, 50),
          "three sources: apply %d, %d up %d down, x_new %.1f x_cur %.1f", pl.apply, pl.nup, pl.ndown, pl.x_new,
          pl.x_cur);
    /* the idle term does not change Fig. 7's mapping at these counts (each ring q * (2300 - n_i)) */
    const rmpi_chan_src_t fig7[] = {{1, 0, 1000}, {2, 0, 800}, {3, 0, 300}, {4, 0, 200}};
    p.h = 2;
    expect("Fig. 7 with q = 10", fig7, 4, &p, (int[]){1, 2}, 2, NULL, 0);
}

/* h: at most h dedicated, ties to the lower rank. tau: at most tau new ones per mapping,
 * the next mapping takes the next ones. */
static void test_caps(void)
{
    rmpi_chan_src_t src[10];
    for (int i = 0; i < 10; i++)
        src[i] = (rmpi_chan_src_t){20 - i, 0, 5000}; /* ranks 20 .. 11, all alike */
    rmpi_chan_params_t p = table2(3, 10);
    rmpi_chan_plan_t pl = expect("h = 3, ties", src, 10, &p, (int[]){11, 12, 13}, 3, NULL, 0);
    CHECK(pl.ndedicated == 3, "h = 3: %d dedicated", pl.ndedicated);
    p = table2(8, 3);
    expect("tau = 3", src, 10, &p, (int[]){11, 12, 13}, 3, NULL, 0);
    for (int i = 7; i < 10; i++)
        src[i].dedicated = 1; /* 13, 12, 11 now dedicated */
    pl = expect("tau = 3, second mapping", src, 10, &p, (int[]){14, 15, 16}, 3, NULL, 0);
    CHECK(pl.ndedicated == 6, "second mapping: %d dedicated", pl.ndedicated);
    p.h = 0;
    expect("h = 0 releases everything", src, 10, &p, NULL, 0, (int[]){11, 12, 13}, 3);
}

/* Releases: a silent dedicated peer goes when its polling outweighs gamma; with the cap
 * full, a busy newcomer replaces a quiet holder; an equal newcomer does not (its set-up
 * would be paid for nothing). */
static void test_release(void)
{
    rmpi_chan_params_t p = table2(1, 4);
    const rmpi_chan_src_t swap[] = {{5, 1, 10}, {6, 0, 10000}};
    rmpi_chan_plan_t pl = expect("swap", swap, 2, &p, (int[]){6}, 1, (int[]){5}, 1);
    CHECK(close_to(pl.x_cur, 10 * 150 - 50000) && close_to(pl.x_new, 10000 * 150 - 10000 - 50000),
          "swap: x_cur %.1f x_new %.1f", pl.x_cur, pl.x_new);
    const rmpi_chan_src_t same[] = {{5, 1, 100}, {6, 0, 100}};
    expect("equal newcomer", same, 2, &p, NULL, 0, NULL, 0);
    /* a silent holder next to shared traffic: releasing saves 1000 * 10 / 2 over 1000
     * receives, 5 ns each: not above gamma 25, above gamma 4 */
    const rmpi_chan_src_t idle[] = {{5, 1, 0}, {6, 0, 1000}};
    p.h = 1, p.tau = 1, p.rho = 1e9; /* 6 can never pay its set-up */
    expect("silent holder, gamma 25", idle, 2, &p, NULL, 0, NULL, 0);
    p.gamma = 4;
    pl = expect("silent holder, gamma 4", idle, 2, &p, NULL, 0, (int[]){5}, 1);
    CHECK(close_to(pl.gain, 5), "silent holder: gain %.3f", pl.gain);
    /* no traffic at all: nothing to learn, nothing changes */
    const rmpi_chan_src_t none[] = {{5, 1, 0}};
    p.gamma = 0;
    expect("no traffic", none, 1, &p, NULL, 0, NULL, 0);
    expect("empty window", NULL, 0, &p, NULL, 0, NULL, 0);
}

/* Two classes of peers in one window, each with its own costs (shared memory: r 1000, p 3,
 * rho 200000; a ring over the network: r 1000, p 12, rho 400000). By hand, max n = 1000:
 * rank 1 (shm, 1000) 1000000 - 1500 - 200000 = 798500; rank 2 (shm, 300) 300000 - 1500 -
 * 200000 = 98500; rank 7 (net, 300) 300000 - 6000 - 400000 = -106000; rank 8 (net, 1000)
 * 1000000 - 6000 - 400000 = 594000. With the network's r at 0 (a software provider)
 * rank 8 is worth -406000 and stays shared; with one class rank 7 would be taken. */
static void test_classes(void)
{
    rmpi_chan_params_t p = table2(4, 4);
    p.r = 1000, p.p = 3, p.rho = 200000;
    p.net = (rmpi_chan_cost_t){1000, 12, 0, 1, 400000};
    rmpi_chan_src_t src[] = {{1, 0, 1000, 0}, {2, 0, 300, 0}, {7, 0, 300, 1}, {8, 0, 1000, 1}};
    rmpi_chan_plan_t pl = expect("two classes", src, 4, &p, (int[]){1, 2, 8}, 3, NULL, 0);
    CHECK(close_to(pl.x_new, 798500 + 98500 + 594000) && close_to(pl.gain, (798500 + 98500 + 594000) / 2600.0),
          "two classes: x_new %.1f gain %.3f", pl.x_new, pl.gain);
    p.net.r = 0;
    expect("network r = 0", src, 4, &p, (int[]){1, 2}, 2, NULL, 0);
    /* a dedicated network peer whose r fell to 0 is released */
    src[3].dedicated = 1;
    expect("network r = 0, release", src, 4, &p, (int[]){1, 2}, 2, (int[]){8}, 1);
    p.net = (rmpi_chan_cost_t){p.r, p.p, 0, 1, p.rho};
    src[3].dedicated = 0;
    expect("one class", src, 4, &p, (int[]){1, 8, 2, 7}, 4, NULL, 0);
}

/* A stream against a ping-pong on shared memory (r 10, w 330, p 3, rho 200000, gamma 25, no
 * credits), 2000 receives each. By hand, max n = 2000, so a ring's polling is 2000 * 3 / 2 =
 * 3000: the stream (1900 of its receives behind an earlier one) 100 * 10 + 1900 * 330 - 3000 -
 * 200000 = 425000; the ping-pong (none behind) 2000 * 10 - 3000 - 200000 = -183000. The
 * stream alone is dedicated, gain 425000 / 4000 = 106.25 ns per receive. With none of its
 * receives behind another it is worth the ping-pong's and nothing is. Alone in the window
 * (1000 receives, b of them behind): x = 1000 * 10 + 320 b - 1500 - 200000, which passes gamma
 * (25 per receive) from b = 677 (25.14) and not at 676 (24.82). A network peer (class 1, w 0)
 * gains r for every receive, behind another or not. */
static void test_stream(void)
{
    rmpi_chan_params_t p = table2(4, 4);
    p.r = 10, p.w = 330, p.p = 3, p.rho = 200000;
    rmpi_chan_src_t src[] = {{1, 0, 2000, 0, 1900}, {2, 0, 2000, 0, 0}};
    rmpi_chan_plan_t pl = expect("a stream and a ping-pong", src, 2, &p, (int[]){1}, 1, NULL, 0);
    CHECK(close_to(pl.x_new, 425000) && close_to(pl.gain, 106.25) && pl.apply, "stream: x_new %.1f gain %.3f", pl.x_new,
          pl.gain);
    src[0].b = 0;
    expect("two ping-pongs", src, 2, &p, NULL, 0, NULL, 0);
    /* the stream dedicated: kept, its set-up paid (x_cur 625000); once it stops streaming its
     * ring still saves r less the polling, 2000 * 10 - 3000 = 17000: kept too (the ring of a
     * finished phase goes when it is silent, or for another's under the cap h) */
    src[0].b = 1900, src[0].dedicated = 1;
    pl = expect("a dedicated stream", src, 2, &p, NULL, 0, NULL, 0);
    CHECK(close_to(pl.x_cur, 625000), "dedicated stream: x_cur %.1f", pl.x_cur);
    src[0].b = 0;
    pl = expect("the stream turned ping-pong", src, 2, &p, NULL, 0, NULL, 0);
    CHECK(close_to(pl.x_cur, 17000) && !pl.apply, "ping-pong on a ring: x_cur %.1f apply %d", pl.x_cur, pl.apply);
    /* the threshold of b for one source */
    rmpi_chan_src_t one[] = {{3, 0, 1000, 0, 676}};
    pl = expect("b 676", one, 1, &p, NULL, 0, NULL, 0);
    CHECK(close_to(pl.gain, 24.82) && !pl.apply, "b 676: gain %.3f", pl.gain);
    one[0].b = 677;
    pl = expect("b 677", one, 1, &p, (int[]){3}, 1, NULL, 0);
    CHECK(close_to(pl.gain, 25.14), "b 677: gain %.3f", pl.gain);
    /* b beyond n counts as n; w below r leaves r */
    one[0].b = 5000;
    pl = expect("b above n", one, 1, &p, (int[]){3}, 1, NULL, 0);
    CHECK(close_to(pl.x_new, 1000 * 330 - 1500 - 200000), "b above n: x_new %.1f", pl.x_new);
    p.w = 5, one[0].b = 1000;
    expect("w below r", one, 1, &p, NULL, 0, NULL, 0);
    /* class 1 without w: every receive gains r = 300, b or not: 300000 - 1500 - 200000 */
    p.net = (rmpi_chan_cost_t){300, 3, 0, 1, 200000};
    rmpi_chan_src_t net[] = {{4, 0, 1000, 1, 0}};
    pl = expect("network, b 0", net, 1, &p, (int[]){4}, 1, NULL, 0);
    double x0 = pl.x_new;
    net[0].b = 1000;
    pl = expect("network, b n", net, 1, &p, (int[]){4}, 1, NULL, 0);
    CHECK(close_to(x0, 98500) && close_to(pl.x_new, x0), "network: x_new %.1f and %.1f, want 98500", x0, pl.x_new);
}

/* Every mapping of up to 7 sources, brute force: FIND_MAP's benefit is the best one's. */
static void test_exhaustive(void)
{
    unit_rng_t rng = unit_seed(13);
    int cases = 0, applied = 0;
    for (int iter = 0; iter < 4000; iter++) {
        int n = (int)unit_range(&rng, 0, 7);
        rmpi_chan_src_t src[7];
        for (int i = 0; i < n; i++)
            src[i] = (rmpi_chan_src_t){(int)unit_range(&rng, 0, 3) * 7 + i, (int)unit_range(&rng, 0, 2) == 0,
                                       unit_range(&rng, 0, 3) ? unit_range(&rng, 0, 2000) : 0,
                                       iter % 2 ? (int)unit_range(&rng, 0, 1) : 0};
        rmpi_chan_params_t p = table2((int)unit_range(&rng, 0, 5), (int)unit_range(&rng, 1, 4));
        p.gamma = 0;
        p.rho = (double)unit_range(&rng, 0, 40000);
        p.p = (double)unit_range(&rng, 0, 40);
        /* odd cases mix two classes of peers, each with its own r, p and rho */
        p.net = (rmpi_chan_cost_t){(double)unit_range(&rng, 0, 300), (double)unit_range(&rng, 0, 40), 0, 1,
                                   (double)unit_range(&rng, 0, 40000)};
        /* cases 1 mod 4: class 0 with a stream's gain w, sources with frames behind others */
        if (iter % 4 == 1) {
            p.w = 100 + (double)(iter % 7) * 50;
            for (int i = 0; i < n; i++)
                src[i].b = src[i].n * (uint64_t)((iter + i) % 3) / 2;
        }
        /* every third case: the idle ring's term, each class with its q */
        uint64_t idle = 0;
        if (iter % 3 == 0) {
            p.q = (double)unit_range(&rng, 0, 20);
            p.net.q = (double)unit_range(&rng, 0, 20);
            idle = unit_range(&rng, 0, 3) ? unit_range(&rng, 0, 5000) : 0;
        }
        int ncur = 0;
        double total = 0, nmax = 0;
        for (int i = 0; i < n; i++) {
            ncur += src[i].dedicated;
            total += (double)src[i].n;
            nmax = fmax_(nmax, (double)src[i].n);
        }
        if (ncur > p.h)
            p.h = ncur; /* a current mapping within the cap */
        double best = -1e300;
        for (int set = 0; set < 1 << n; set++) {
            int m = 0, fresh = 0;
            double x = 0;
            for (int i = 0; i < n; i++)
                if (set >> i & 1) {
                    m++;
                    fresh += !src[i].dedicated;
                    const rmpi_chan_cost_t *k =
                        src[i].cls ? &p.net : &(rmpi_chan_cost_t){p.r, p.p, 0, 1, p.rho, p.q, p.w};
                    /* a stream's frame saves the larger of r and w, the others r */
                    x += (double)(src[i].n - src[i].b) * k->r + (double)src[i].b * fmax_(k->r, k->w) -
                         (src[i].dedicated ? 0 : k->rho) - nmax * k->p / 2 -
                         (total > 0 ? k->q * (total - (double)src[i].n) * (total + (double)idle) / total : 0);
                }
            if (m > p.h || fresh > p.tau)
                continue;
            best = fmax_(best, x);
        }
        int up[7], down[7];
        rmpi_chan_plan_t pl;
        rmpi_chan_find_map_idle(src, n, idle, &p, up, down, &pl);
        double want = total > 0 ? best : pl.x_cur;
        /* without the gamma gate the plan is the best mapping; with it, x_new is x_cur */
        double got = pl.apply ? pl.x_new : pl.x_cur;
        int ok = pl.apply ? close_to(got, want) : want <= pl.x_cur + 1e-6 * (fabs_(want) + 1);
        CHECK(ok, "case %d: %d sources, h %d tau %d: FIND_MAP %.1f (apply %d), brute force %.1f", iter, n, p.h, p.tau,
              got, pl.apply, want);
        /* the change respects the caps */
        CHECK(pl.nup <= p.tau && ncur + pl.nup - pl.ndown <= p.h, "case %d: %d up, %d down from %d, h %d tau %d", iter,
              pl.nup, pl.ndown, ncur, p.h, p.tau);
        cases++;
        applied += pl.apply;
        CHECK_BAIL();
    }
    CHECK(applied > cases / 10 && applied < cases, "%d of %d cases changed the mapping: the cases test little", applied,
          cases);
}

int main(void)
{
    test_fig7();
    test_gamma();
    test_polling();
    test_spill();
    test_caps();
    test_idle_ring();
    test_release();
    test_classes();
    test_stream();
    test_exhaustive();
    return finish("chan_select_findmap");
}
