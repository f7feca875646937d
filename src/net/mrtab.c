/* net: the registration table of providers that emulate RDMA (tcp, ofi without FI_RMA).
 * A registration is a slot holding (addr, len); its key names the slot and a random tag,
 * so a stale or forged key names no registration (docs/wire/auth.md). */
#include "net.h"

#include <errno.h>
#include <stdlib.h>

struct rmpi_net_mrslot {
    char *addr;
    size_t len;
    uint64_t tag; /* the random high bits of the live registration's key */
    int used;
    int next; /* next free slot + 1; 0: end */
};

/* A key is (random tag << SLOT_BITS) | (slot + 1): the slot makes lookup O(1), the 40
 * random bits make a key of a live registration unguessable, and a stale key names no
 * later registration of its slot. Random bytes are drawn in batches (one getrandom per
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

void rmpi_net_mrtab_reg(rmpi_net_mrtab_t *t, void *addr, size_t len, rmpi_mr_t *mr)
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
    s->tag = rmpi_net_random_key(64 - SLOT_BITS);
    mr->addr = addr;
    mr->len = len;
    mr->rkey = s->tag << SLOT_BITS | (uint64_t)(i + 1);
    mr->desc = NULL;
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
    s->next = t->free;
    t->free = (int)(s - t->slot) + 1;
    mr->rkey = 0;
}

int rmpi_net_mrtab_check(const rmpi_net_mrtab_t *t, uint64_t rkey, uint64_t raddr, uint64_t len)
{
    const struct rmpi_net_mrslot *s = slot_of(t, rkey);
    if (!s)
        return -EFAULT;
    uint64_t base = (uintptr_t)s->addr;
    return raddr < base || len > s->len || raddr - base > s->len - len ? -EFAULT : 0;
}

void rmpi_net_mrtab_free(rmpi_net_mrtab_t *t)
{
    free(t->slot);
    *t = (rmpi_net_mrtab_t){0};
}
