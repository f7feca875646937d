/* Rendezvous by DATA frames: a pipelined pack for data in short pieces (Huang et al.,
 * 'Design Alternatives and Performance Trade-offs for Implementing MPI-2 over
 * InfiniBand', sec. 3.2, weigh packing against one op per piece; here the packing is cut
 * into cache-sized fragments that overlap with the transfer). Pieces too short for one
 * RDMA op each used to be packed whole by the sender, read whole into a landing buffer and
 * scattered whole by the receiver: three copies of the message, one after the other,
 * through memory rather than cache. Now, after the RTS/CTS handshake (the receiver has
 * matched, so its memory is known), the sender sends the message as DATA frames of at
 * most RMPI_FRAG_SIZE bytes (the peer's scope): the provider gathers each from the user's
 * pieces (its own copy into the ring or socket, the one a contiguous eager frame pays), or, when a
 * fragment has more pieces than the rails gather, it is packed into one reused fragment
 * buffer first; the receiver scatters each frame into its pieces (or copies it into its
 * contiguous buffer) as it arrives, while the sender builds the next. Credit keeps at
 * most RMPI_CORE_FRAG_WINDOW fragments in flight, so a ring or socket never has to queue
 * a copy of the rest. Frames keep their order on a virtual channel (PSN), so the
 * receiver checks that each one starts where the previous ended. */
#include "core_impl.h"

#include <stdlib.h>
#include <string.h>

static char *stage; /* the reused fragment buffer of packed fragments */
static size_t stage_len;

static void send_credit(rmpi_vc_t *vc, uint64_t req, size_t at)
{
    wire_frag_t f = {{0, RMPI_F_CREDIT, 0}, 0, req, at};
    struct iovec iov = {&f, sizeof f};
    rmpi_vc_send(vc, &iov, 1, sizeof f);
}

/* The fragment size toward vc (its scope's RMPI_FRAG_SIZE, within one frame). */
static size_t frag_size(rmpi_vc_t *vc) { return rmpi_core_peer(vc)->frag_size; }

void rmpi_core_frag_cts(rmpi_req_t *r, rmpi_vc_t *vc)
{
    size_t win = RMPI_CORE_FRAG_WINDOW * frag_size(vc);
    r->frag_done = 0;
    r->frag_limit = r->st_bytes < win ? r->st_bytes : win;
    wire_cts_t f = {{0, RMPI_F_CTS, RMPI_FF_FRAGS},
                    (uint32_t)vc->nsub,
                    r->peer_req,
                    rmpi_core_wire_id(r, vc, RMPI_WANT_DATA),
                    r->frag_limit,
                    r->st_bytes,
                    {0}};
    size_t flen = RMPI_WIRE_KEYS_LEN(wire_cts_t, vc->nsub);
    struct iovec iov = {&f, flen};
    rmpi_vc_send(vc, &iov, 1, flen);
    rmpi_core_stats.frag_recvs++;
}

void rmpi_core_frag_data(rmpi_req_t *r, const char *data, size_t n)
{
    if (r->flags & RMPI_RF_SCATTER)
        rmpi_core_scatter_at(r, data, n, r->frag_done);
    else
        memcpy((char *)r->buf + r->frag_done, data, n);
    r->frag_done += n;
    if (r->frag_done == r->st_bytes) {
        rmpi_core_wire_id_free(r);
        rmpi_req_complete(r);
        return;
    }
    /* More credit once half the window is used: a CREDIT every other fragment. */
    size_t win = RMPI_CORE_FRAG_WINDOW * frag_size(r->vc);
    if (r->frag_limit < r->st_bytes && r->frag_limit - r->frag_done <= win / 2) {
        r->frag_limit = r->st_bytes - r->frag_done < win ? r->st_bytes : r->frag_done + win;
        send_credit(r->vc, r->peer_req, r->frag_limit);
    }
}

/* Send DATA frames up to the credit; the request completes with the last one (send()
 * copies or transmits a frame before it returns). */
static void frag_push(rmpi_req_t *r)
{
    rmpi_vc_t *vc = r->vc;
    size_t fs = frag_size(vc);
    int segs = rmpi_core_peer(vc)->seg_max;
    while (r->frag_done < r->frag_limit) {
        size_t off = r->frag_done, want = r->frag_limit - off < fs ? r->frag_limit - off : fs, got = want;
        struct iovec iov[1 + RMPI_CORE_SEG_CAP];
        int n = 1;
        if (!(r->flags & RMPI_RF_TYPED)) {
            iov[1] = (struct iovec){(char *)r->buf + off, want};
        } else {
            size_t reached = off;
            n = segs ? rmpi_core_types->pieces(r->user, r->ucount, r->udt, off, want, iov + 1, segs, &reached) : 0;
            got = reached - off;
            /* Fewer than half the fragment's bytes within the rails' gather list: pack it
             * (one copy into a buffer that stays in cache) rather than send short frames. */
            if (n <= 0 || got < want / 2) {
                if (stage_len < fs) {
                    free(stage);
                    stage = rmpi_xmalloc(fs);
                    stage_len = fs;
                }
                rmpi_core_types->pack(r->user, r->ucount, r->udt, off, stage, want);
                iov[1] = (struct iovec){stage, want};
                n = 1;
                got = want;
            }
        }
        wire_frag_t f = {{0, RMPI_F_DATA, 0}, 0, r->peer_req, off};
        iov[0] = (struct iovec){&f, sizeof f};
        rmpi_vc_send(vc, iov, n + 1, sizeof f + got);
        r->frag_done += got;
    }
    if (r->frag_done == r->st_bytes) {
        rmpi_core_wire_id_free(r);
        rmpi_rndv_drop(r); /* a contiguous sender's registration for the read it did not get */
        rmpi_req_complete(r);
    }
}

void rmpi_core_frag_start(rmpi_req_t *r, rmpi_vc_t *vc, size_t len, size_t at)
{
    r->vc = vc;
    r->st_bytes = len;
    r->frag_done = 0;
    r->frag_limit = at;
    rmpi_core_stats.frag_sends++;
    frag_push(r);
}

void rmpi_core_frag_credit(rmpi_req_t *r, size_t at)
{
    r->frag_limit = at;
    frag_push(r);
}

void rmpi_core_frag_finalize(void)
{
    free(stage);
    stage = NULL;
    stage_len = 0;
}
