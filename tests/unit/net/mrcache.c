/* Registration cache (src/net/mrcache.c) against a counting fake rail: reuse, sub-ranges
 * and overlaps, several rails sharing an entry, invalidation of unused and in-use regions
 * (explicit, and through the munmap/free hooks on real memory), the LRU size limit, and a
 * random model check that a hit never returns a region registered before the memory
 * under it was invalidated, and that every registration is dropped exactly once. */
#include "../unit_check.h"
#include "net/net.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NRAILS 3
#define MAXREG 65536

/* Fake registrations: each gets a serial number (the rkey) and remembers its range. */
typedef struct fake_reg {
    uintptr_t a, b;
    uint64_t serial_epoch; /* epoch counter of the model at registration */
    int live;
} fake_reg_t;

static fake_reg_t regs[MAXREG];
static int nregs, ndereg;
static uint64_t epoch; /* bumped by every invalidation the model does */

static int fake_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    if (nregs == MAXREG)
        return -1;
    regs[nregs] = (fake_reg_t){(uintptr_t)addr, (uintptr_t)addr + len, epoch, 1};
    mr->addr = addr;
    mr->len = len;
    mr->rkey = (uint64_t)nregs;
    mr->desc = rail;
    nregs++;
    return 0;
}

static void fake_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    fake_reg_t *g = &regs[mr->rkey];
    CHECK(g->live, "registration %llu dropped twice", (unsigned long long)mr->rkey);
    CHECK(mr->desc == rail, "registration %llu dropped on another rail", (unsigned long long)mr->rkey);
    g->live = 0;
    ndereg++;
}

static const struct rmpi_net_ops fake_ops = {.version = RMPI_NET_OPS_VERSION,
                                             .name = "fake",
                                             .mr_reg = fake_reg,
                                             .mr_dereg = fake_dereg};
static rmpi_rail_t rails[NRAILS];
static rmpi_rail_t *rail_at(int i) { return &rails[i]; }

static long page;

static void setup(long long limit)
{
    rmpi_net_mr_flush();
    rmpi_knobs.MR_CACHE_SIZE = limit;
    for (int i = 0; i < NRAILS; i++) {
        rails[i].ops = &fake_ops;
        rails[i].index = i;
        rails[i].hints.mr_cache = 1;
        snprintf(rails[i].hints.name, sizeof rails[i].hints.name, "fake%d", i);
    }
}

static int live_regs(void)
{
    int n = 0;
    for (int i = 0; i < nregs; i++)
        n += regs[i].live;
    return n;
}

static void test_reuse(char *mem)
{
    setup(1 << 30);
    int r0 = nregs;
    rmpi_mr_t m1, m2, m3;
    CHECK(rmpi_net_mr_get(&rails[0], mem + 100, 5000, &m1) == 0, "get");
    CHECK(nregs == r0 + 1, "first get registers once");
    CHECK(regs[m1.rkey].a == (uintptr_t)mem && regs[m1.rkey].b == (uintptr_t)mem + 2 * page,
          "registered range is the covering pages");
    CHECK(rmpi_net_mr_get(&rails[0], mem + 200, 100, &m2) == 0 && m2.rkey == m1.rkey, "a sub-range reuses the entry");
    uint64_t first = m1.rkey;
    rmpi_net_mr_put(&rails[0], &m2);
    rmpi_net_mr_put(&rails[0], &m1);
    CHECK(rmpi_net_mr_get(&rails[0], mem, 5000, &m1) == 0 && m1.rkey == first && nregs == r0 + 1,
          "an unused cached entry is reused");
    /* wider than the entry: a new registration */
    CHECK(rmpi_net_mr_get(&rails[0], mem, 3 * page, &m3) == 0 && nregs == r0 + 2, "wider range registers anew");
    rmpi_net_mr_put(&rails[0], &m3);
    rmpi_net_mr_put(&rails[0], &m1);
    /* a second rail registers the same entry once on its own domain */
    rmpi_mr_t a, b;
    CHECK(rmpi_net_mr_get(&rails[1], mem + 10, 10, &a) == 0 && nregs == r0 + 3, "rail 1 registers once");
    CHECK(rmpi_net_mr_get(&rails[1], mem + 20, 10, &b) == 0 && nregs == r0 + 3 && a.rkey == b.rkey,
          "rail 1 reuses its registration");
    CHECK(a.desc == &rails[1], "rail 1's registration is its own");
    rmpi_net_mr_put(&rails[1], &a);
    rmpi_net_mr_put(&rails[1], &b);
    rmpi_net_mr_stats_t st = rmpi_net_mr_stats();
    CHECK(st.hits >= 3, "hits counted (%llu)", (unsigned long long)st.hits);
    rmpi_net_mr_flush();
    CHECK(live_regs() == 0, "flush drops every unused registration (%d live)", live_regs());
}

