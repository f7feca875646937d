/* The statistics table of channel selection: counts and bytes per source over the last
 * slots slide with time, rows older than sigma slots are gone, the table's size depends on
 * sigma and on the sources heard from (never on time or traffic), silent, fixed and
 * out-of-range sources cost nothing; the number of columns is bounded: many one-off
 * senders do not grow it, busy sources keep theirs and are dedicated as with a column for
 * every peer, silent ones give theirs back. Linked with rmpi_chan_select alone. */
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
    p.sources = 1000; /* a column for every peer: the seed's full table at worst */
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(1000, &p, 0);
    if (!s) {
        CHECK(0, "create");
        return;
    }
    size_t empty = rmpi_chan_sel_bytes(s);
    size_t col = 16 * RMPI_CHAN_ROW_BYTES;
    CHECK(sizeof(rmpi_chan_cell_t) == 12 && RMPI_CHAN_ROW_BYTES == 20,
          "a cell is %zu bytes and a row %zu: want the seed's 8 per source and b, and two running counts",
          sizeof(rmpi_chan_cell_t), (size_t)RMPI_CHAN_ROW_BYTES);
    /* ten sources, for a minute of traffic: ten columns, whatever the time and the count */
    for (uint64_t t = 0; t < 60000; t++)
        rmpi_chan_note_recv(s, (int)(t % 10) * 7, 64, t * MS);
    CHECK(s->nactive == 10, "%d columns for 10 sources", s->nactive);
    size_t busy = rmpi_chan_sel_bytes(s);
    CHECK(busy == empty + 10 * col, "10 busy sources: %zu bytes, %zu empty, columns of %zu", busy, empty, col);
    /* the most a table can hold: sigma rows for each of the 1000 sources */
    for (int peer = 0; peer < 1000; peer++)
        rmpi_chan_note_recv(s, peer, 1, 60001 * MS);
    CHECK(rmpi_chan_sel_bytes(s) <= empty + 1000 * col, "every source: %zu bytes", rmpi_chan_sel_bytes(s));
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

static int accept_all(void *ctx, int peer, rmpi_chan_kind_t kind)
{
    (void)ctx, (void)peer, (void)kind;
    return 0;
}

/* The same synthetic traffic into a bounded table (the default columns, 64 for 4096 peers
 * with h = 4) and into one with a column for every peer: 4 busy peers send `busy` frames per
 * 10 ms slot each from the start, a fifth (3001) only from 1 s on, when the table is long
 * full; `oneoff` new one-off senders come every slot, cycling through all 4096 peers. The
 * bounded table never holds more than its columns (checked after every slot), gives columns
 * back, and makes the same decisions at every slot: with 200 one-off senders the busy peers
 * are dedicated; with 2000 they are too few of all receives to pass gamma, which a table
 * that forgot the receives of the sources it has no column for would not see. */
