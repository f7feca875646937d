/*
 * Non-contiguous data through the segment path (eager sends gathered from the user's
 * buffer, eager receives scattered straight from the frame; rendezvous of long pieces
 * moved piece by piece with RDMA) and through packing (rendezvous of short pieces, more
 * segments than RMPI_SEG_MAX). Both sides in long pieces: the receiver lists its pieces
 * in the CTS (up to 256; more: it lands the data and scatters it). For vector, indexed
 * and struct-with-gaps types, eager and rendezvous sizes, on both sides or against a
 * contiguous peer:
 *  - every byte of the receive buffer: the type map's bytes hold the sent data, the gaps
 *    between blocks and the slack after the buffer keep their sentinel;
 *  - receives posted first and messages arriving first (unexpected copy scattered later),
 *    Ssend, Isend/Irecv, persistent Send_init/Recv_init, Mprobe + Mrecv;
 *  - truncation: MPI_ERR_TRUNCATE with the part that fits delivered and nothing else
 *    written; Get_count MPI_UNDEFINED and Get_elements for a partial element.
 * Pairs i <-> i^1. The segment path is proven taken by the RMPI_REPORT counters
 * (tests/CMakeLists.txt runs this program with RMPI_REPORT=1 and matches them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define SENTINEL 0xee
#define SLACK 64

typedef struct shape {
    const char *name;
    MPI_Datatype type;
    MPI_Aint span; /* bytes one element's buffer needs: extent (all types here have lb 0) */
} shape_t;

static int peer;

/* Both ranks of the pair got here; frames sent before are in (one VC, in order). */
static void pair_sync(void)
{
    MTEST_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 0x7fff, NULL, 0, MPI_BYTE, peer, 0x7fff, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
}

/* A buffer for count elements of s, plus slack. */
static size_t buf_len(const shape_t *s, int count) { return (size_t)s->span * (size_t)(count > 0 ? count : 1) + SLACK; }

static unsigned char *send_buf(const shape_t *s, int count, int seed)
{
    size_t n = buf_len(s, count);
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
    return b;
}

static unsigned char *recv_buf(const shape_t *s, int count)
{
    size_t n = buf_len(s, count);
    unsigned char *b = malloc(n);
    memset(b, SENTINEL, n);
    return b;
}

/* What the receive buffer must hold: the first `bytes` of the packed stream of the sent
 * (sbuf, scount, st) unpacked into a sentinel buffer of (rcount, rt). */
static void check_recv(const char *what, const unsigned char *sbuf, int scount, const shape_t *st,
                       const unsigned char *rbuf, int rcount, const shape_t *rt, int bytes)
{
    int psize;
    MPI_Pack_size(scount, st->type, MPI_COMM_WORLD, &psize);
    char *packed = malloc((size_t)psize + 1);
    int pos = 0;
    MPI_Pack(sbuf, scount, st->type, packed, psize, &pos, MPI_COMM_WORLD);
    unsigned char *want = recv_buf(rt, rcount);
    int tsize;
    MPI_Type_size(rt->type, &tsize);
    /* Unpack whole elements through MPI_Unpack, a partial one through a second buffer. */
    int whole = tsize ? bytes / tsize : 0, part = bytes - whole * tsize;
    pos = 0;
    MPI_Unpack(packed, psize, &pos, want, whole, rt->type, MPI_COMM_WORLD);
    if (part) {
        unsigned char *tmp = malloc((size_t)rt->span + SLACK);
        char *one = calloc(1, (size_t)tsize);
        memcpy(one, packed + pos, (size_t)part);
        int p2 = 0;
        MPI_Unpack(one, tsize, &p2, tmp, 1, rt->type, MPI_COMM_WORLD);
        /* only the first `part` packed bytes land: copy those map positions */
        unsigned char *mark = malloc((size_t)rt->span + SLACK);
        char *ones = malloc((size_t)tsize);
        memset(mark, 0, (size_t)rt->span + SLACK);
        memset(ones, 0, (size_t)tsize);
        memset(ones, 1, (size_t)part);
        p2 = 0;
        MPI_Unpack(ones, tsize, &p2, mark, 1, rt->type, MPI_COMM_WORLD);
        unsigned char *dst = want + (size_t)whole * (size_t)rt->span;
        for (MPI_Aint i = 0; i < rt->span; i++)
            if (mark[i])
                dst[i] = tmp[i];
        free(tmp);
        free(one);
        free(mark);
        free(ones);
    }
    size_t n = buf_len(rt, rcount);
    int bad = 0;
    for (size_t i = 0; i < n && bad < 3; i++)
        if (rbuf[i] != want[i]) {
            MTEST_CHECK(0, "%s: byte %zu of the receive buffer is 0x%02x, expected 0x%02x%s", what, i, rbuf[i], want[i],
                        want[i] == SENTINEL ? " (a gap or slack: must stay untouched)" : "");
            bad++;
        }
    free(packed);
    free(want);
}

