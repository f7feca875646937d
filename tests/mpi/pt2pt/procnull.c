/* MPI_PROC_NULL: every send mode to it succeeds at once; receives from it complete at
 * once with source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0 and the buffer untouched; the
 * same through Irecv/Wait*, Sendrecv and Sendrecv_replace. Nothing is ever delivered. */
#include "mtest.h"

#include <string.h>

static void check_null_status(const char *what, const MPI_Status *st)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    MTEST_CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && cnt == 0,
                "%s: status source %d tag %d count %d, expected PROC_NULL/ANY_TAG/0", what, st->MPI_SOURCE, st->MPI_TAG,
                cnt);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int buf[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = i;
    char bsend_space[4096];
    MTEST_OK(MPI_Buffer_attach(bsend_space, sizeof bsend_space));

    MTEST_OK(MPI_Send(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MTEST_OK(MPI_Ssend(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MTEST_OK(MPI_Rsend(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    /* a buffered send to PROC_NULL needs no buffer space */
    MTEST_OK(MPI_Bsend(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));

    MPI_Request rq[6];
    MPI_Status st[6];
    MTEST_OK(MPI_Isend(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[0]));
    MTEST_OK(MPI_Issend(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[1]));
    MTEST_OK(MPI_Irsend(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[2]));
    MTEST_OK(MPI_Ibsend(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[3]));
    MTEST_OK(MPI_Irecv(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[4]));
    MTEST_OK(MPI_Irecv(buf, 1000, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[5]));
    int flag = 0;
    MTEST_OK(MPI_Testall(6, rq, &flag, st));
    MTEST_CHECK(flag, "Testall of PROC_NULL operations is not complete at once");
    if (!flag)
        MTEST_OK(MPI_Waitall(6, rq, st));
    for (int i = 0; i < 6; i++)
        MTEST_CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    check_null_status("Irecv(PROC_NULL)", &st[4]);
    check_null_status("Irecv(PROC_NULL, ANY_TAG)", &st[5]);

    MPI_Status s;
    memset(&s, 0x55, sizeof s);
    MTEST_OK(MPI_Recv(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &s));
    check_null_status("Recv(PROC_NULL)", &s);

    memset(&s, 0x55, sizeof s);
    MPI_Request r;
    MTEST_OK(MPI_Irecv(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MTEST_OK(MPI_Wait(&r, &s));
    check_null_status("Irecv+Wait(PROC_NULL)", &s);

    int idx = -5;
    memset(&s, 0x55, sizeof s);
    MTEST_OK(MPI_Irecv(buf, 1000, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MTEST_OK(MPI_Waitany(1, &r, &idx, &s));
    MTEST_CHECK(idx == 0, "Waitany on a PROC_NULL receive: index %d", idx);
    check_null_status("Irecv+Waitany(PROC_NULL)", &s);

    /* send to PROC_NULL, receive from PROC_NULL */
    int other[4] = {9, 9, 9, 9};
    memset(&s, 0x55, sizeof s);
    MTEST_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 2, other, 4, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &s));
    check_null_status("Sendrecv(PROC_NULL)", &s);
    MTEST_CHECK(other[0] == 9 && other[3] == 9, "Sendrecv from PROC_NULL wrote the receive buffer");

    memset(&s, 0x55, sizeof s);
    MTEST_OK(MPI_Sendrecv_replace(buf, 1000, MPI_INT, MPI_PROC_NULL, 3, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &s));
    check_null_status("Sendrecv_replace(PROC_NULL)", &s);

    for (int i = 0; i < 1000; i++)
        if (buf[i] != i) {
            MTEST_CHECK(0, "a PROC_NULL receive wrote buf[%d] = %d", i, buf[i]);
            break;
        }

    /* nothing arrived from the PROC_NULL sends of any rank */
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int tag = 1; tag <= 3; tag++) {
        flag = 1;
        MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &s));
        MTEST_CHECK(!flag, "a message (source %d tag %d) arrived from a send to MPI_PROC_NULL", s.MPI_SOURCE, tag);
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));

    void *p;
    int sz;
    MTEST_OK(MPI_Buffer_detach(&p, &sz));
    MTEST_CHECK(p == bsend_space && sz == (int)sizeof bsend_space, "Buffer_detach returned %p/%d", p, sz);
    return mtest_finalize();
}