static void compare_bounded(int busy_frames, int oneoff, int want)
{
    rmpi_chan_params_t p = params(16);
    p.interval_ns = 100 * MS;
    rmpi_chan_params_t full = p;
    full.sources = 4096;
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(4096, &p, 0), *f = rmpi_chan_sel_create(4096, &full, 0);
    if (!s || !f) {
        CHECK(0, "create");
        rmpi_chan_sel_destroy(s), rmpi_chan_sel_destroy(f);
        return;
    }
    CHECK(s->maxcols == 64 && rmpi_chan_default_sources(4096, 4) == 64, "default columns %d for 4096 peers, h 4",
          s->maxcols);
    const int busy[] = {5, 77, 300, 2000, 3001};
    size_t per_col = 16 * RMPI_CHAN_ROW_BYTES;
    /* the columns, the sink and spill, and the idle polls per slot */
    size_t bound = sizeof *s + 4096 * (sizeof *s->col + sizeof *s->seen + 3) + 64 * (sizeof(int) + per_col) +
                   2 * per_col + 16 * sizeof(uint64_t);
    int next = 0, most = 0, wrong = 0;
    for (uint64_t k = 0; k < 300; k++) { /* 3 s of 10 ms slots */
        rmpi_chan_sel_t *both[2] = {s, f};
        for (int w = 0; w < 2; w++) {
            uint64_t t = k * 10 * MS;
            for (int i = 0; i < busy_frames; i++)
                for (int b = 0; b < 5; b++)
                    if (b < 4 || k >= 100)
                        rmpi_chan_note_recv(both[w], busy[b], 64, t + (uint64_t)i * MS / 8);
            for (int j = 0; j < oneoff; j++) {
                int peer = (next + j) % 4096;
                if (peer != 5 && peer != 77 && peer != 300 && peer != 2000 && peer != 3001)
                    rmpi_chan_note_recv(both[w], peer, 8, t + 6 * MS + (uint64_t)j * 1000);
            }
            rmpi_chan_sel_tick(both[w], t + 9 * MS, accept_all, NULL);
        }
        next = (next + oneoff) % 4096;
        most = s->nactive > most ? s->nactive : most;
        CHECK(s->nactive <= 64 && rmpi_chan_sel_bytes(s) <= bound, "slot %llu: %d columns, %zu bytes (bound %zu)",
              (unsigned long long)k, s->nactive, rmpi_chan_sel_bytes(s), bound);
        for (int peer = 0; peer < 4096; peer++)
            wrong += rmpi_chan_sel_kind(s, peer) != rmpi_chan_sel_kind(f, peer);
    }
    CHECK(most == 64 && s->evicted > 600,
          "%d one-off senders: the table never filled (%d columns at most, %llu given "
          "back)",
          oneoff, most, (unsigned long long)s->evicted);
    CHECK(f->nactive > 1000, "the unbounded table held %d columns only: the traffic is not what it should be",
          f->nactive);
    for (int b = 0; b < 4 && want; b++)
        CHECK(rmpi_chan_sel_kind(s, busy[b]) == RMPI_CHAN_DEDICATED, "busy peer %d is not dedicated", busy[b]);
    CHECK(s->ndedicated == want && f->ndedicated == want,
          "%d one-off senders: dedicated %d bounded, %d unbounded; "
          "want %d",
          oneoff, s->ndedicated, f->ndedicated, want);
    CHECK(wrong == 0, "%d one-off senders: the bounded and the unbounded table disagreed on %d peer-slots", oneoff,
          wrong);
    for (int b = 0; b < 5; b++) {
        uint64_t n, bytes;
        rmpi_chan_sel_sum(s, busy[b], 16, &n, &bytes);
        CHECK(n > 0, "busy peer %d lost its column", busy[b]);
    }
    CHECK(s->to_dedicated == f->to_dedicated && s->to_shared == f->to_shared,
          "switches: bounded %llu up %llu down, unbounded %llu up %llu down", (unsigned long long)s->to_dedicated,
          (unsigned long long)s->to_shared, (unsigned long long)f->to_dedicated, (unsigned long long)f->to_shared);
    rmpi_chan_sel_destroy(s), rmpi_chan_sel_destroy(f);
}

static void test_evict(void)
{
    compare_bounded(20, 200, 4);
    compare_bounded(20, 2000, 0);
}

/* A column goes back once its source has been silent for every slot kept (at a run), not
 * before, and a dedicated source keeps its column however quiet it is. */
static void test_aging(void)
{
    rmpi_chan_params_t p = params(4);
    p.h = 2, p.tau = 2, p.interval_ns = 20 * MS;
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(8, &p, 0);
    if (!s) {
        CHECK(0, "create");
        return;
    }
    rmpi_chan_note_recv(s, 1, 8, 1 * MS);
    rmpi_chan_sel_set(s, 2, RMPI_CHAN_DEDICATED);
    rmpi_chan_note_recv(s, 2, 8, 1 * MS);
    rmpi_chan_sel_tick(s, 20 * MS, NULL, NULL); /* slots 0-2 kept: peer 1 still heard */
    CHECK(s->nactive == 2, "%d columns 20 ms after the receive, want 2", s->nactive);
    rmpi_chan_sel_tick(s, 60 * MS, NULL, NULL); /* slots 3-6: nothing of slot 0 left */
    CHECK(s->nactive == 1 && s->active[0] == 2 && s->evicted == 1,
          "after 4 silent slots: %d columns (first %d), %llu given back; want only dedicated 2's", s->nactive,
          s->active[0], (unsigned long long)s->evicted);
    rmpi_chan_note_recv(s, 1, 8, 61 * MS);
    expect_sum(s, 1, 4, 1, 8, "a source heard again after its column went back");
    rmpi_chan_sel_destroy(s);
}

