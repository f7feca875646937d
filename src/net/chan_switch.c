/* The provider-neutral half of the channel switch: chan_switch.h. */
#include "chan_switch.h"

#include <stdlib.h>

int rmpi_net_chsw_start(rmpi_net_chsw_t *x, int to)
{
    if (x->waiting || x->kind == to)
        return 1;
    x->kind = to;
    x->waiting = 1;
    return 0;
}

void rmpi_net_chsw_marked(rmpi_net_chsw_t *x, int to, rmpi_net_chan_stats_t *st, int sender, int me)
{
    if (!x->waiting || x->kind != to)
        rmpi_fatal("rank %d ended a %s channel to rank %d that it was not asked to leave.", sender,
                   to == RMPI_NET_CHAN_DEDICATED ? "shared" : "dedicated", me);
    x->waiting = 0;
    st->switches++;
    if (to == RMPI_NET_CHAN_DEDICATED) {
        st->rings_asked--;
        st->dedicated_now++;
    } else {
        st->dedicated_now--;
    }
}

void rmpi_net_chsw_force_init(rmpi_net_chsw_force_t *f, int rank, unsigned salt)
{
    *f = (rmpi_net_chsw_force_t){0};
    if (rmpi_knobs.CHANNELS == RMPI_CHANNELS_ADAPTIVE && rmpi_knobs.CHAN_FORCE_SWITCH_MS > 0) {
        f->ns = (uint64_t)rmpi_knobs.CHAN_FORCE_SWITCH_MS * 1000000ull;
        f->seed = (unsigned)rank * 2654435761u + salt;
    }
}

int rmpi_net_chsw_force_pick(rmpi_net_chsw_force_t *f, int n, int me)
{
    uint64_t now = rmpi_time_ns();
    if (now < f->next || n < 2)
        return -1;
    f->next = now + f->ns;
    int i = (int)(rand_r(&f->seed) % (unsigned)(n - 1));
    return i + (i >= me);
}
