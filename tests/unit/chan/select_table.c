/* The statistics table of channel selection: counts and bytes per source over the last
 * slots slide with time, rows older than sigma slots are gone, the table's size depends on
 * sigma and on the sources heard from (never on time or traffic), silent, fixed and
 * out-of-range sources cost nothing. Linked with rmpi_chan_select alone. */
#include "chan/select.h"

#include "../unit_check.h"

#define MS 1000000ull

static rmpi_chan_params_t params(int sigma)
{
    rmpi_chan_params_t p = {0};
    p.r = 150, p.p = 10, p.rho = 10000, p.gamma = 25;
    p.h = 4, p.tau = 4;
    p.interval_ns = 1000 * MS, p.slot_ns = 10 * MS, p.sigma = sigma;
    return p;
}

static void expect_sum(rmpi_chan_sel_t *s, int peer, int nslots, uint64_t n, uint64_t bytes, const char *what)
{
    uint64_t gn, gb;
    rmpi_chan_sel_sum(s, peer, nslots, &gn, &gb);
    CHECK(gn == n && gb == bytes, "%s: peer %d over %d slots: %llu receives, %llu bytes; want %llu, %llu", what, peer,
          nslots, (unsigned long long)gn, (unsigned long long)gb, (unsigned long long)n, (unsigned long long)bytes);
}

static void test_sliding(void)
{
    rmpi_chan_params_t p = params(4);
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(8, &p, 1000 * MS);
    CHECK(s != NULL, "create");
    if (!s)
        return;
    /* slot k = [1000 + 10k, 1000 + 10(k+1)) ms: peer 3 sends k+1 frames of 100 bytes in slot k */
    for (int k = 0; k < 4; k++)
        for (int i = 0; i <= k; i++)
            rmpi_chan_note_recv(s, 3, 100, (1000 + 10 * k + i) * MS);
    expect_sum(s, 3, 1, 4, 400, "slot 3 alone");
    expect_sum(s, 3, 2, 7, 700, "slots 2-3");
    expect_sum(s, 3, 4, 10, 1000, "slots 0-3");
    expect_sum(s, 3, 99, 10, 1000, "more slots than kept");
    CHECK(s->total == 10, "total %llu", (unsigned long long)s->total);
    /* slot 4 begins: slot 0 (1 frame) leaves the table */
    rmpi_chan_note_recv(s, 3, 1, 1040 * MS);
    expect_sum(s, 3, 4, 10, 901, "slots 1-4");
    expect_sum(s, 3, 1, 1, 1, "slot 4 alone");
    /* a tick moves the table without a receive: after 2 empty slots, slots 1-2 are gone */
    rmpi_chan_sel_tick(s, 1065 * MS, NULL, NULL);
    expect_sum(s, 3, 4, 5, 401, "slots 3-6 after a quiet spell");
    /* a silence longer than the table clears every row */
    rmpi_chan_sel_tick(s, 2000 * MS, NULL, NULL);
    expect_sum(s, 3, 4, 0, 0, "after a second of silence");
    rmpi_chan_note_recv(s, 3, 7, 2001 * MS);
    expect_sum(s, 3, 4, 1, 7, "counting again after the silence");
    rmpi_chan_sel_destroy(s);
}

static void test_bounded(void)
{
    rmpi_chan_params_t p = params(16);
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(1000, &p, 0);
    if (!s) {
        CHECK(0, "create");
        return;
    }
    size_t empty = rmpi_chan_sel_bytes(s);
    size_t col = 16 * sizeof(rmpi_chan_cell_t);
    CHECK(sizeof(rmpi_chan_cell_t) == 8, "a cell is %zu bytes, the seed's table has 8 per source",
          sizeof(rmpi_chan_cell_t));
    /* ten sources, for a minute of traffic: ten columns, whatever the time and the count */
    for (uint64_t t = 0; t < 60000; t++)
        rmpi_chan_note_recv(s, (int)(t % 10) * 7, 64, t * MS);
    CHECK(s->nactive == 10, "%d columns for 10 sources", s->nactive);
    size_t busy = rmpi_chan_sel_bytes(s);
    CHECK(busy == empty + 10 * (col + sizeof(int)), "10 busy sources: %zu bytes, %zu empty, columns of %zu", busy,
          empty, col);
    /* the most a table can hold: sigma rows of 8 bytes for each of the 1000 sources */
    for (int peer = 0; peer < 1000; peer++)
        rmpi_chan_note_recv(s, peer, 1, 60001 * MS);
    CHECK(rmpi_chan_sel_bytes(s) <= empty + 1000 * (col + sizeof(int)), "every source: %zu bytes",
          rmpi_chan_sel_bytes(s));
    /* out of range: not counted, no column */
    uint64_t before = s->total;
    rmpi_chan_note_recv(s, -1, 10, 60002 * MS);
    rmpi_chan_note_recv(s, 1000, 10, 60002 * MS);
    CHECK(s->total == before && s->nactive == 1000, "out-of-range sources counted (total %llu, columns %d)",
          (unsigned long long)s->total, s->nactive);
    rmpi_chan_sel_destroy(s);
}

