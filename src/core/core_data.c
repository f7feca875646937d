/* Typed data: the protocol choice for a message whose data is not one byte range (the
 * seed mpi2-layering: segment lists instead of packing). The bindings hand over the
 * user's (buf, count, datatype) as it is (RMPI_RF_TYPED); here the core picks, per
 * message, an eager segment list, a rendezvous piece by piece, or a packed copy, and for
 * a receive the scatter on arrival or pieces read in place. The datatype layer (above)
 * only lists and moves the bytes, through rmpi_core_types. */
#include "core_impl.h"

#include <stdlib.h>

const rmpi_core_type_ops_t *rmpi_core_types;
size_t rmpi_core_seg_min = 8192;

/* Pieces long enough that one RDMA op each beats DATA frames (RMPI_RNDV_SEG_MIN). */
static int long_pieces(const rmpi_req_t *r, size_t min) { return rmpi_core_types->mean_piece(r->udt) >= min; }

int rmpi_core_long_pieces(const rmpi_req_t *r, const core_peer_t *cp) { return long_pieces(r, cp->seg_min); }

void rmpi_core_scatter_at(rmpi_req_t *r, const void *data, size_t n, size_t off)
{
    rmpi_core_types->unpack(data, n, r->user, r->ucount, r->udt, off);
}

int rmpi_core_segs(rmpi_req_t *r, size_t off, size_t len, struct iovec *iov, int max)
{
    size_t reached;
    return rmpi_core_types->pieces(r->user, r->ucount, r->udt, off, len, iov, max, &reached);
}

/* An eager message within the peer's segment bound goes as its list of segments, which
 * the provider gathers from the user's buffer (no packed copy). 0: it does not fit. */
static int send_segs(rmpi_req_t *r, core_peer_t *cp)
{
    if (r->len > cp->eager_limit || cp->seg_max == 0)
        return 0;
    struct iovec iov[1 + RMPI_CORE_SEG_CAP];
    size_t reached;
    int n = rmpi_core_types->pieces(r->user, r->ucount, r->udt, 0, r->len, iov + 1, cp->seg_max, &reached);
    if (reached < r->len)
        return 0;
    r->buf = NULL;
    rmpi_core_isend_segs(r, iov, n);
    return 1;
}

int rmpi_core_typed_send(rmpi_req_t *r)
{
    core_peer_t *cp = rmpi_core_peer(rmpi_vc_get(r->rank));
    r->flags &= (uint16_t) ~(RMPI_RF_SEGS | RMPI_RF_FRAGS);
    if (send_segs(r, cp))
        return 0;
    if (r->len > cp->eager_limit) {
        /* a rendezvous of long pieces: one RDMA op per piece of the user's memory; of
         * short pieces: DATA frames gathered or packed one fragment at a time (core_frag.c) */
        r->buf = NULL;
        r->flags |= long_pieces(r, cp->seg_min) ? RMPI_RF_SEGS : RMPI_RF_FRAGS;
        return rmpi_core_isend_bytes(r);
    }
    /* Too many segments for an eager frame: packed. The copy goes at completion
     * (rmpi_core_typed_done). */
    r->buf = rmpi_xmalloc(r->len);
    rmpi_core_types->pack(r->user, r->ucount, r->udt, 0, r->buf, r->len);
    rmpi_core_stats.packed_sends++;
    return rmpi_core_isend_bytes(r);
}

void rmpi_core_typed_recv(rmpi_req_t *r)
{
    r->buf = NULL;
    r->flags = (uint16_t)((r->flags & ~RMPI_RF_SEGS) | RMPI_RF_SCATTER);
    if (long_pieces(r, rmpi_core_seg_min))
        r->flags |= RMPI_RF_SEGS;
}

void rmpi_core_typed_done(rmpi_req_t *r)
{
    if (r->kind == RMPI_REQ_SEND) {
        free(r->buf);
        r->buf = NULL; /* a cancel may complete the request a second time */
    }
}
