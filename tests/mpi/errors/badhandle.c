/* Made-up, freed and stale handles of every kind under MPI_ERRORS_RETURN: each call gives
 * the kind's error class and never dereferences the value (0x2000 and 0xdead0000 are
 * unmapped: reading them would end the program with SIGSEGV). A request handle freed by
 * its completion whose slot now holds a new request must not reach the new one. */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const uintptr_t wild[] = {0x1234, 0x2000, 0xdead0000, (uintptr_t)1 << 40 | 0x1000};
#define NWILD (int)(sizeof wild / sizeof wild[0])

static void check_comm(MPI_Comm c)
{
    int buf = 0, n;
    MTEST_ERR(MPI_Send(&buf, 1, MPI_INT, 0, 0, c), MPI_ERR_COMM);
    MTEST_ERR(MPI_Comm_size(c, &n), MPI_ERR_COMM);
    MTEST_ERR(MPI_Barrier(c), MPI_ERR_COMM);
}

static void check_type(MPI_Datatype t)
{
    int buf[4] = {0}, n;
    MTEST_ERR(MPI_Send(buf, 1, t, mtest_rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Type_size(t, &n), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Allreduce(buf, buf + 2, 1, t, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    /* arrays of types (alltoallw): every entry is checked, at every rank count (one rank
     * once took a path that read them unchecked) */
    enum { MAXR = 64 };
    int cnt[MAXR], dsp[MAXR];
    MPI_Datatype ts[MAXR];
    for (int i = 0; i < MAXR; i++)
        cnt[i] = 1, dsp[i] = 0, ts[i] = t;
    if (mtest_size <= MAXR) {
        MPI_Request rq = MPI_REQUEST_NULL;
        MTEST_ERR(MPI_Alltoallw(buf, cnt, dsp, ts, buf + 2, cnt, dsp, ts, MPI_COMM_WORLD), MPI_ERR_TYPE);
        MTEST_ERR(MPI_Ialltoallw(buf, cnt, dsp, ts, buf + 2, cnt, dsp, ts, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
        MTEST_CHECK(rq == MPI_REQUEST_NULL, "Ialltoallw with bad types handed out a request");
    }
}

static void check_op(MPI_Op op)
{
    int a = 1, b = 0, flag;
    MTEST_ERR(MPI_Allreduce(&a, &b, 1, MPI_INT, op, MPI_COMM_WORLD), MPI_ERR_OP);
    MTEST_ERR(MPI_Reduce_local(&a, &b, 1, MPI_INT, op), MPI_ERR_OP);
    MTEST_ERR(MPI_Op_commutative(op, &flag), MPI_ERR_OP);
}

static void check_group(MPI_Group g)
{
    int n;
    MPI_Group out;
    MTEST_ERR(MPI_Group_size(g, &n), MPI_ERR_GROUP);
    MTEST_ERR(MPI_Group_union(g, g, &out), MPI_ERR_GROUP);
}

static void check_info(MPI_Info i)
{
    int n;
    MTEST_ERR(MPI_Info_get_nkeys(i, &n), MPI_ERR_INFO);
    MTEST_ERR(MPI_Info_set(i, "k", "v"), MPI_ERR_INFO);
}

static void check_win(MPI_Win w)
{
    MTEST_ERR(MPI_Win_fence(0, w), MPI_ERR_WIN);
    MTEST_ERR(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w), MPI_ERR_WIN);
}

static void check_errh(MPI_Errhandler e)
{
    MTEST_ERR(MPI_Comm_set_errhandler(MPI_COMM_SELF, e), MPI_ERR_ARG);
    MTEST_ERR(MPI_Errhandler_free(&e), MPI_ERR_ARG);
}

static void check_request(MPI_Request r)
{
    int flag;
    MPI_Request copy = r;
    MTEST_ERR(MPI_Wait(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    copy = r;
    MTEST_ERR(MPI_Test(&copy, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    copy = r;
    MTEST_ERR(MPI_Request_free(&copy), MPI_ERR_REQUEST);
    MTEST_ERR(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
}

static void check_file(MPI_File f)
{
    MPI_Offset n;
    MTEST_ERR(MPI_File_get_size(f, &n), MPI_ERR_FILE);
}

static void check_session(MPI_Session s)
{
    int n;
    MTEST_ERR(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
}

static void check_message(MPI_Message m)
{
    int buf;
    MTEST_ERR(MPI_Mrecv(&buf, 1, MPI_INT, &m, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
}

/* A request completed and freed by Wait, then a new one that reuses its memory: the old
 * handle must be rejected, and the new request must still be pending and complete
 * normally. */
static int got; /* static: a freed receive still lands here after the function returns */

static void stale_request(void)
{
    int v = 7, flag = 1;
    got = -1;
    MPI_Request old, cur, copy;
    MTEST_OK(MPI_Isend(&v, 1, MPI_INT, 0, 11, MPI_COMM_SELF, &old));
    copy = old;
    MTEST_OK(MPI_Recv(&got, 1, MPI_INT, 0, 11, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_Wait(&copy, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_Irecv(&got, 1, MPI_INT, 0, 12, MPI_COMM_SELF, &cur));
    copy = old;
    MTEST_ERR(MPI_Test(&copy, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    copy = old;
    MTEST_ERR(MPI_Cancel(&copy), MPI_ERR_REQUEST);
    copy = old;
    MTEST_ERR(MPI_Request_free(&copy), MPI_ERR_REQUEST);
    MTEST_CHECK(cur != MPI_REQUEST_NULL, "the new request is still there");
    MTEST_OK(MPI_Test(&cur, &flag, MPI_STATUS_IGNORE));
    MTEST_CHECK(!flag, "the new receive must still be pending (nothing was sent to it)");
    v = 8;
    MTEST_OK(MPI_Send(&v, 1, MPI_INT, 0, 12, MPI_COMM_SELF));
    MTEST_OK(MPI_Wait(&cur, MPI_STATUS_IGNORE));
    MTEST_CHECK(got == 8, "the new receive got %d, expected 8", got);

    /* the same after MPI_Request_free of an active request */
    MTEST_OK(MPI_Irecv(&got, 1, MPI_INT, 0, 13, MPI_COMM_SELF, &old));
    copy = old;
    MTEST_OK(MPI_Request_free(&copy));
    copy = old;
    MTEST_ERR(MPI_Wait(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    MTEST_OK(MPI_Send(&v, 1, MPI_INT, 0, 13, MPI_COMM_SELF));

    /* many generations of one slot: none of the old handles is taken for the new one */
    MPI_Request first;
    MTEST_OK(MPI_Irecv(&got, 1, MPI_INT, 0, 14, MPI_COMM_SELF, &first));
    MPI_Request keep = first;
    MTEST_OK(MPI_Cancel(&first));
    MTEST_OK(MPI_Wait(&first, MPI_STATUS_IGNORE));
    for (int i = 0; i < 300; i++) {
        MTEST_OK(MPI_Irecv(&got, 1, MPI_INT, 0, 14, MPI_COMM_SELF, &cur));
        copy = keep;
        if (MPI_Test(&copy, &flag, MPI_STATUS_IGNORE) != MPI_ERR_REQUEST)
            MTEST_CHECK(0, "generation %d: the stale handle was accepted", i);
        MTEST_OK(MPI_Cancel(&cur));
        MTEST_OK(MPI_Wait(&cur, MPI_STATUS_IGNORE));
    }
}

static void never_called(MPI_Comm *c, int *code, ...) { MTEST_CHECK(0, "the freed handler was called"); }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MTEST_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    for (int k = 0; k < NWILD; k++) {
        void *p = (void *)wild[k];
        check_comm((MPI_Comm)p);
        check_type((MPI_Datatype)p);
        check_op((MPI_Op)p);
        check_group((MPI_Group)p);
        check_info((MPI_Info)p);
        check_win((MPI_Win)p);
        check_errh((MPI_Errhandler)p);
        check_request((MPI_Request)p);
        check_file((MPI_File)p);
        check_session((MPI_Session)p);
        check_message((MPI_Message)p);
    }

    /* a heap block the library never handed out, with the bytes of a real object in it */
    MPI_Comm dup;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    void *fake = malloc(4096);
    memcpy(fake, (void *)dup, 64);
    check_comm((MPI_Comm)fake);
    MPI_Info info;
    MTEST_OK(MPI_Info_create(&info));
    memcpy(fake, (void *)info, 16);
    check_info((MPI_Info)fake);

    /* freed handles of every kind */
    MPI_Comm freed = dup;
    MTEST_OK(MPI_Comm_free(&dup));
    check_comm(freed);
    MPI_Info finfo = info;
    MTEST_OK(MPI_Info_free(&info));
    check_info(finfo);
    MPI_Datatype t, ft;
    MTEST_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MTEST_OK(MPI_Type_commit(&t));
    ft = t;
    MTEST_OK(MPI_Type_free(&t));
    check_type(ft);
    MPI_Group g, fg;
    MTEST_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    fg = g;
    MTEST_OK(MPI_Group_free(&g));
    check_group(fg);
    MPI_Errhandler e, fe;
    MTEST_OK(MPI_Comm_create_errhandler(never_called, &e));
    fe = e;
    MTEST_OK(MPI_Errhandler_free(&e));
    check_errh(fe);
    int mem = 0;
    MPI_Win w, fw;
    MTEST_OK(MPI_Win_create(&mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    fw = w;
    MTEST_OK(MPI_Win_free(&w));
    check_win(fw);
    free(fake);

    stale_request();

    /* the library still works */
    int a = mtest_rank + 1, sum = 0;
    MTEST_OK(MPI_Allreduce(&a, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_CHECK(sum == mtest_size * (mtest_size + 1) / 2, "allreduce after the errors: %d", sum);
    return mtest_finalize();
}
