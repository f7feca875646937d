/* Waitany/Waitsome/Testany/Testsome/Testall over arrays mixing MPI_REQUEST_NULL, inactive
 * persistent requests, PROC_NULL receives and real receives (eager and rendezvous): every
 * active request is reported exactly once with the right status, null and inactive ones
 * never; when nothing is active the calls return MPI_UNDEFINED (Testany: flag true).
 * Messages are held back until the receiver has seen "nothing complete yet". */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR 8
#define BIG 70000
/* slot kinds */
enum { K_NULL, K_INACTIVE, K_RECV, K_PROCNULL };
static const int kind[NR] = {K_NULL, K_RECV, K_INACTIVE, K_RECV, K_PROCNULL, K_RECV, K_NULL, K_INACTIVE};
static const int msgsz[NR] = {0, 10, 0, BIG, 0, 0, 0, 0};

static unsigned char rbuf[NR][BIG], sbuf[NR][BIG];
static MPI_Request pers[2];
static int dummy;

static void setup(MPI_Request rq[NR], int peer, int round)
{
    int p = 0;
    for (int i = 0; i < NR; i++) {
        switch (kind[i]) {
        case K_NULL: rq[i] = MPI_REQUEST_NULL; break;
        case K_INACTIVE: rq[i] = pers[p++]; break;
        case K_RECV:
            memset(rbuf[i], 0, BIG);
            MTEST_OK(MPI_Irecv(rbuf[i], BIG, MPI_BYTE, peer, round * 100 + i, MPI_COMM_WORLD, &rq[i]));
            break;
        case K_PROCNULL: MTEST_OK(MPI_Irecv(rbuf[i], BIG, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[i])); break;
        }
    }
}

static void check_done(int i, const MPI_Status *st, int peer, int round, int seen[NR], const char *how)
{
    char what[64];
    snprintf(what, sizeof what, "%s round %d index %d", how, round, i);
    if (i < 0 || i >= NR) {
        MTEST_CHECK(0, "%s: index out of range", what);
        return;
    }
    MTEST_CHECK(kind[i] == K_RECV || kind[i] == K_PROCNULL, "%s: reported a null or inactive request", what);
    MTEST_CHECK(!seen[i], "%s: reported twice", what);
    seen[i]++;
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    if (kind[i] == K_PROCNULL) {
        MTEST_CHECK(st->MPI_SOURCE == MPI_PROC_NULL && cnt == 0, "%s: PROC_NULL status source %d count %d", what,
                    st->MPI_SOURCE, cnt);
    } else if (kind[i] == K_RECV) {
        MTEST_CHECK(st->MPI_SOURCE == peer && st->MPI_TAG == round * 100 + i && cnt == msgsz[i],
                    "%s: source %d tag %d count %d", what, st->MPI_SOURCE, st->MPI_TAG, cnt);
        mtest_check_buf(rbuf[i], (size_t)msgsz[i], mtest_seed(peer, mtest_rank, round * 100 + i), what);
    }
}

static void check_all_seen(const int seen[NR], const MPI_Request rq[NR], const char *how)
{
    for (int i = 0; i < NR; i++) {
        if (kind[i] == K_RECV || kind[i] == K_PROCNULL)
            MTEST_CHECK(seen[i] == 1, "%s: request %d reported %d times", how, i, seen[i]);
        if (kind[i] == K_INACTIVE)
            MTEST_CHECK(rq[i] == pers[i == 2 ? 0 : 1], "%s: inactive persistent request %d changed", how, i);
        else
            MTEST_CHECK(rq[i] == MPI_REQUEST_NULL, "%s: request %d not MPI_REQUEST_NULL at the end", how, i);
    }
}

static void sender(int peer, int round)
{
    MPI_Request rq[NR];
    int n = 0;
    MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < NR; i++)
        if (kind[i] == K_RECV) {
            mtest_fill(sbuf[i], (size_t)msgsz[i], mtest_seed(mtest_rank, peer, round * 100 + i));
            MTEST_OK(MPI_Isend(sbuf[i], msgsz[i], MPI_BYTE, peer, round * 100 + i, MPI_COMM_WORLD, &rq[n++]));
        }
    MTEST_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
}

