/* Address sets (util.h): open addressing with linear probing; a deleted address leaves a
 * tombstone (1) so that probes for others still pass it. The table is rebuilt when
 * addresses and tombstones fill half of it, at twice the size when addresses alone fill a
 * quarter, so probes stay short and a miss (a made-up handle) ends at an empty slot. */
#include "util.h"

#include <stdlib.h>

uintptr_t rmpi_addrset_none[2];

static size_t slot_of(const rmpi_addrset_t *s, uintptr_t a)
{
    return (size_t)((a * 0x9e3779b97f4a7c15ull) >> s->shift);
}

static int probe(const rmpi_addrset_t *s, uintptr_t a)
{
    for (size_t k = slot_of(s, a);; k = (k + 1) & s->mask) {
        if (s->slot[k] == a)
            return 1;
        if (!s->slot[k])
            return 0;
    }
}

int rmpi_addrset_find(rmpi_addrset_t *s, const void *p, int locked)
{
    uintptr_t a = (uintptr_t)p;
    if (!locked) {
        int r = probe(s, a);
        if (r)
            __atomic_store_n(&s->last, a, __ATOMIC_RELAXED);
        return r;
    }
    pthread_mutex_lock(&s->lock);
    int r = probe(s, a);
    pthread_mutex_unlock(&s->lock);
    return r;
}

static void put(rmpi_addrset_t *s, uintptr_t a)
{
    size_t k = slot_of(s, a);
    while (s->slot[k] > 1)
        k = (k + 1) & s->mask;
    s->used += s->slot[k] == 0;
    s->slot[k] = a;
    s->live++;
}

static void rebuild(rmpi_addrset_t *s)
{
    size_t cap = s->mask + 1, ncap = cap < 64 ? 64 : cap;
    while (4 * (s->live + 1) > ncap)
        ncap *= 2;
    uintptr_t *old = s->slot;
    s->slot = rmpi_xcalloc(ncap, sizeof *s->slot);
    s->mask = ncap - 1;
    s->shift = 64 - (unsigned)__builtin_ctzll(ncap);
    s->live = s->used = 0;
    if (old != rmpi_addrset_none) {
        for (size_t k = 0; k < cap; k++)
            if (old[k] > 1)
                put(s, old[k]);
        free(old);
    }
}

void rmpi_addrset_add(rmpi_addrset_t *s, const void *p)
{
    pthread_mutex_lock(&s->lock);
    if (2 * (s->used + 1) > s->mask + 1)
        rebuild(s);
    put(s, (uintptr_t)p);
    pthread_mutex_unlock(&s->lock);
}

void rmpi_addrset_del(rmpi_addrset_t *s, const void *p)
{
    uintptr_t a = (uintptr_t)p;
    pthread_mutex_lock(&s->lock);
    if (__atomic_load_n(&s->last, __ATOMIC_RELAXED) == a)
        __atomic_store_n(&s->last, 0, __ATOMIC_RELAXED);
    for (size_t k = slot_of(s, a); s->slot[k]; k = (k + 1) & s->mask)
        if (s->slot[k] == a) {
            s->slot[k] = 1;
            s->live--;
            break;
        }
    pthread_mutex_unlock(&s->lock);
}
