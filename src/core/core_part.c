/* Partitioned point-to-point (MPI 4.0: Psend_init, Precv_init, Pready*, Parrived).
 *
 * A partitioned operation is a persistent send or receive of the whole buffer (partitions
 * x count elements) with a little state in req->ext. MPI_Start arms it; the send goes out
 * as one message once every partition is marked ready, the receive is posted at Start, and
 * a partition has arrived when the whole message has (every partition has then arrived:
 * correct, if coarser than necessary). The messages travel on the communicator's
 * collective context with tags of their own (part_tag), so a partitioned send matches
 * only a partitioned receive, never an ordinary one or a collective's. */
#include "core_impl.h"

#include <limits.h>
#include <string.h>

typedef struct part {
    int send;              /* 1: Psend_init, 0: Precv_init */
    int n;                 /* partitions */
    int nready;            /* send: partitions marked ready since Start */
    unsigned char ready[]; /* send: one flag per partition */
} part_t;

/* User tags 0..TAG_UB onto negative tags (collective traffic uses non-negative ones and
 * MPI_ANY_TAG is -2): INT_MIN + tag, except that the two highest tags share -1. */
static int part_tag(int tag) { return tag >= INT_MAX - 1 ? -1 : INT_MIN + tag; }

void rmpi_core_part_init(rmpi_req_t *r, int n, int send)
{
    r->ctx = r->ctx + 1;
    r->tag = part_tag(r->tag);
    part_t *p = rmpi_xcalloc(1, sizeof *p + (size_t)n);
    p->send = send;
    p->n = n;
    r->ext = p;
    r->flags |= RMPI_RF_PERSISTENT | RMPI_RF_PARTITIONED;
    r->done = 1;
}

void rmpi_core_part_start(rmpi_req_t *r)
{
    part_t *p = r->ext;
    if (p->send) {
        memset(p->ready, 0, (size_t)p->n);
        p->nready = 0;
        r->done = 0;
        return;
    }
    if (r->kind == RMPI_REQ_NULLOP) {
        r->done = 1;
        return;
    }
    rmpi_core_irecv(r);
}

int rmpi_core_part_is_send(const rmpi_req_t *r) { return ((const part_t *)r->ext)->send; }

int rmpi_core_part_count(const rmpi_req_t *r) { return ((const part_t *)r->ext)->n; }

int rmpi_core_part_is_ready(const rmpi_req_t *r, int i) { return ((const part_t *)r->ext)->ready[i]; }

void rmpi_core_part_ready(rmpi_req_t *r, int lo, int hi, const int *list)
{
    part_t *p = r->ext;
    int count = list ? lo : hi - lo + 1;
    for (int k = 0; k < count; k++) {
        p->ready[list ? list[k] : lo + k] = 1;
        p->nready++;
    }
    if (p->nready != p->n)
        return;
    if (r->kind == RMPI_REQ_NULLOP)
        r->done = 1;
    else
        rmpi_core_isend(r);
}