static int count_release(void *ctx, int peer, rmpi_chan_kind_t kind)
{
    (void)peer;
    if (kind == RMPI_CHAN_SHARED)
        ++*(int *)ctx;
    return 0;
}

/* A peer made dedicated by rmpi_chan_sel_set while every column is taken gets one: the
 * shared source with the fewest receives gives its own (its counts go to the spill), the
 * dedicated peer's receives are counted from then on, and FIND_MAP keeps it dedicated while
 * it is the busiest source. Without a column it counted into the spill and FIND_MAP saw it
 * silent and released it. */
static void test_set_full(void)
{
    rmpi_chan_params_t p = params(4);
    p.sources = 4, p.h = 1, p.tau = 1, p.interval_ns = 30 * MS; /* the least sources allows: 2 (h + 1) */
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(16, &p, 0);
    if (!s) {
        CHECK(0, "create");
        return;
    }
    for (int peer = 1; peer <= 4; peer++) /* peer 3 the quietest */
        for (int i = 0; i < (peer == 3 ? 1 : 10); i++)
            rmpi_chan_note_recv(s, peer, 8, 1 * MS);
    CHECK(s->nactive == 4, "%d columns after 4 sources, want 4 (the bound)", s->nactive);
    rmpi_chan_sel_set(s, 9, RMPI_CHAN_DEDICATED); /* never heard from, table full */
    CHECK(s->nactive == 4 && s->col[9] && s->col[9] != s->spill && !s->col[3] && s->evicted == 1,
          "after setting 9 dedicated: %d columns, 9 %s, 3 %s, %llu evicted; want 9 in quiet 3's column", s->nactive,
          s->col[9] == s->spill ? "in the spill"
          : s->col[9]           ? "with a column"
                                : "without a column",
          s->col[3] ? "kept its column" : "gave its column", (unsigned long long)s->evicted);
    for (int i = 0; i < 100; i++)
        rmpi_chan_note_recv(s, 9, 8, 2 * MS);
    expect_sum(s, 9, 4, 100, 800, "the dedicated peer's receives");
    rmpi_chan_note_recv(s, 3, 8, 2 * MS); /* the table is full: 3 counts into the spill */
    expect_sum(s, 3, 4, 0, 0, "the evicted source, in the spill");
    int released = 0;
    rmpi_chan_sel_tick(s, 35 * MS, count_release, &released);
    CHECK(rmpi_chan_sel_kind(s, 9) == RMPI_CHAN_DEDICATED && released == 0,
          "after a run, busiest peer 9 is %s and %d peers were released; want 9 still dedicated",
          rmpi_chan_sel_kind(s, 9) == RMPI_CHAN_DEDICATED ? "dedicated" : "shared", released);
    /* more dedicated peers than columns (a start other than all-shared may set any number):
     * the fifth counts into the spill */
    rmpi_chan_params_t q = params(4);
    q.sources = 4, q.h = 1, q.tau = 1;
    rmpi_chan_sel_t *t = rmpi_chan_sel_create(8, &q, 0);
    CHECK(t != NULL, "create");
    if (t) {
        for (int peer = 1; peer <= 5; peer++)
            rmpi_chan_sel_set(t, peer, RMPI_CHAN_DEDICATED);
        rmpi_chan_note_recv(t, 5, 8, 1 * MS);
        CHECK(t->nactive == 4 && t->active[0] == 1 && t->col[5] == t->spill && t->total == 1,
              "4 columns, 5 dedicated peers: %d columns, first %d, total %llu", t->nactive, t->active[0],
              (unsigned long long)t->total);
        rmpi_chan_sel_destroy(t);
    }
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
    p = good, p.sources = 9; /* h 4: a full table keeps 5, of which 4 may be dedicated */
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "= 10"), "sources 9 with h 4: %s", why);
    p = good, p.sources = -1;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) && strstr(why, "sources"), "sources -1: %s", why);
    p = good, p.sources = 10;
    CHECK(rmpi_chan_params_check(&p, why, sizeof why) == 0, "sources 10 with h 4 refused: %s", why);
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
    /* columns: max(64, 8h), at most one per peer */
    static const int c[][3] = {{3, 3, 3}, {31, 4, 31}, {1000, 4, 64}, {65535, 8, 64}, {65535, 17, 136}, {100, 17, 100}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        CHECK(rmpi_chan_default_sources(c[i][0], c[i][1]) == c[i][2], "columns for %d peers, h %d: %d, want %d",
              c[i][0], c[i][1], rmpi_chan_default_sources(c[i][0], c[i][1]), c[i][2]);
}

