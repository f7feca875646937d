#include "ofi_link.h"

int rmpi_ofi_link_lost(rmpi_ofi_link_t *l)
{
    int was = !l->down;
    l->down = 1;
    l->unconfirmed = 0;
    l->hello = 0;
    return was;
}

int rmpi_ofi_link_fresh(const rmpi_ofi_link_t *l)
{
    return !l->down && !l->epoch && !l->try_epoch && !l->hello && !l->unconfirmed;
}

uint32_t rmpi_ofi_link_propose(rmpi_ofi_link_t *l)
{
    l->try_epoch = (l->try_epoch > l->epoch ? l->try_epoch : l->epoch) + 1;
    l->hello = l->try_epoch;
    return l->hello;
}

int rmpi_ofi_link_hello(const rmpi_ofi_link_t *l, uint32_t a, uint32_t b) { return b == l->epoch && a > l->epoch; }

static void adopt(rmpi_ofi_link_t *l, uint32_t e, int confirmed)
{
    l->epoch = e;
    if (l->try_epoch < e)
        l->try_epoch = e;
    l->hello = 0;
    l->down = 0;
    l->unconfirmed = !confirmed;
}

int rmpi_ofi_link_take(rmpi_ofi_link_t *l, uint32_t a)
{
    adopt(l, a, 0);
    return 0;
}

/* An answer to any try since the current epoch (the others are never answered). */
int rmpi_ofi_link_ack(rmpi_ofi_link_t *l, uint32_t a)
{
    if (!(l->down && a > l->epoch && a <= l->try_epoch))
        return 0;
    adopt(l, a, 1);
    return 1;
}

int rmpi_ofi_link_up(rmpi_ofi_link_t *l, uint32_t a)
{
    if (!l->unconfirmed || l->down || a != l->epoch)
        return 0;
    l->unconfirmed = 0;
    return 1;
}

/* The epoch of ours, proposed since the current one, whose low bits are these, or 0. */
static uint32_t proposed(const rmpi_ofi_link_t *l, uint32_t bits, uint32_t mask)
{
    for (uint32_t e = l->try_epoch; e > l->epoch; e--)
        if ((e & mask) == bits)
            return e;
    return 0;
}

int rmpi_ofi_link_frame(rmpi_ofi_link_t *l, uint32_t bits, uint32_t mask)
{
    if (l->down || bits != (l->epoch & mask)) {
        uint32_t took = l->down ? proposed(l, bits, mask) : 0;
        if (!took)
            return RMPI_OFI_LINK_STALE;
        adopt(l, took, 1);
        return RMPI_OFI_LINK_ADOPTED;
    }
    if (l->unconfirmed) {
        l->unconfirmed = 0;
        return RMPI_OFI_LINK_CONFIRMED;
    }
    return RMPI_OFI_LINK_CURRENT;
}
