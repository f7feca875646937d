/* Error classes of one-sided calls under MPI_ERRORS_RETURN on the window (and on
 * MPI_COMM_WORLD for the invalid window handle). Nothing here may hang: every failing
 * call is rejected locally. */
#include "mtest.h"

#include <stdint.h>

static int calls;
static void count_errors(MPI_Win *w, int *code, ...)
{
    (void)w;
    (void)code;
    calls++;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_errors_return(MPI_COMM_WORLD);
    int *mem, v = 1, r;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Errhandler eh;
    MTEST_OK(MPI_Win_get_errhandler(win, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_ARE_FATAL, "a new window's handler is not MPI_ERRORS_ARE_FATAL");
    MTEST_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    /* outside any epoch (every operation of the bindings' short paths) */
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Get(&r, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, 0, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Compare_and_swap(&v, &v, &r, MPI_INT, 0, 0, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Get_accumulate(&v, 1, MPI_INT, &r, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_flush_local(0, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE);
    /* Win_lock / Win_unlock's short paths (direct targets) hand these to the full checks */
    MTEST_ERR(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size, 0, win), MPI_ERR_RANK);
    MTEST_ERR(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, -5, 0, win), MPI_ERR_RANK);
    MTEST_ERR(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 1 << 20, win), MPI_ERR_ASSERT);
    MTEST_ERR(MPI_Win_unlock(size, win), MPI_ERR_RANK);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MTEST_ERR(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    MTEST_OK(MPI_Win_unlock(0, win));
    MTEST_ERR(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    MTEST_OK(MPI_Win_lock_all(0, win));
    MTEST_ERR(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    MTEST_OK(MPI_Win_unlock_all(win));
    MTEST_ERR(MPI_Win_fence(1 << 20, win), MPI_ERR_ASSERT);

    /* request-based operations only in passive-target epochs */
    MPI_Request rq = MPI_REQUEST_NULL;
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_ERR(MPI_Rput(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC);
    MTEST_CHECK(rq == MPI_REQUEST_NULL, "a refused Rput handed out a request");
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MTEST_ERR(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, -5, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, 0, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Get(&r, 2, MPI_INT, 0, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    /* displacements whose byte offset overflows (a wrapped product lands inside the
     * window), and a count far past it: refused, nothing written (only rank 0 writes
     * rank 0's window here) */
    int guard[4] = {0, 0, 0, 0}, sentinel = 42, big[2] = {0, 0};
    if (rank == 0) {
        MTEST_OK(MPI_Put(&sentinel, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        MTEST_OK(MPI_Win_flush(0, win));
    }
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, 0, (MPI_Aint)1 << 62, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Put(big, 2, MPI_INT, 0, (MPI_Aint)((UINT64_MAX >> 2) + 1), 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Get(guard, 1, MPI_INT, 0, (MPI_Aint)1 << 62, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, 0, (MPI_Aint)1 << 62, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Accumulate(big, 2, MPI_INT, 0, (MPI_Aint)1 << 62, 2, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Compare_and_swap(&v, &v, &r, MPI_INT, 0, (MPI_Aint)1 << 62, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Put_c(&v, (MPI_Count)1 << 40, MPI_INT, 0, 0, (MPI_Count)1 << 40, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Get_c(guard, (MPI_Count)1 << 40, MPI_INT, 0, 0, (MPI_Count)1 << 40, MPI_INT, win), MPI_ERR_RMA_RANGE);
    MTEST_CHECK(guard[0] == 0, "a refused get wrote the origin buffer");
    if (rank == 0) {
        MTEST_OK(MPI_Get(&r, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        MTEST_OK(MPI_Win_flush(0, win));
        MTEST_CHECK(r == sentinel, "an overflowing displacement wrote element 0 (%d)", r);
        /* a put of 0 elements, and of a predefined type with a gap (the general path) */
        MTEST_OK(MPI_Put(&v, 0, MPI_INT, 0, 0, 0, MPI_INT, win));
        struct {
            double d;
            int i;
        } di = {2.5, 7}, dj = {0, 0};
        MTEST_OK(MPI_Put(&di, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, win));
        MTEST_OK(MPI_Get(&dj, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, win));
        MTEST_OK(MPI_Win_flush(0, win));
        MTEST_CHECK(dj.d == 2.5 && dj.i == 7, "MPI_DOUBLE_INT put and get: %g %d", dj.d, dj.i);
    }
    /* a lock on one target opens no epoch on the others */
    if (size > 1)
        MTEST_ERR(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    /* small atomics (the short path on a direct target) outside the window, to a bad rank,
     * with mismatched types or an undefined operation: the full checks still answer */
    MTEST_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, 0, 4, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, 0, -1, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Compare_and_swap(&v, &v, &r, MPI_INT, 0, 4, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Accumulate(&v, 2, MPI_INT, 0, 3, 2, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, size, 0, MPI_SUM, win), MPI_ERR_RANK);
    MTEST_ERR(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    MTEST_ERR(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, -1, MPI_INT, MPI_SUM, win), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Put(&v, -1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Put(&v, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_DOUBLE, win), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    float f = 1;
    MTEST_ERR(MPI_Accumulate(&f, 1, MPI_FLOAT, 0, 0, 1, MPI_FLOAT, MPI_BAND, win), MPI_ERR_OP);
    MPI_Op uop;
    MTEST_OK(MPI_Op_create((MPI_User_function *)count_errors, 1, &uop));
    MTEST_ERR(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, uop, win), MPI_ERR_OP);
    MPI_Op_free(&uop);
    double d = 1, dr;
    MTEST_ERR(MPI_Compare_and_swap(&d, &d, &dr, MPI_DOUBLE, 0, 0, win), MPI_ERR_TYPE);
    MTEST_OK(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MTEST_OK(MPI_Win_unlock(0, win));
    /* the epoch closed by unlock */
    MTEST_ERR(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Fetch_and_op(&v, &r, MPI_INT, 0, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    MTEST_ERR(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);

    /* shared_query on a non-shared window: our own part only */
    MPI_Aint sz;
    int du;
    int *p;
    MTEST_OK(MPI_Win_shared_query(win, rank, &sz, &du, &p));
    MTEST_CHECK(p == mem && sz == 4 * (MPI_Aint)sizeof(int), "own part of a non-shared window");
    MTEST_ERR(MPI_Win_shared_query(win, size, &sz, &du, &p), MPI_ERR_RANK);
    MTEST_ERR(MPI_Win_attach(win, mem, 4), MPI_ERR_RMA_FLAVOR);

    /* a user handler sees the errors */
    MPI_Errhandler mine;
    MTEST_OK(MPI_Win_create_errhandler(count_errors, &mine));
    MTEST_OK(MPI_Win_set_errhandler(win, mine));
    MTEST_OK(MPI_Errhandler_free(&mine));
    MPI_Win_unlock(0, win);
    MTEST_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    MTEST_CHECK(calls == 2, "user window handler called %d times, expected 2", calls);

    /* names, group, info, keyvals */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MTEST_OK(MPI_Win_set_name(win, "rma-test"));
    MTEST_OK(MPI_Win_get_name(win, name, &len));
    MTEST_CHECK(len == 8, "name length %d", len);
    MPI_Group g, wg;
    int cmp;
    MTEST_OK(MPI_Win_get_group(win, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    MTEST_CHECK(cmp == MPI_IDENT, "window group differs");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    int key, *val, flag, x = 7;
    MTEST_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL));
    MTEST_OK(MPI_Win_set_attr(win, key, &x));
    MTEST_OK(MPI_Win_get_attr(win, key, &val, &flag));
    MTEST_CHECK(flag && val == &x, "window attribute");
    MTEST_OK(MPI_Win_delete_attr(win, key));
    MTEST_OK(MPI_Win_get_attr(win, key, &val, &flag));
    MTEST_CHECK(!flag, "deleted attribute still there");
    MTEST_OK(MPI_Win_free_keyval(&key));
    MPI_Aint *wsz;
    int *model;
    MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsz, &flag));
    MTEST_CHECK(flag && *wsz == 4 * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE");
    MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    MTEST_CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    void *base;
    MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    MTEST_CHECK(flag && base == mem, "MPI_WIN_BASE");
    MTEST_OK(MPI_Win_free(&win));
    /* the freed handle: MPI_COMM_WORLD's handler (MPI_ERRORS_RETURN here) */
    MPI_Win bad = (MPI_Win)(void *)&calls;
    MTEST_ERR(MPI_Win_fence(0, bad), MPI_ERR_WIN);
    MTEST_ERR(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    return mtest_finalize();
}
