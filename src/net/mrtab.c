/* net: the registration table of providers that emulate RDMA (tcp, ofi without FI_RMA).
 * A registration is a slot holding (addr, len), or a range list its owner keeps current
 * (MPI's dynamic windows: one key for every region attached now or later, as the target
 * checks each access itself); its key names the slot and a random tag, so a stale or
 * forged key names no registration (docs/wire/auth.md). */
#include "net.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rmpi_net_mrslot {
    char *addr;
    size_t len;
    const rmpi_net_ranges_t *ranges; /* a range-list registration: addr and len unused */
    uint64_t tag;                    /* the random high bits of the live registration's key */
    int used;
    int next; /* next free slot + 1; 0: end */
};

/* A key is (tag << SLOT_BITS) | (slot + 1): the slot makes lookup O(1), the tag's 39
 * random bits make a key of a live registration unguessable, and a stale key names no
 * later registration of its slot; its top bit is the kind (RMPI_NET_KEY_RANGES). Random bytes are drawn in batches (one getrandom per
 * 51 registrations). */
#define SLOT_BITS 24
uint64_t rmpi_net_random_key(int bits)
{
    static uint8_t pool[256];
    static size_t left;
    size_t nb = ((size_t)bits + 7) / 8;
    uint64_t v = 0;
    do {
        if (left < nb) {
            if (rmpi_auth_random(pool, sizeof pool))
                rmpi_fatal("getrandom failed: no key for a memory registration.");
            left = sizeof pool;
        }
        left -= nb;
        v = 0;
        for (size_t i = 0; i < nb; i++)
            v = v << 8 | pool[left + i];
        if (bits < 64)
            v &= (UINT64_C(1) << bits) - 1;
    } while (v == 0);
    return v;
}

static void slot_reg(rmpi_net_mrtab_t *t, void *addr, size_t len, const rmpi_net_ranges_t *ranges, rmpi_mr_t *mr)
{
    if (!t->free) {
        int old = t->n, cap = old ? old * 2 : 64;
        if (cap > (1 << SLOT_BITS))
            rmpi_fatal("more than %d memory registrations are live at once on one rail.", 1 << SLOT_BITS);
        t->slot = rmpi_xrealloc(t->slot, (size_t)cap * sizeof *t->slot);
        for (int i = cap - 1; i >= old; i--) {
            t->slot[i] = (struct rmpi_net_mrslot){.next = t->free};
            t->free = i + 1;
        }
        t->n = cap;
    }
    int i = t->free - 1;
    struct rmpi_net_mrslot *s = &t->slot[i];
    t->free = s->next;
    s->used = 1;
    s->addr = addr;
    s->len = len;
    s->ranges = ranges;
    /* the top bit says which kind (RMPI_NET_KEY_RANGES): 39 random bits remain */
    s->tag = rmpi_net_random_key(63 - SLOT_BITS) | (ranges ? RMPI_NET_KEY_RANGES >> SLOT_BITS : 0);
    mr->addr = addr;
    mr->len = len;
    mr->rkey = s->tag << SLOT_BITS | (uint64_t)(i + 1);
    mr->desc = NULL;
}

void rmpi_net_mrtab_reg(rmpi_net_mrtab_t *t, void *addr, size_t len, rmpi_mr_t *mr)
{
    slot_reg(t, addr, len, NULL, mr);
}

void rmpi_net_mrtab_reg_ranges(rmpi_net_mrtab_t *t, const rmpi_net_ranges_t *ranges, rmpi_mr_t *mr)
{
    slot_reg(t, NULL, 0, ranges, mr);
}

static struct rmpi_net_mrslot *slot_of(const rmpi_net_mrtab_t *t, uint64_t rkey)
{
    uint64_t i = (rkey & ((1u << SLOT_BITS) - 1)) - 1;
    if (i >= (uint64_t)t->n)
        return NULL;
    struct rmpi_net_mrslot *s = &t->slot[i];
    return s->used && s->tag == rkey >> SLOT_BITS ? s : NULL;
}

