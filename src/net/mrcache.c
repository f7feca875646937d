/* Registration cache, the pin-down cache of Huang et al., 'Design Alternatives and
 * Performance Trade-offs for Implementing MPI-2 over InfiniBand', sec. 3.1; shared by every
 * rail.
 *
 * An entry is a page-aligned address range with one registration per rail that has used it
 * (registered once per domain, on first use by that rail) and a count of users. A lookup
 * takes the most recently used valid entry covering the range. Entries nobody uses stay
 * registered, least recently used first out, while their bytes exceed RMPI_MR_CACHE_SIZE.
 * Memory that goes away (mrcache_hooks.c: munmap, mremap, madvise, free of mapped chunks,
 * heap trims) makes the entries overlapping it stale: never hit again, deregistered once
 * unused.
 *
 * Invalidation can come from any thread at any time, also from inside a provider's
 * deregistration (it frees memory), so it only marks entries under `lock`; registration and
 * deregistration calls happen outside `lock`, by the lock holder of the library. */
#include "net.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct mrc_entry {
    rmpi_list_t link; /* the cache list, most recently used first; or the dead list */
    uintptr_t start, end;
    int refs;
    int stale;
    uint32_t have; /* bit i: mr[i] is registered on rail index i */
    rmpi_mr_t mr[RMPI_NET_MAX_RAILS];
} mrc_entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rmpi_list_t cache = {&cache, &cache}, dead = {&dead, &dead};
static size_t nentries; /* read without the lock by the hooks: 0 = nothing to check */
static size_t unused_bytes;
static uintptr_t page_mask;
static rmpi_net_mr_stats_t stats;

static rmpi_rail_t *(*rail_of)(int index) = rmpi_net_rail;

void rmpi_net_mr_cache_set_rails(rmpi_rail_t *(*lookup)(int index)) { rail_of = lookup; }

static size_t entry_bytes(const mrc_entry_t *e) { return (size_t)(e->end - e->start); }

static void drop_registrations(mrc_entry_t *e)
{
    for (int i = 0; i < RMPI_NET_MAX_RAILS; i++)
        if (e->have & (1u << i)) {
            rmpi_rail_t *rail = rail_of(i);
            rail->ops->mr_dereg(rail, &e->mr[i]);
        }
    free(e);
}

/* Deregister what was moved to the dead list (called without `lock`). */
static void reap(void)
{
    for (;;) {
        pthread_mutex_lock(&lock);
        mrc_entry_t *e = NULL;
        if (!rmpi_list_empty(&dead)) {
            e = RMPI_CONTAINER_OF(dead.next, mrc_entry_t, link);
            rmpi_list_remove(&e->link);
        }
        pthread_mutex_unlock(&lock);
        if (!e)
            return;
        drop_registrations(e);
    }
}

/* An unused entry leaves the cache (lock held). */
static void retire(mrc_entry_t *e)
{
    rmpi_list_remove(&e->link);
    nentries--;
    if (!e->stale)
        unused_bytes -= entry_bytes(e);
    rmpi_list_push_back(&dead, &e->link);
}

static void trim(size_t limit)
{
    while (unused_bytes > limit) {
        mrc_entry_t *victim = NULL;
        for (rmpi_list_t *p = cache.prev; p != &cache; p = p->prev) {
            mrc_entry_t *e = RMPI_CONTAINER_OF(p, mrc_entry_t, link);
            if (!e->refs) {
                victim = e;
                break;
            }
        }
        if (!victim)
            return;
        retire(victim);
        stats.evictions++;
    }
}

static int cached_rail(const rmpi_rail_t *rail)
{
    /* rails opened outside the rail table (provider unit tests) register directly */
    return rail->hints.mr_cache && rmpi_knobs.MR_CACHE_SIZE > 0 && rail->index >= 0 &&
           rail->index < RMPI_NET_MAX_RAILS && rail_of(rail->index) == rail;
}

