/* core private declarations: wire format (docs/wire/core.md), per-peer state, queues. */
#ifndef RMPI_CORE_IMPL_H
#define RMPI_CORE_IMPL_H

#include "core.h"

/* Frame types (rmpi_vc_hdr_t.type). Version 1 of docs/wire/core.md. */
enum {
    RMPI_F_EAGER = 1,   /* full header: ctx, src, tag [, sreq if SYNC] + payload */
    RMPI_F_EAGER_SHORT, /* cached header: payload only */
    RMPI_F_RTS,         /* rendezvous request to send */
    RMPI_F_CTS,         /* clear to send (write mode) */
    RMPI_F_FIN,         /* rendezvous data is in place / has been read */
    RMPI_F_SYNC_ACK,    /* a synchronous send was matched */
};
#define RMPI_FF_SYNC 1

typedef struct wire_match {
    rmpi_vc_hdr_t h;
    uint32_t ctx;
    int32_t src, tag;
} wire_match_t;

typedef struct wire_rts {
    wire_match_t m;
    uint64_t sreq, len, addr, rkey;
} wire_rts_t;

typedef struct wire_cts {
    rmpi_vc_hdr_t h;
    uint32_t pad;
    uint64_t sreq, rreq, addr, rkey, len;
} wire_cts_t;

typedef struct wire_req {
    rmpi_vc_hdr_t h;
    uint32_t pad;
    uint64_t req;
} wire_req_t;

/* Per-peer core state, lives right after the VC (rmpi_vc_t.core). */
typedef struct core_peer {
    uint32_t tx_ctx, rx_ctx;
    int32_t tx_src, tx_tag, rx_src, rx_tag;
    int tx_valid, ready;
    size_t eager_limit;
} core_peer_t;

/* Posted and unexpected queues of one context. */
typedef struct ctxq {
    rmpi_list_t posted, unexp;
} ctxq_t;

extern ctxq_t **rmpi_ctxq;
extern uint32_t rmpi_nctxq;
ctxq_t *rmpi_core_ctxq_grow(uint32_t ctx);
static inline ctxq_t *rmpi_core_ctxq(uint32_t ctx)
{
    if (RMPI_LIKELY(ctx < rmpi_nctxq && rmpi_ctxq[ctx]))
        return rmpi_ctxq[ctx];
    return rmpi_core_ctxq_grow(ctx);
}

extern int rmpi_rndv_write, rmpi_hdr_cache;
void rmpi_core_deliver(rmpi_vc_t *vc, const void *frame, size_t len);
void rmpi_core_peer_init(rmpi_vc_t *vc);

static inline core_peer_t *rmpi_core_peer(rmpi_vc_t *vc)
{
    core_peer_t *cp = vc->core;
    if (RMPI_UNLIKELY(!cp->ready))
        rmpi_core_peer_init(vc);
    return cp;
}

#endif
