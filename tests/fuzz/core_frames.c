/*
 * libFuzzer harness of the core's frame entry (rmpi_vc_on_frame -> rmpi_core_deliver, the
 * real code) on a singleton, whose only peer is itself over the self rail. An input is a
 * script of records `op u8, len u16 (LE), bytes[len]`:
 *   op % 6 == 0  a frame from the peer: bytes, stamped with the PSN the VC expects (a
 *                bundle, VC type 0xfe, keeps its records' own PSNs: only its header is)
 *             1  a frame with the PSN it carries (out of sequence: the one-rail check)
 *             2  post a receive: ctx = b[0] % 12, tag = b[1] % 4 (3: MPI_ANY_TAG),
 *                source any or 0 by b[2], buffer of (b[3] | b[4] << 8) * 16 bytes
 *             3  send to itself: ctx, tag as above, (b[3] | b[4] << 8) * 16 bytes
 *                (from 16 KiB on: rendezvous), synchronous when b[2] is odd
 *             4  progress
 *             5  cancel the last receive posted
 * so the fuzzer can mix its own frames with the protocol's (live request ids: the first
 * id is 0x100000001). A cut-off peer is recorded and let back in for the next record: the
 * core checks a frame before acting on it, so its state stays sound. Nothing an input does
 * may crash, hang, exit, read out of bounds or misaligned (ASan, UBSan); the core is made
 * afresh for every input (rmpi_core_finalize, rmpi_core_init).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "fuzz_singleton.h"

static rmpi_vc_t *vc;
static unsigned long long cuts;
static char frame_buf[1 + 70000];
static char send_buf[1 << 20], recv_buf[1 << 20]; /* apart: a self rendezvous copies one to the other */

static void on_cut(rmpi_vc_t *v, const char *why) { cuts++; }

/* Requests of one input, freed after the core is gone (some never complete). */
static rmpi_req_t *reqs[4096];
static int nreqs;

static void core_up(void)
{
    rmpi_core_info_t info;
    if (rmpi_core_init(&info))
        abort();
    rmpi_vc_on_cut = on_cut;
    rmpi_core_unexp_max = 1 << 20;
    vc = rmpi_vc_get(0);
    rmpi_core_peer(vc);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_singleton();
    setenv("RMPI_EAGER_LIMIT", "16k", 1);
    return 0;
}

static void feed(const uint8_t *b, size_t n, int stamp)
{
    memcpy(frame_buf + 1, b, n); /* an odd address, as tcp delivers frames */
    if (stamp && n >= 2) {
        uint16_t psn = vc->psn_expect;
        memcpy(frame_buf + 1, &psn, sizeof psn);
    }
    rmpi_vc_on_frame(vc->sub[0].rail, 0, frame_buf + 1, n);
    vc->cut = 0;
}

static void local_op(int op, const uint8_t *b, size_t n, rmpi_req_t **last_recv)
{
    uint8_t v[5] = {0};
    memcpy(v, b, n < 5 ? n : 5);
    uint32_t ctx = 8 + v[0] % 12;
    int tag = v[1] % 4 == 3 ? RMPI_ANY_TAG : v[1] % 4;
    size_t len = (size_t)(v[3] | v[4] << 8) * 16;
    if (nreqs == (int)(sizeof reqs / sizeof *reqs))
        return;
    rmpi_req_t *r = rmpi_xcalloc(1, sizeof *r); /* not from the pool: finalize frees that */
    r->magic = RMPI_REQ_MAGIC;
    r->kind = op == 2 ? RMPI_REQ_RECV : RMPI_REQ_SEND;
    rmpi_list_init(&r->link);
    reqs[nreqs++] = r;
    r->buf = op == 2 ? recv_buf : send_buf;
    r->len = len;
    r->ctx = ctx;
    r->tag = tag;
    if (op == 2) {
        r->rank = v[2] & 1 ? RMPI_ANY_SOURCE : 0;
        rmpi_core_irecv(r);
        *last_recv = r;
        return;
    }
    r->tag = tag < 0 ? 0 : tag;
    r->rank = 0;
    r->src = 0;
    r->mode = v[2] & 1 ? RMPI_MODE_SYNC : RMPI_MODE_STD;
    rmpi_core_isend(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    core_up();
    rmpi_req_t *last_recv = NULL;
    for (size_t at = 0; at + 3 <= size;) {
        int op = data[at] % 6;
        size_t n = (size_t)(data[at + 1] | data[at + 2] << 8);
        at += 3;
        if (n > size - at)
            n = size - at;
        const uint8_t *b = data + at;
        at += n;
        switch (op) {
        case 0:
        case 1: feed(b, n, op == 0); break;
        case 2:
        case 3: local_op(op, b, n, &last_recv); break;
        case 4: rmpi_core_progress(); break;
        default:
            if (last_recv)
                rmpi_core_cancel_recv(last_recv);
            last_recv = NULL;
        }
    }
    for (int i = 0; i < 8; i++)
        rmpi_core_progress();
    rmpi_core_finalize();
    for (int i = 0; i < nreqs; i++)
        free(reqs[i]);
    nreqs = 0;
    return 0;
}
