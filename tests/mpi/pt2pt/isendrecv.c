/* MPI-4 Isendrecv and Isendrecv_replace: a ring exchange (also with MPI_ANY_SOURCE and
 * MPI_ANY_TAG) whose request carries the receive's status, several outstanding at once,
 * strided datatypes on either side, rendezvous sizes, MPI_PROC_NULL on either side, and
 * truncation reported through the request. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size, right = (me + 1) % n, left = (me - 1 + n) % n;
    enum { BIG = 200000 };
    int *s = malloc(sizeof(int) * BIG), *r = malloc(sizeof(int) * 2 * BIG);
    for (int len = 1; len <= BIG; len *= 20) {
        for (int i = 0; i < len; i++)
            s[i] = me * 1000000 + i;
        for (int wild = 0; wild < 2; wild++) {
            memset(r, 0xff, sizeof(int) * (size_t)len);
            MPI_Request q;
            MPI_Status st;
            MTEST_OK(MPI_Isendrecv(s, len, MPI_INT, right, 7, r, len, MPI_INT, wild ? MPI_ANY_SOURCE : left,
                                   wild ? MPI_ANY_TAG : 7, MPI_COMM_WORLD, &q));
            MTEST_OK(MPI_Wait(&q, &st));
            int cnt = -1;
            MPI_Get_count(&st, MPI_INT, &cnt);
            MTEST_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7 && cnt == len, "len %d: source %d tag %d count %d",
                        len, st.MPI_SOURCE, st.MPI_TAG, cnt);
            int bad = 0;
            for (int i = 0; i < len; i++)
                bad += r[i] != left * 1000000 + i;
            MTEST_CHECK(!bad, "len %d: %d ints differ", len, bad);
        }
        /* replace: the buffer goes right and comes back from the left */
        memcpy(r, s, sizeof(int) * (size_t)len);
        MPI_Request q;
        MTEST_OK(MPI_Isendrecv_replace(r, len, MPI_INT, right, 8, left, 8, MPI_COMM_WORLD, &q));
        MTEST_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MTEST_CHECK(r[0] == left * 1000000 && r[len - 1] == left * 1000000 + len - 1, "replace len %d: %d..%d", len,
                    r[0], r[len - 1]);
    }
    /* strided on the send side, contiguous on the receive side; several outstanding */
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int sv[8], rv[3][4];
    for (int i = 0; i < 8; i++)
        sv[i] = me * 100 + i;
    MPI_Request qs[3];
    for (int k = 0; k < 3; k++)
        MTEST_OK(MPI_Isendrecv(sv, 1, vec, right, 20 + k, rv[k], 4, MPI_INT, left, 20 + k, MPI_COMM_WORLD, &qs[k]));
    MTEST_OK(MPI_Waitall(3, qs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++)
        MTEST_CHECK(rv[k][0] == left * 100 && rv[k][3] == left * 100 + 6, "vector %d: %d %d", k, rv[k][0], rv[k][3]);
    /* strided replace */
    int rep[8];
    memcpy(rep, sv, sizeof rep);
    MPI_Request q;
    MTEST_OK(MPI_Isendrecv_replace(rep, 1, vec, right, 30, left, 30, MPI_COMM_WORLD, &q));
    MTEST_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MTEST_CHECK(rep[0] == left * 100 && rep[6] == left * 100 + 6 && rep[1] == me * 100 + 1, "strided replace: %d %d %d",
                rep[0], rep[6], rep[1]);
    MPI_Type_free(&vec);
    /* PROC_NULL source: the status is the empty receive's */
    MPI_Status st;
    MTEST_OK(MPI_Isendrecv(sv, 1, MPI_INT, MPI_PROC_NULL, 1, rv, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &q));
    MTEST_OK(MPI_Wait(&q, &st));
    MTEST_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL: source %d tag %d",
                st.MPI_SOURCE, st.MPI_TAG);
    /* truncation: 4 ints into room for 2 */
    mtest_errors_return(MPI_COMM_WORLD);
    MPI_Isendrecv(sv, 4, MPI_INT, right, 40, rv, 2, MPI_INT, left, 40, MPI_COMM_WORLD, &q);
    int rc = MPI_Wait(&q, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_TRUNCATE, "truncated Isendrecv: class %d", cls);
    free(s);
    free(r);
    return mtest_finalize();
}