enum { POSTED, UNEXPECTED, SSEND, PERSISTENT, MPROBE };
static const char *how_name[] = {"posted", "unexpected", "ssend", "persistent", "mprobe"};

/* One message from the lower rank of the pair to the upper one and one back. */
static void exchange(const shape_t *st, int scount, const shape_t *rt, int rcount, int how, int tag)
{
    char what[160];
    snprintf(what, sizeof what, "%s x%d -> %s x%d (%s)", st->name, scount, rt->name, rcount, how_name[how]);
    unsigned char *sbuf = send_buf(st, scount, mtest_rank + tag);
    unsigned char *peer_sbuf = send_buf(st, scount, peer + tag);
    unsigned char *rbuf = recv_buf(rt, rcount);
    MPI_Request rq[2];
    MPI_Status status;
    switch (how) {
    case POSTED:
        MTEST_OK(MPI_Irecv(rbuf, rcount, rt->type, peer, tag, MPI_COMM_WORLD, &rq[0]));
        pair_sync();
        MTEST_OK(MPI_Send(sbuf, scount, st->type, peer, tag, MPI_COMM_WORLD));
        MTEST_OK(MPI_Wait(&rq[0], &status));
        break;
    case UNEXPECTED:
        MTEST_OK(MPI_Isend(sbuf, scount, st->type, peer, tag, MPI_COMM_WORLD, &rq[1]));
        /* the peer's message is in our unexpected queue (or its RTS is) before we post */
        pair_sync();
        MTEST_OK(MPI_Recv(rbuf, rcount, rt->type, peer, tag, MPI_COMM_WORLD, &status));
        MTEST_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    case SSEND:
        MTEST_OK(MPI_Issend(sbuf, scount, st->type, peer, tag, MPI_COMM_WORLD, &rq[1]));
        MTEST_OK(MPI_Recv(rbuf, rcount, rt->type, peer, tag, MPI_COMM_WORLD, &status));
        MTEST_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    case PERSISTENT:
        MTEST_OK(MPI_Recv_init(rbuf, rcount, rt->type, peer, tag, MPI_COMM_WORLD, &rq[0]));
        MTEST_OK(MPI_Send_init(sbuf, scount, st->type, peer, tag, MPI_COMM_WORLD, &rq[1]));
        for (int round = 0; round < 3; round++) {
            memset(rbuf, SENTINEL, buf_len(rt, rcount));
            MTEST_OK(MPI_Startall(2, rq));
            MTEST_OK(MPI_Wait(&rq[0], &status));
            MTEST_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        break;
    case MPROBE: {
        MPI_Message msg;
        MTEST_OK(MPI_Isend(sbuf, scount, st->type, peer, tag, MPI_COMM_WORLD, &rq[1]));
        MTEST_OK(MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &msg, &status));
        MTEST_OK(MPI_Mrecv(rbuf, rcount, rt->type, &msg, &status));
        MTEST_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    }
    }
    int ssize, rsize;
    MPI_Type_size(st->type, &ssize);
    MPI_Type_size(rt->type, &rsize);
    int bytes = ssize * scount;
    MTEST_CHECK(status.MPI_SOURCE == peer && status.MPI_TAG == tag, "%s: status source %d tag %d", what,
                status.MPI_SOURCE, status.MPI_TAG);
    int cnt;
    MPI_Get_count(&status, rt->type, &cnt);
    MTEST_CHECK(cnt == (rsize ? bytes / rsize : 0), "%s: Get_count %d, expected %d", what, cnt, bytes / rsize);
    check_recv(what, peer_sbuf, scount, st, rbuf, rcount, rt, bytes);
    free(sbuf);
    free(peer_sbuf);
    free(rbuf);
}