void rmpi_net_mrtab_dereg(rmpi_net_mrtab_t *t, rmpi_mr_t *mr)
{
    struct rmpi_net_mrslot *s = slot_of(t, mr->rkey);
    if (!s)
        return;
    s->used = 0;
    s->addr = NULL;
    s->len = 0;
    s->ranges = NULL;
    s->next = t->free;
    t->free = (int)(s - t->slot) + 1;
    mr->rkey = 0;
}

int rmpi_net_mrtab_check(const rmpi_net_mrtab_t *t, uint64_t rkey, uint64_t raddr, uint64_t len)
{
    const struct rmpi_net_mrslot *s = slot_of(t, rkey);
    if (!s)
        return -EFAULT;
    if (s->ranges)
        return rmpi_net_ranges_covers(s->ranges, raddr, len) ? 0 : -EFAULT;
    uint64_t base = (uintptr_t)s->addr;
    return raddr < base || len > s->len || raddr - base > s->len - len ? -EFAULT : 0;
}

void rmpi_net_mrtab_free(rmpi_net_mrtab_t *t)
{
    free(t->slot);
    *t = (rmpi_net_mrtab_t){0};
}

/* The last range starting at or below a (binary search), or -1. */
static int range_at(const rmpi_net_ranges_t *s, uint64_t a)
{
    int lo = 0, hi = s->n; /* ranges [0, lo) start at or below a, [hi, n) above it */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (s->r[mid].addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

int rmpi_net_ranges_covers(const rmpi_net_ranges_t *s, uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len;
    if (end < addr)
        return 0;
    int i = range_at(s, addr);
    if (i < 0 || addr - s->r[i].addr >= s->r[i].len)
        return len == 0 && i >= 0 && addr == s->r[i].addr; /* a zero-byte range at a region's start */
    /* follow ranges that touch: they are sorted, so the next one must start where this ends */
    for (uint64_t at = s->r[i].addr + s->r[i].len; end > at; at = s->r[i].addr + s->r[i].len)
        if (++i == s->n || s->r[i].addr != at)
            return 0;
    return 1;
}

int rmpi_net_ranges_add(rmpi_net_ranges_t *s, uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len;
    if (end < addr)
        return -1;
    /* [addr, end) and [a, a + l) overlap when addr < a + l and a < end (MPI_Win_attach's
     * rule: a range of 0 bytes overlaps only one it lies strictly inside) */
    int lo = range_at(s, addr - (addr > 0)) + 1; /* first range starting at or above addr */
    if (addr == 0)
        lo = 0;
    if (lo > 0 && addr < s->r[lo - 1].addr + s->r[lo - 1].len)
        return -1;
    for (int j = lo; j < s->n && s->r[j].addr < end; j++)
        if (s->r[j].len || s->r[j].addr > addr)
            return -1;
    /* ranges of 0 bytes before a range starting at the same address, so that range_at
     * finds the one with bytes */
    int at = len ? range_at(s, addr) + 1 : lo;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        s->r = rmpi_xrealloc(s->r, (size_t)s->cap * sizeof *s->r);
    }
    memmove(&s->r[at + 1], &s->r[at], (size_t)(s->n - at) * sizeof *s->r);
    s->r[at] = (rmpi_net_range_t){addr, len};
    s->n++;
    return 0;
}

int rmpi_net_ranges_remove(rmpi_net_ranges_t *s, uint64_t addr)
{
    int i = range_at(s, addr);
    if (i < 0 || s->r[i].addr != addr)
        return -1;
    memmove(&s->r[i], &s->r[i + 1], (size_t)(s->n - i - 1) * sizeof *s->r);
    s->n--;
    return 0;
}

void rmpi_net_ranges_free(rmpi_net_ranges_t *s)
{
    free(s->r);
    *s = (rmpi_net_ranges_t){0};
}
