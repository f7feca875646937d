#include "coll.h"
#include "nbc.h"

/* Dissemination: in round k every rank sends to me + 2^k and receives from me - 2^k. */
rmpi_nbc_t *rmpi_coll_barrier_sched(rmpi_comm_t *c)
{
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    int n = c->size, me = c->rank;
    for (int k = 1; k < n; k <<= 1) {
        rmpi_nbc_recv(s, NULL, 0, (me - k + n) % n);
        rmpi_nbc_send(s, NULL, 0, (me + k) % n);
        rmpi_nbc_round(s);
    }
    return s;
}

int rmpi_coll_barrier(rmpi_comm_t *c) { return rmpi_nbc_run(rmpi_coll_barrier_sched(c)); }
