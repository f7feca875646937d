/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv for eager and rendezvous sizes: the status
 * a probe returns (source, tag, count) describes the message the following receive gets;
 * a matched probe removes the message so no other receive or probe sees it; MPI_PROC_NULL
 * gives MPI_MESSAGE_NO_PROC and empty statuses. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {0, 100, 16384, 16385, 100000, 1 << 20};
#define NS (int)(sizeof sizes / sizeof sizes[0])
#define MAXSZ (1 << 20)

static unsigned char *sbuf, *rbuf;

static void check_status(const char *what, const MPI_Status *st, int src, int tag, int n)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    MTEST_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && cnt == n,
                "%s: status source %d tag %d count %d, expected %d/%d/%d", what, st->MPI_SOURCE, st->MPI_TAG, cnt, src,
                tag, n);
}

/* The sender (odd rank) sends one message of each size per method; the receiver probes. */
static void send_all(int peer, int method)
{
    for (int k = 0; k < NS; k++) {
        mtest_fill(sbuf, (size_t)sizes[k], mtest_seed(mtest_rank, peer, method * 100 + k));
        MTEST_OK(MPI_Send(sbuf, sizes[k], MPI_BYTE, peer, method * 100 + k, MPI_COMM_WORLD));
    }
}

static void recv_all(int peer, int method)
{
    static const char *names[] = {"Probe+Recv", "Iprobe+Recv", "Mprobe+Mrecv", "Improbe+Imrecv"};
    for (int k = 0; k < NS; k++) {
        const int n = sizes[k], tag = method * 100 + k;
        char what[96];
        snprintf(what, sizeof what, "%s of %d bytes", names[method], n);
        MPI_Status st, st2;
        MPI_Message msg = MPI_MESSAGE_NULL;
        int flag = 0;
        memset(&st, 0x55, sizeof st);
        switch (method) {
        case 0: MTEST_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st)); break;
        case 1:
            /* another tag is never there */
            MTEST_OK(MPI_Iprobe(peer, 999, MPI_COMM_WORLD, &flag, &st));
            MTEST_CHECK(!flag, "%s: Iprobe found a message with tag 999 that was never sent", what);
            for (flag = 0; !flag;)
                MTEST_OK(MPI_Iprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            /* probing again without receiving sees the same message */
            MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st2));
            MTEST_CHECK(flag, "%s: a second Iprobe did not find the message", what);
            check_status(what, &st2, peer, tag, n);
            break;
        case 2:
            MTEST_OK(MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &msg, &st));
            MTEST_CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "%s: bad message handle", what);
            /* the matched message is no longer visible to probes */
            MTEST_OK(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            MTEST_CHECK(!flag, "%s: Iprobe still sees a message taken by Mprobe", what);
            break;
        case 3:
            for (flag = 0; !flag;)
                MTEST_OK(MPI_Improbe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
            break;
        }
        check_status(what, &st, peer, tag, n);
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        if (cnt < 0 || cnt > MAXSZ)
            cnt = MAXSZ;
        /* receive into a buffer sized from the probe, the way applications do */
        unsigned char *buf = mtest_malloc((size_t)cnt + MTEST_GUARD);
        mtest_guard_set(buf, (size_t)cnt);
        memset(&st2, 0x55, sizeof st2);
        if (method < 2) {
            MTEST_OK(MPI_Recv(buf, cnt, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        } else if (method == 2) {
            MTEST_OK(MPI_Mrecv(buf, cnt, MPI_BYTE, &msg, &st2));
        } else {
            MPI_Request rq;
            MTEST_OK(MPI_Imrecv(buf, cnt, MPI_BYTE, &msg, &rq));
            MTEST_OK(MPI_Wait(&rq, &st2));
        }
        if (method >= 2)
            MTEST_CHECK(msg == MPI_MESSAGE_NULL, "%s: message handle not set to MPI_MESSAGE_NULL", what);
        check_status(what, &st2, peer, tag, n);
        mtest_check_buf(buf, (size_t)cnt, mtest_seed(peer, mtest_rank, tag), what);
        mtest_guard_check(buf, (size_t)cnt, what);
        free(buf);
    }
}

/* Two messages with one tag: Mprobe takes the first, a receive then gets the second, and
 * Mrecv still delivers the first. */
static void mprobe_steal(int role, int peer)
{
    const int a = 30000, b = 50;
    if (role == 1) {
        /* nonblocking: the first (rendezvous) send completes only at the Mrecv */
        MPI_Request rq[2];
        mtest_fill(sbuf, a, mtest_seed(mtest_rank, peer, 900));
        mtest_fill(sbuf + a, b, mtest_seed(mtest_rank, peer, 901));
        MTEST_OK(MPI_Isend(sbuf, a, MPI_BYTE, peer, 900, MPI_COMM_WORLD, &rq[0]));
        MTEST_OK(MPI_Isend(sbuf + a, b, MPI_BYTE, peer, 900, MPI_COMM_WORLD, &rq[1]));
        MTEST_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    } else {
        MPI_Message m;
        MPI_Status st;
        MTEST_OK(MPI_Mprobe(peer, 900, MPI_COMM_WORLD, &m, &st));
        check_status("Mprobe of the first of two", &st, peer, 900, a);
        MTEST_OK(MPI_Recv(rbuf, MAXSZ, MPI_BYTE, peer, 900, MPI_COMM_WORLD, &st));
        check_status("Recv after Mprobe", &st, peer, 900, b);
        mtest_check_buf(rbuf, b, mtest_seed(peer, mtest_rank, 901), "Recv after Mprobe gets the second message");
        MTEST_OK(MPI_Mrecv(rbuf, MAXSZ, MPI_BYTE, &m, &st));
        check_status("Mrecv of the first", &st, peer, 900, a);
        mtest_check_buf(rbuf, a, mtest_seed(peer, mtest_rank, 900), "Mrecv of the first message");
    }
}

static void proc_null(void)
{
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    int flag = 0, cnt = -1;
    memset(&st, 0x55, sizeof st);
    MTEST_OK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    MTEST_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
                "Probe(PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    memset(&st, 0x55, sizeof st);
    MTEST_OK(MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    MTEST_CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
                "Iprobe(PROC_NULL): flag %d source %d tag %d count %d", flag, st.MPI_SOURCE, st.MPI_TAG, cnt);
    MTEST_OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &m, &st));
    MTEST_CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) gave message %p, expected MPI_MESSAGE_NO_PROC", (void *)m);
    int x = 1234;
    memset(&st, 0x55, sizeof st);
    MTEST_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    MTEST_CHECK(m == MPI_MESSAGE_NULL && x == 1234 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
                    cnt == 0,
                "Mrecv(NO_PROC): message %p x %d source %d tag %d count %d", (void *)m, x, st.MPI_SOURCE, st.MPI_TAG,
                cnt);
    flag = 0;
    MTEST_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    MTEST_CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): flag %d message %p", flag, (void *)m);
    MPI_Request rq;
    memset(&st, 0x55, sizeof st);
    MTEST_OK(MPI_Imrecv(&x, 1, MPI_INT, &m, &rq));
    MTEST_OK(MPI_Wait(&rq, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    MTEST_CHECK(m == MPI_MESSAGE_NULL && x == 1234 && st.MPI_SOURCE == MPI_PROC_NULL && cnt == 0,
                "Imrecv(NO_PROC): message %p x %d source %d count %d", (void *)m, x, st.MPI_SOURCE, cnt);
}

/* Rank 0 collects one message from every other rank with Probe(ANY_SOURCE) + Recv. */
static void gather_probe(void)
{
    if (mtest_rank == 0) {
        int seen = 0;
        for (int i = 1; i < mtest_size; i++) {
            MPI_Status st;
            MTEST_OK(MPI_Probe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE, cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MTEST_CHECK(src > 0 && src < mtest_size && !(seen & (1 << src)) && cnt == 20000 + src,
                        "Probe(ANY_SOURCE): source %d count %d", src, cnt);
            if (src <= 0 || src >= mtest_size)
                continue;
            seen |= 1 << src;
            MTEST_OK(MPI_Recv(rbuf, cnt, MPI_BYTE, src, 77, MPI_COMM_WORLD, &st));
            mtest_check_buf(rbuf, (size_t)cnt, mtest_seed(src, 0, 77), "Probe(ANY_SOURCE)+Recv");
        }
    } else {
        mtest_fill(sbuf, (size_t)(20000 + mtest_rank), mtest_seed(mtest_rank, 0, 77));
        MTEST_OK(MPI_Send(sbuf, 20000 + mtest_rank, MPI_BYTE, 0, 77, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    sbuf = mtest_malloc(MAXSZ);
    rbuf = mtest_malloc(MAXSZ);
    int peer = mtest_rank ^ 1;
    int role = peer < mtest_size ? (mtest_rank & 1) : -1;
    for (int method = 0; method < 4; method++) {
        if (role == 1)
            send_all(peer, method);
        else if (role == 0)
            recv_all(peer, method);
    }
    if (role >= 0)
        mprobe_steal(role, peer);
    proc_null();
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    gather_probe();
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
