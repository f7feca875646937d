/* Bcast: 0 B .. 1 MiB from every root (large ones from two), bytes and a vector type whose
 * gaps must stay untouched; blocking, MPI_Ibcast (four at once around point-to-point) and
 * MPI_Bcast_init started three times with new data. RMPI_COLL_BCAST forces each algorithm. */
#include "collcheck.h"

static const size_t sizes[] = {0, 1, 100, 4099, 65539, 300001, 1048576};

/* count elements of type (bytes, or the 2-int vector of collcheck.h) */
static void one(size_t count, int vec, int root, int mode, int salt)
{
    int me = mtest_rank;
    ck_t k = ck_make(vec ? K_VEC : K_INT);
    MPI_Datatype t = vec ? k.type : MPI_BYTE;
    size_t bytes = vec ? count * k.slot : count;
    char *b = mtest_malloc(bytes + MTEST_GUARD);
    mtest_guard_set(b, bytes);
    MPI_Request req;
    int reps = mode == M_PERSISTENT ? 3 : 1;
    for (int rep = 0; rep < reps; rep++) {
        if (vec)
            ck_fill(&k, b, count, me == root ? 0 : me + 1, salt + rep);
        else
            mtest_fill(b, bytes, me == root ? (unsigned)(salt + rep) : 0xdead);
        if (vec) /* gaps are never sent: they keep what the rank had */
            for (size_t j = 0; j < count; j++)
                ((int *)b)[3 * j + 1] = GAP_SENTINEL;
        if (mode == M_BLOCKING) {
            MTEST_OK(MPI_Bcast(b, (int)count, t, root, MPI_COMM_WORLD));
        } else if (mode == M_NONBLOCKING) {
            MTEST_OK(MPI_Ibcast(b, (int)count, t, root, MPI_COMM_WORLD, &req));
            MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            if (rep == 0)
                MTEST_OK(MPI_Bcast_init(b, (int)count, t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            MTEST_OK(MPI_Start(&req));
            MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        char what[64];
        snprintf(what, sizeof what, "bcast %zu from %d mode %d", count, root, mode);
        if (vec)
            ck_check(&k, b, count, 0, 0, 0, salt + rep, what);
        else
            mtest_check_buf(b, bytes, (unsigned)(salt + rep), what);
        mtest_guard_check(b, bytes, what);
    }
    if (mode == M_PERSISTENT)
        MTEST_OK(MPI_Request_free(&req));
    ck_free(&k);
    free(b);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size, salt = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int root = 0; root < n; root++) {
            if (sizes[i] > 5000 && root != 0 && root != n - 1)
                continue;
            one(sizes[i], 0, root, (root + (int)i) % 3, salt++);
        }
    for (int mode = 0; mode < 3; mode++) {
        one(1, 1, n - 1, mode, salt++);
        one(5000, 1, 0, mode, salt++);
        one(100000, 1, n / 2, mode, salt++);
    }
    /* four at once, point-to-point in between */
    static const size_t cnt[4] = {1, 4096, 70000, 1048576};
    char *bufs[4];
    MPI_Request reqs[4];
    for (int i = 0; i < 4; i++) {
        bufs[i] = mtest_malloc(cnt[i]);
        int root = i % n;
        mtest_fill(bufs[i], cnt[i], mtest_rank == root ? 700u + (unsigned)i : 1u);
        MTEST_OK(MPI_Ibcast(bufs[i], (int)cnt[i], MPI_BYTE, root, MPI_COMM_WORLD, &reqs[i]));
    }
    int me = mtest_rank, token = me, got = -1;
    MTEST_OK(MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 3, &got, 1, MPI_INT, (me - 1 + n) % n, 3, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    MTEST_CHECK(got == (me - 1 + n) % n, "ring token %d", got);
    MTEST_OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; i++) {
        mtest_check_buf(bufs[i], cnt[i], 700u + (unsigned)i, "overlapped ibcast");
        free(bufs[i]);
    }
    return mtest_finalize();
}