static void test_fixed_and_bytes(void)
{
    rmpi_chan_params_t p = params(4);
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(4, &p, 0);
    if (!s) {
        CHECK(0, "create");
        return;
    }
    rmpi_chan_sel_fix(s, 0, RMPI_CHAN_DEDICATED);
    rmpi_chan_note_recv(s, 0, 100, 1);
    CHECK(s->nactive == 0, "a fixed source got a column");
    expect_sum(s, 0, 4, 0, 0, "fixed source");
    CHECK(rmpi_chan_sel_kind(s, 0) == RMPI_CHAN_DEDICATED && s->ndedicated == 0,
          "a fixed dedicated peer: kind %d, counted among the selected ones %d", rmpi_chan_sel_kind(s, 0),
          s->ndedicated);
    /* fixing a peer that already has a column frees it */
    rmpi_chan_note_recv(s, 2, 100, 2);
    CHECK(s->nactive == 1, "columns %d", s->nactive);
    rmpi_chan_sel_fix(s, 2, RMPI_CHAN_SHARED);
    CHECK(s->nactive == 0, "the column of a peer fixed later was kept");
    /* bytes saturate in their 32 bits instead of wrapping */
    rmpi_chan_note_recv(s, 1, 3u << 30, 3);
    rmpi_chan_note_recv(s, 1, 3u << 30, 4);
    rmpi_chan_note_recv(s, 1, (size_t)1 << 40, 5);
    expect_sum(s, 1, 1, 3, UINT32_MAX, "saturated bytes");
    rmpi_chan_sel_destroy(s);
}

static void test_bad_params(void)
{
    char why[200];
    rmpi_chan_params_t good = params(4), p;
    CHECK(rmpi_chan_params_check(&good, why, sizeof why) == 0, "good parameters refused: %s", why);
    p = good, p.sigma = 1;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "sigma"), "sigma 1: %s", why);
    p = good, p.sigma = 4096;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "Table 2"), "sigma 4096: %s", why);
    p = good, p.gamma = -1;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "gamma"), "gamma -1: %s", why);
    p = good, p.r = 0.0 / 0.0;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "cost r"), "r NaN: %s", why);
    p = good, p.tau = 0;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "tau"), "tau 0: %s", why);
    p = good, p.h = -1;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "h (most"), "h -1: %s", why);
    p = good, p.slot_ns = 2 * p.interval_ns;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "slot"), "slot > interval: %s", why);
    p = good, p.c = 300, p.s = 0;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "credit"), "c without s: %s", why);
    CHECK(rmpi_chan_sel_create(4, &p, 0) == NULL, "a selector was made from bad parameters");
}

/* Table 2's sigma: 2048 up to 2^10 processes, 2048 / ((log2 n - 10) * 2) above; here never
 * more than 16 intervals of slots. h: log2(n) + 1, at most 128 per node, at least 2. */
static void test_defaults(void)
{
    const uint64_t u = 1000 * MS;
    CHECK(rmpi_chan_default_sigma(64, u, 1 * MS) == 2048, "64 procs, 1 ms slots: %d",
          rmpi_chan_default_sigma(64, u, MS));
    CHECK(rmpi_chan_default_sigma(2048, u, 1 * MS) == 1024, "2^11: %d", rmpi_chan_default_sigma(2048, u, MS));
    CHECK(rmpi_chan_default_sigma(1 << 16, u, 1 * MS) == 170, "2^16: %d", rmpi_chan_default_sigma(1 << 16, u, MS));
    CHECK(rmpi_chan_default_sigma(32, u, 50 * MS) == 320, "50 ms slots: %d", rmpi_chan_default_sigma(32, u, 50 * MS));
    static const int h[][3] = {{1, 1, 0},   {2, 2, 1},   {4, 4, 3},     {8, 8, 4},      {16, 16, 5},
                               {32, 32, 4}, {64, 64, 2}, {1024, 16, 8}, {1024, 128, 2}, {65536, 1, 17}};
    for (size_t i = 0; i < sizeof h / sizeof *h; i++)
        CHECK(rmpi_chan_default_h(h[i][0], h[i][1]) == h[i][2], "h for %d processes, %d per node: %d, want %d", h[i][0],
              h[i][1], rmpi_chan_default_h(h[i][0], h[i][1]), h[i][2]);
}

int main(void)
{
    test_sliding();
    test_bounded();
    test_fixed_and_bytes();
    test_bad_params();
    test_defaults();
    return finish("chan_select_table");
}