/* Sizes that do not match. want_elems < 0: the receive buffer holds fewer bytes than the
 * message (MPI_ERR_TRUNCATE, the part that fits lands); otherwise the message ends inside
 * an element of the receive type (Get_count MPI_UNDEFINED, Get_elements want_elems). */
static void mismatch(const shape_t *st, int scount, const shape_t *rt, int rcount, int tag, int want_elems)
{
    char what[160];
    snprintf(what, sizeof what, "%s %s x%d -> %s x%d", want_elems < 0 ? "truncated" : "partial", st->name, scount,
             rt->name, rcount);
    unsigned char *sbuf = send_buf(st, scount, mtest_rank + tag), *peer_sbuf = send_buf(st, scount, peer + tag);
    unsigned char *rbuf = recv_buf(rt, rcount);
    MPI_Request rq;
    MPI_Status status;
    MTEST_OK(MPI_Isend(sbuf, scount, st->type, peer, tag, MPI_COMM_WORLD, &rq));
    int rc = MPI_Recv(rbuf, rcount, rt->type, peer, tag, MPI_COMM_WORLD, &status);
    MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int ssize, rsize, bytes;
    MPI_Type_size(st->type, &ssize);
    MPI_Type_size(rt->type, &rsize);
    if (want_elems < 0) {
        MTEST_ERR(rc, MPI_ERR_TRUNCATE);
        bytes = rsize * rcount;
    } else {
        MTEST_OK(rc);
        int cnt, elems;
        MPI_Get_count(&status, rt->type, &cnt);
        MPI_Get_elements(&status, rt->type, &elems);
        MTEST_CHECK(cnt == MPI_UNDEFINED, "%s: Get_count %d, expected MPI_UNDEFINED", what, cnt);
        MTEST_CHECK(elems == want_elems, "%s: Get_elements %d, expected %d", what, elems, want_elems);
        bytes = ssize * scount;
    }
    check_recv(what, peer_sbuf, scount, st, rbuf, rcount, rt, bytes);
    free(sbuf);
    free(peer_sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    peer = mtest_rank ^ 1;
    if (peer >= mtest_size) /* odd rank count: the last rank has no partner */
        return mtest_finalize();

    /* vector: 20 blocks of 3 doubles, stride 5 (20 segments; extent 784) */
    MPI_Datatype vec, idx, strct, vec_big, many, vec_long, vec_long_many;
    MPI_Type_vector(20, 3, 5, MPI_DOUBLE, &vec);
    /* indexed ints with a zero-length block and two adjacent blocks (merged) */
    int bl[] = {2, 0, 3, 1, 4, 2, 5}, dp[] = {0, 3, 4, 7, 9, 15, 20};
    MPI_Type_indexed(7, bl, dp, MPI_INT, &idx);
    /* struct with gaps: char, double at 8, int at 20, extent 24 */
    int sbl[] = {1, 1, 1};
    MPI_Aint sdp[] = {0, 8, 20};
    MPI_Datatype sty[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(3, sbl, sdp, sty, &strct);
    /* a rendezvous-sized vector: 4000 blocks of 10 doubles, stride 12 (320 KB) */
    MPI_Type_vector(4000, 10, 12, MPI_DOUBLE, &vec_big);
    /* more segments than RMPI_SEG_MAX allows (400 ints, stride 2): packed though eager */
    MPI_Type_vector(400, 1, 2, MPI_INT, &many);
    /* long pieces (RMPI_RNDV_SEG_MIN, 8 KiB): 6 blocks of 2048 doubles, stride 2560 (96 KiB) */
    MPI_Type_vector(6, 2048, 2560, MPI_DOUBLE, &vec_long);
    /* more long pieces than a CTS lists (256): 300 blocks of 1024 doubles, stride 1100 */
    MPI_Type_vector(300, 1024, 1100, MPI_DOUBLE, &vec_long_many);
    MPI_Datatype all[] = {vec, idx, strct, vec_big, many, vec_long, vec_long_many};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_Type_commit(&all[i]);
    MPI_Aint lb, ext;
    shape_t s_vec = {"vector", vec, 0}, s_idx = {"indexed", idx, 0}, s_struct = {"struct", strct, 0},
            s_big = {"big vector", vec_big, 0}, s_many = {"400-block vector", many, 0},
            s_long = {"long-piece vector", vec_long, 0}, s_lmany = {"300 long pieces", vec_long_many, 0},
            s_int = {"int", MPI_INT, 4}, s_dbl = {"double", MPI_DOUBLE, 8};
    shape_t *shapes[] = {&s_vec, &s_idx, &s_struct, &s_big, &s_many, &s_long, &s_lmany};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        MPI_Type_get_extent(shapes[i]->type, &lb, &ext);
        shapes[i]->span = ext;
    }
    int tag = 0;

    for (int how = POSTED; how <= MPROBE; how++) {
        /* eager: one element and a few (segments merge across elements where they touch) */
        exchange(&s_vec, 1, &s_vec, 1, how, ++tag);
        exchange(&s_vec, 2, &s_vec, 2, how, ++tag);
        exchange(&s_idx, 3, &s_idx, 3, how, ++tag);
        exchange(&s_struct, 20, &s_struct, 20, how, ++tag);
        exchange(&s_struct, 1, &s_struct, 1, how, ++tag);
        exchange(&s_many, 1, &s_many, 1, how, ++tag);
        /* non-contiguous against contiguous, both ways */
        exchange(&s_vec, 2, &s_dbl, 120, how, ++tag);
        exchange(&s_dbl, 60, &s_vec, 1, how, ++tag);
        exchange(&s_int, 17, &s_idx, 1, how, ++tag);
        /* rendezvous */
        exchange(&s_big, 1, &s_big, 1, how, ++tag);
        exchange(&s_big, 1, &s_dbl, 40000, how, ++tag);
        exchange(&s_dbl, 40000, &s_big, 1, how, ++tag);
        /* rendezvous by pieces: both sides, and against contiguous memory both ways */
        exchange(&s_long, 1, &s_long, 1, how, ++tag);
        exchange(&s_long, 2, &s_long, 2, how, ++tag);
        exchange(&s_long, 2, &s_dbl, 24576, how, ++tag);
        exchange(&s_dbl, 12288, &s_long, 1, how, ++tag);
        exchange(&s_lmany, 1, &s_lmany, 1, how, ++tag);
    }
    /* zero elements of a non-contiguous type */
    exchange(&s_vec, 0, &s_vec, 0, POSTED, ++tag);
    exchange(&s_vec, 0, &s_vec, 3, UNEXPECTED, ++tag);

    /* truncation, eager and rendezvous (80000 doubles into one big vector of 40000) */
    mismatch(&s_vec, 3, &s_vec, 2, ++tag, -1);
    mismatch(&s_struct, 10, &s_struct, 7, ++tag, -1);
    mismatch(&s_dbl, 80000, &s_big, 1, ++tag, -1);
    mismatch(&s_dbl, 30000, &s_long, 2, ++tag, -1);
    mismatch(&s_long, 3, &s_long, 2, ++tag, -1);
    /* a partial element: 10 ints into indexed (17 ints each), and 7 doubles into vectors */
    mismatch(&s_int, 10, &s_idx, 2, ++tag, 10);
    mismatch(&s_dbl, 7, &s_vec, 1, ++tag, 7);
    mismatch(&s_dbl, 30000, &s_big, 1, ++tag, 30000);
    mismatch(&s_dbl, 10000, &s_long, 1, ++tag, 10000);

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_Type_free(&all[i]);
    return mtest_finalize();
}