/* Every window of 1 to sigma + 2 slots ending at slot k, for each peer, against the counts
 * kept by hand (n[j * peers + peer] frames of peer + 1 bytes in slot j). */
static void expect_windows(rmpi_chan_sel_t *s, int peers, int sigma, int k, const uint64_t *n)
{
    for (int peer = 0; peer < peers; peer++)
        for (int w = 1; w <= sigma + 2; w++) {
            uint64_t want = 0;
            for (int j = k; j >= 0 && j > k - w && j > k - sigma; j--)
                want += n[j * peers + peer];
            char what[64];
            snprintf(what, sizeof what, "slot %d (row %d)", k, k % sigma);
            expect_sum(s, peer, w, want, want * (uint64_t)(peer + 1), what);
        }
}

/* Windows that wrap around the table's last row (sigma 5, not a power of two), against sums
 * kept by hand; the table moved by a tick and the frames counted without a clock (as the
 * library does), so each new slot's first frame must find its source's cell of the new row
 * (a frame counted into the previous row would show in these sums). */
static void test_wrap(void)
{
    enum { SIGMA = 5, SLOTS = 23, PEERS = 3 };
    rmpi_chan_params_t p = params(SIGMA);
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(PEERS, &p, 0);
    if (!s) {
        CHECK(0, "create");
        return;
    }
    uint64_t n[SLOTS][PEERS] = {{0}};
    for (int k = 0; k < SLOTS; k++) {
        if (k > 0)
            rmpi_chan_sel_tick(s, (uint64_t)k * 10 * MS + MS, NULL, NULL);
        for (int peer = 0; peer < PEERS; peer++) {
            n[k][peer] = (uint64_t)((k * 7 + peer * 3) % 5) + (peer == 1 ? 0 : 1);
            for (uint64_t i = 0; i < n[k][peer]; i++)
                rmpi_chan_count_recv(s, peer, (size_t)(peer + 1));
        }
        expect_windows(s, PEERS, SIGMA, k, &n[0][0]);
    }
    rmpi_chan_sel_destroy(s);
}

/* The windows' counts are running counts per row (two reads a window): slots skipped in
 * runs shorter and longer than the table, a column that starts late and one evicted while
 * silent and given again, against counts kept by hand. */
static void test_running(void)
{
    enum { SIGMA = 6, PEERS = 4, STEPS = 60 };
    uint64_t n[400][PEERS] = {{0}};
    rmpi_chan_params_t p = params(SIGMA);
    rmpi_chan_sel_t *s = rmpi_chan_sel_create(PEERS, &p, 0);
    CHECK(s != NULL, "create");
    if (!s)
        return;
    unsigned seed = 7;
    int k = 0;
    for (int step = 0; step < STEPS; step++) {
        seed = seed * 1103515245u + 12345u;
        int gap = step ? 1 + (int)((seed >> 8) % 9) : 0; /* 1..9 slots: some clear the whole table */
        k += gap;
        if (step)
            rmpi_chan_sel_tick(s, (uint64_t)k * 10 * MS + MS, NULL, NULL);
        for (int peer = 0; peer < PEERS; peer++) {
            seed = seed * 1103515245u + 12345u;
            if (peer == 3 && step < 20)
                continue; /* its column comes late */
            if (peer == 2 && step >= 10 && step < 30)
                continue; /* silent for longer than the table: its column goes at a run */
            n[k][peer] = (seed >> 8) % 6;
            for (uint64_t i = 0; i < n[k][peer]; i++)
                rmpi_chan_count_recv(s, peer, (size_t)(peer + 1));
        }
        expect_windows(s, PEERS, SIGMA, k, &n[0][0]);
    }
    rmpi_chan_sel_destroy(s);
}

int main(void)
{
    test_sliding();
    test_wrap();
    test_running();
    test_bounded();
    test_evict();
    test_aging();
    test_set_full();
    test_fixed_and_bytes();
    test_bad_params();
    test_defaults();
    return finish("chan_select_table");
}