static void test_invalidate(char *mem)
{
    setup(1 << 30);
    rmpi_mr_t m, inuse, again;
    rmpi_net_mr_get(&rails[0], mem, page, &m);
    rmpi_net_mr_put(&rails[0], &m);
    int d0 = ndereg;
    rmpi_net_mr_invalidate(mem + page / 2, 1);
    CHECK(rmpi_net_mr_stats().entries == 0, "an unused invalidated entry leaves the cache");
    rmpi_net_mr_get(&rails[0], mem + 2 * page, page, &inuse); /* reaps the dead entry */
    CHECK(ndereg == d0 + 1, "the invalidated registration was dropped");
    rmpi_net_mr_invalidate(mem + 2 * page, page);
    CHECK(regs[inuse.rkey].live, "an entry in use keeps its registration until released");
    CHECK(rmpi_net_mr_get(&rails[0], mem + 2 * page, page, &again) == 0 && again.rkey != inuse.rkey,
          "a stale entry is never hit again");
    rmpi_net_mr_put(&rails[0], &inuse);
    rmpi_net_mr_put(&rails[0], &again);
    CHECK(!regs[inuse.rkey].live, "the stale entry is dropped when released");
    CHECK(regs[again.rkey].live, "the fresh entry stays cached");
    rmpi_net_mr_flush();
}

static void test_hooks(void)
{
    setup(1 << 30);
    /* munmap: the application's call reaches the hook */
    char *p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    rmpi_mr_t m;
    rmpi_net_mr_get(&rails[2], p + page, page, &m);
    rmpi_net_mr_put(&rails[2], &m);
    uint64_t inv0 = rmpi_net_mr_stats().invalidations;
    munmap(p, 4 * page);
    CHECK(rmpi_net_mr_stats().invalidations == inv0 + 1, "munmap invalidated the region");
    CHECK(rmpi_net_mr_stats().entries == 0, "nothing left after munmap");
    /* free of a chunk malloc took from mmap */
    char *big = malloc(8 << 20);
    memset(big, 1, 8 << 20);
    rmpi_net_mr_get(&rails[2], big + 4096, 1 << 20, &m);
    rmpi_net_mr_put(&rails[2], &m);
    inv0 = rmpi_net_mr_stats().invalidations;
    free(big);
    CHECK(rmpi_net_mr_stats().invalidations == inv0 + 1, "free of an mmap'd chunk invalidated its region");
    /* mremap moves the old range away */
    p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    rmpi_net_mr_get(&rails[2], p, page, &m);
    rmpi_net_mr_put(&rails[2], &m);
    inv0 = rmpi_net_mr_stats().invalidations;
    char *q = mremap(p, 2 * page, 64 * page, MREMAP_MAYMOVE);
    CHECK(q != MAP_FAILED && rmpi_net_mr_stats().invalidations == inv0 + 1, "mremap invalidated the old range");
    /* madvise(DONTNEED) drops the pages under a region */
    rmpi_net_mr_get(&rails[2], q, page, &m);
    rmpi_net_mr_put(&rails[2], &m);
    inv0 = rmpi_net_mr_stats().invalidations;
    madvise(q, page, MADV_DONTNEED);
    CHECK(rmpi_net_mr_stats().invalidations == inv0 + 1, "madvise(DONTNEED) invalidated the region");
    munmap(q, 64 * page);
    rmpi_net_mr_flush();
}