/* The receiver polls with the call under test until everything is reported. */
static void receiver(int peer, int round)
{
    static const char *names[] = {"Waitany", "Testany", "Waitsome", "Testsome", "Testall"};
    const char *how = names[round];
    MPI_Request rq[NR];
    MPI_Status st[NR];
    int seen[NR] = {0}, idx[NR], flag, out, index;
    setup(rq, peer, round);

    /* before the go: only the PROC_NULL receive may complete; Testall must say no */
    if (round == 4) {
        MTEST_OK(MPI_Testall(NR, rq, &flag, st));
        MTEST_CHECK(!flag, "Testall true before any message was sent");
    } else if (round == 3) {
        MTEST_OK(MPI_Testsome(NR, rq, &out, idx, st));
        for (int k = 0; k < out; k++)
            check_done(idx[k], &st[k], peer, round, seen, how);
        MTEST_CHECK(out >= 0 && out <= 1, "Testsome before any message: outcount %d", out);
    } else if (round == 1) {
        MTEST_OK(MPI_Testany(NR, rq, &index, &flag, &st[0]));
        if (flag)
            check_done(index, &st[0], peer, round, seen, how);
        MTEST_OK(MPI_Testany(NR, rq, &index, &flag, &st[0]));
        MTEST_CHECK(!flag || index == 4, "Testany before any message: flag %d index %d", flag, index);
        if (flag)
            check_done(index, &st[0], peer, round, seen, how);
    }
    MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 999, MPI_COMM_WORLD));

    for (int guard = 0; guard < 10000000; guard++) {
        if (round == 0) {
            MTEST_OK(MPI_Waitany(NR, rq, &index, &st[0]));
            if (index == MPI_UNDEFINED)
                break;
            check_done(index, &st[0], peer, round, seen, how);
        } else if (round == 1) {
            MTEST_OK(MPI_Testany(NR, rq, &index, &flag, &st[0]));
            if (flag && index == MPI_UNDEFINED)
                break;
            if (flag)
                check_done(index, &st[0], peer, round, seen, how);
            else
                MTEST_CHECK(index == MPI_UNDEFINED, "Testany flag 0 with index %d", index);
        } else if (round == 2 || round == 3) {
            if (round == 2)
                MTEST_OK(MPI_Waitsome(NR, rq, &out, idx, st));
            else
                MTEST_OK(MPI_Testsome(NR, rq, &out, idx, st));
            if (out == MPI_UNDEFINED)
                break;
            MTEST_CHECK(out >= 0 && out <= NR, "%s outcount %d", how, out);
            if (round == 2)
                MTEST_CHECK(out > 0, "Waitsome returned outcount 0");
            for (int k = 0; k < out && k < NR; k++)
                check_done(idx[k], &st[k], peer, round, seen, how);
        } else {
            MTEST_OK(MPI_Testall(NR, rq, &flag, st));
            if (flag) {
                for (int i = 0; i < NR; i++)
                    if (kind[i] == K_RECV || kind[i] == K_PROCNULL)
                        check_done(i, &st[i], peer, round, seen, how);
                    else if (kind[i] == K_INACTIVE || kind[i] == K_NULL) {
                        int cnt = -1;
                        MPI_Get_count(&st[i], MPI_BYTE, &cnt);
                        MTEST_CHECK(st[i].MPI_SOURCE == MPI_ANY_SOURCE && st[i].MPI_TAG == MPI_ANY_TAG && cnt == 0,
                                    "Testall: empty status of request %d: source %d tag %d count %d", i,
                                    st[i].MPI_SOURCE, st[i].MPI_TAG, cnt);
                    }
                break;
            }
        }
    }
    check_all_seen(seen, rq, how);
}

/* All null/inactive: Waitany/Testany/Waitsome/Testsome say MPI_UNDEFINED, Testall true. */
static void nothing_active(void)
{
    MPI_Request rq[3] = {MPI_REQUEST_NULL, pers[0], MPI_REQUEST_NULL};
    MPI_Status st[3];
    int index = 0, flag = 0, out = 0, idx[3];
    MTEST_OK(MPI_Waitany(3, rq, &index, &st[0]));
    MTEST_CHECK(index == MPI_UNDEFINED, "Waitany over no active request: index %d", index);
    MTEST_OK(MPI_Testany(3, rq, &index, &flag, &st[0]));
    MTEST_CHECK(flag && index == MPI_UNDEFINED, "Testany over no active request: flag %d index %d", flag, index);
    MTEST_OK(MPI_Waitsome(3, rq, &out, idx, st));
    MTEST_CHECK(out == MPI_UNDEFINED, "Waitsome over no active request: outcount %d", out);
    MTEST_OK(MPI_Testsome(3, rq, &out, idx, st));
    MTEST_CHECK(out == MPI_UNDEFINED, "Testsome over no active request: outcount %d", out);
    flag = 0;
    MTEST_OK(MPI_Testall(3, rq, &flag, st));
    MTEST_CHECK(flag, "Testall over no active request: flag 0");
    MTEST_OK(MPI_Waitall(0, NULL, NULL));
    MTEST_OK(MPI_Waitany(0, NULL, &index, MPI_STATUS_IGNORE));
    MTEST_CHECK(index == MPI_UNDEFINED, "Waitany(count 0): index %d", index);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MTEST_OK(MPI_Recv_init(&dummy, 1, MPI_INT, 0, 12345, MPI_COMM_WORLD, &pers[0]));
    MTEST_OK(MPI_Send_init(&dummy, 1, MPI_INT, 0, 12345, MPI_COMM_WORLD, &pers[1]));
    nothing_active();
    int peer = mtest_rank ^ 1;
    if (peer < mtest_size)
        for (int round = 0; round < 5; round++) {
            if (mtest_rank & 1)
                sender(peer, round);
            else
                receiver(peer, round);
        }
    MTEST_OK(MPI_Request_free(&pers[0]));
    MTEST_OK(MPI_Request_free(&pers[1]));
    return mtest_finalize();
}
