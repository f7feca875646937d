/* net: the registration table of providers that emulate RDMA (tcp, ofi without FI_RMA).
 * A registration is a slot holding (addr, len); its key names the slot and the slot's
 * generation, so a stale or forged key does not name a later registration of the slot. */
#include "net.h"

#include <errno.h>
#include <stdlib.h>

struct rmpi_net_mrslot {
    char *addr;
    size_t len;
    uint32_t gen;
    int used;
    int next;                /* next free slot + 1; 0: end */
};

void rmpi_net_mrtab_reg(rmpi_net_mrtab_t *t, void *addr, size_t len, rmpi_mr_t *mr)
{
    if (!t->free) {
        int old = t->n, cap = old ? old * 2 : 64;
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
    if (++s->gen == 0)
        s->gen = 1;
    mr->addr = addr;
    mr->len = len;
    mr->rkey = (uint64_t)s->gen << 32 | (uint64_t)(i + 1);
    mr->desc = NULL;
}

static struct rmpi_net_mrslot *slot_of(const rmpi_net_mrtab_t *t, uint64_t rkey)
{
    uint64_t i = (rkey & 0xffffffffu) - 1;
    if (i >= (uint64_t)t->n)
        return NULL;
    struct rmpi_net_mrslot *s = &t->slot[i];
    return s->used && s->gen == (uint32_t)(rkey >> 32) ? s : NULL;
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