static void test_limit(char *mem)
{
    setup(3 * page);
    rmpi_mr_t m[5];
    for (int i = 0; i < 5; i++) {
        rmpi_net_mr_get(&rails[0], mem + 2 * i * page, page, &m[i]);
        rmpi_net_mr_put(&rails[0], &m[i]);
    }
    rmpi_net_mr_stats_t st = rmpi_net_mr_stats();
    CHECK(st.unused_bytes <= (size_t)3 * page, "unused bytes %zu over the limit", st.unused_bytes);
    CHECK(st.entries == 3 && st.evictions >= 2, "%zu entries, %llu evictions", st.entries,
          (unsigned long long)st.evictions);
    /* the most recent ones survive */
    rmpi_mr_t x;
    int r0 = nregs;
    rmpi_net_mr_get(&rails[0], mem + 8 * page, page, &x);
    CHECK(nregs == r0 && x.rkey == m[4].rkey, "the most recently used region was kept");
    rmpi_net_mr_put(&rails[0], &x);
    rmpi_net_mr_get(&rails[0], mem, page, &x);
    CHECK(nregs == r0 + 1, "the least recently used region was evicted");
    rmpi_net_mr_put(&rails[0], &x);
    /* entries in use are never evicted, even over the limit */
    setup(0 + 1);
    rmpi_mr_t held[4];
    for (int i = 0; i < 4; i++)
        rmpi_net_mr_get(&rails[1], mem + 2 * i * page, page, &held[i]);
    for (int i = 0; i < 4; i++)
        CHECK(regs[held[i].rkey].live, "region %d in use was dropped", i);
    for (int i = 0; i < 4; i++)
        rmpi_net_mr_put(&rails[1], &held[i]);
    rmpi_net_mr_flush();
}

/* Random gets, puts and invalidations over 64 pages: a hit must come from a registration
 * made after the last invalidation touching its range. */
static void test_model(char *mem)
{
    setup(16 * page);
    unit_rng_t rng = unit_seed(7);
    enum { NHELD = 32 };
    rmpi_mr_t held[NHELD];
    int held_rail[NHELD], nheld = 0;
    uint64_t inval_epoch[64] = {0};
    for (int step = 0; step < 20000; step++) {
        int what = (int)unit_range(&rng, 0, 9);
        if (what < 5 && nheld < NHELD) {
            size_t off = unit_range(&rng, 0, 60 * page), len = unit_range(&rng, 1, 3 * page);
            int rail = (int)unit_range(&rng, 0, NRAILS - 1);
            rmpi_mr_t m;
            CHECK(rmpi_net_mr_get(&rails[rail], mem + off, len, &m) == 0, "get");
            fake_reg_t *g = &regs[m.rkey];
            CHECK(g->live && g->a <= (uintptr_t)mem + off && (uintptr_t)mem + off + len <= g->b,
                  "step %d: registration does not cover the range", step);
            for (uintptr_t pg = (g->a - (uintptr_t)mem) / page; pg < (g->b - (uintptr_t)mem) / page && pg < 64; pg++)
                CHECK(inval_epoch[pg] <= g->serial_epoch, "step %d: hit on memory invalidated after registration",
                      step);
            held[nheld] = m;
            held_rail[nheld++] = rail;
        } else if (what < 8 && nheld) {
            int k = (int)unit_range(&rng, 0, (uint64_t)nheld - 1);
            rmpi_net_mr_put(&rails[held_rail[k]], &held[k]);
            held[k] = held[nheld - 1];
            held_rail[k] = held_rail[--nheld];
        } else {
            size_t off = unit_range(&rng, 0, 62 * page), len = unit_range(&rng, 1, 2 * page);
            epoch++;
            for (size_t pg = off / page; pg <= (off + len - 1) / page; pg++)
                inval_epoch[pg] = epoch;
            rmpi_net_mr_invalidate(mem + off, len);
        }
        CHECK_BAIL();
    }
    while (nheld--)
        rmpi_net_mr_put(&rails[held_rail[nheld]], &held[nheld]);
    rmpi_net_mr_flush();
    CHECK(live_regs() == 0, "%d registrations never dropped", live_regs());
    CHECK(ndereg == nregs, "%d registrations, %d dropped", nregs, ndereg);
}

int main(void)
{
    page = sysconf(_SC_PAGESIZE);
    rmpi_knobs_init();
    rmpi_net_mr_cache_set_rails(rail_at);
    char *mem = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    test_reuse(mem);
    test_invalidate(mem);
    test_hooks();
    test_limit(mem);
    test_model(mem);
    return finish("mrcache");
}