int rmpi_net_mr_get(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    if (!cached_rail(rail) || len == 0) {
        mr->cache = NULL;
        return rail->ops->mr_reg(rail, addr, len, mr);
    }
    reap();
    if (!page_mask)
        page_mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
    uintptr_t a = (uintptr_t)addr, b = a + len;
    int idx = rail->index;
    uint32_t bit = 1u << idx;
    pthread_mutex_lock(&lock);
    mrc_entry_t *hit = NULL;
    rmpi_list_t *p;
    rmpi_list_for_each(p, &cache)
    {
        mrc_entry_t *e = RMPI_CONTAINER_OF(p, mrc_entry_t, link);
        if (!e->stale && e->start <= a && b <= e->end) {
            hit = e;
            break;
        }
    }
    if (hit) {
        if (!hit->refs++)
            unused_bytes -= entry_bytes(hit);
        rmpi_list_remove(&hit->link);
        rmpi_list_push_front(&cache, &hit->link);
        if (hit->have & bit) {
            stats.hits++;
            *mr = hit->mr[idx];
            mr->cache = hit;
            pthread_mutex_unlock(&lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&lock);

    mrc_entry_t *e = hit;
    if (!e) {
        e = rmpi_xcalloc(1, sizeof *e);
        e->start = a & ~page_mask;
        e->end = (b + page_mask) & ~page_mask;
        e->refs = 1;
    }
    rmpi_mr_t m;
    int rc = rail->ops->mr_reg(rail, (void *)e->start, entry_bytes(e), &m);
    pthread_mutex_lock(&lock);
    stats.misses++;
    if (rc) {
        if (hit && !--hit->refs && !hit->stale)
            unused_bytes += entry_bytes(hit);
        pthread_mutex_unlock(&lock);
        if (!hit) /* not under `lock`: free() runs the invalidation hook, which takes it */
            free(e);
        return rc;
    }
    e->mr[idx] = m;
    e->have |= bit;
    if (!hit) {
        rmpi_list_push_front(&cache, &e->link);
        nentries++;
    }
    *mr = m;
    mr->cache = e;
    pthread_mutex_unlock(&lock);
    return 0;
}

int rmpi_net_mr_get_ranges(rmpi_rail_t *rail, const rmpi_net_ranges_t *ranges, rmpi_mr_t *mr)
{
    mr->cache = NULL; /* a table entry, nothing pinned: rmpi_net_mr_put deregisters it */
    return rail->ops->mr_reg_ranges ? rail->ops->mr_reg_ranges(rail, ranges, mr) : -1;
}

int rmpi_net_mr_get_exact(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    mr->cache = NULL; /* rmpi_net_mr_put deregisters it */
    return rail->ops->mr_reg(rail, addr, len, mr);
}

void rmpi_net_mr_retire(rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    if (!mr->cache && rail->ops->mr_retire)
        rail->ops->mr_retire(rail, mr);
    else
        rmpi_net_mr_put(rail, mr);
}

void rmpi_net_mr_put(rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    mrc_entry_t *e = mr->cache;
    if (!e) {
        rail->ops->mr_dereg(rail, mr);
        return;
    }
    mr->cache = NULL;
    pthread_mutex_lock(&lock);
    if (--e->refs == 0) {
        if (e->stale) {
            retire(e);
        } else {
            unused_bytes += entry_bytes(e);
            trim((size_t)rmpi_knobs.MR_CACHE_SIZE);
        }
    }
    pthread_mutex_unlock(&lock);
    reap();
}

void rmpi_net_mr_invalidate(const void *addr, size_t len)
{
    if (__atomic_load_n(&nentries, __ATOMIC_RELAXED) == 0 || len == 0)
        return;
    uintptr_t a = (uintptr_t)addr, b = a + len;
    pthread_mutex_lock(&lock);
    rmpi_list_t *p, *tmp;
    rmpi_list_for_each_safe(p, tmp, &cache)
    {
        mrc_entry_t *e = RMPI_CONTAINER_OF(p, mrc_entry_t, link);
        if (e->stale || e->end <= a || b <= e->start)
            continue;
        stats.invalidations++;
        if (e->refs) {
            e->stale = 1; /* its user finishes with the old pages; nobody else gets it */
        } else {
            retire(e);
        }
    }
    pthread_mutex_unlock(&lock);
}

RMPI_NET_HOOK_SAFE int rmpi_net_mr_cached(void) { return __atomic_load_n(&nentries, __ATOMIC_RELAXED) != 0; }

void rmpi_net_mr_flush(void)
{
    pthread_mutex_lock(&lock);
    rmpi_list_t *p, *tmp;
    rmpi_list_for_each_safe(p, tmp, &cache)
    {
        mrc_entry_t *e = RMPI_CONTAINER_OF(p, mrc_entry_t, link);
        if (!e->refs)
            retire(e);
    }
    pthread_mutex_unlock(&lock);
    reap();
}

rmpi_net_mr_stats_t rmpi_net_mr_stats(void)
{
    pthread_mutex_lock(&lock);
    rmpi_net_mr_stats_t s = stats;
    s.entries = nentries;
    s.unused_bytes = unused_bytes;
    pthread_mutex_unlock(&lock);
    return s;
}
