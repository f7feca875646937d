/* Blocking collectives while non-blocking and persistent ones on the same communicators
 * are still in flight, on three communicators interleaved (WORLD, a dup, a split with the
 * ranks reversed). Blocking calls reuse schedule memory (coll/nbc.c spare list); the
 * in-flight schedules must keep theirs, so every result is checked, with sizes that change
 * every round (scratch arenas grow and are reused), a vector type with gaps (reductions
 * pack into scratch) and one vector past the kept arena size. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

enum { NCOMM = 3, ROUNDS = 12, BIG = 40000 };

static int me, n;

/* Element i of rank p's contribution in round r on communicator k. */
static int val(int p, int i, int r, int k) { return p * 1000 + i * 3 + r * 7 + k; }
static int sum(int i, int r, int k, int size) { return 1000 * size * (size - 1) / 2 + size * (i * 3 + r * 7 + k); }

/* Every other int of buf (a vector of cnt ints with stride 2, gaps = -7). */
static void fill_vec(int *buf, int cnt, int rank, int r, int k)
{
    for (int i = 0; i < cnt; i++)
        buf[2 * i] = val(rank, i, r, k), buf[2 * i + 1] = -7;
}

static int check_vec_sum(const int *buf, int cnt, int r, int k, int size)
{
    int bad = 0;
    for (int i = 0; i < cnt; i++)
        bad += buf[2 * i] != sum(i, r, k, size) || buf[2 * i + 1] != -7;
    return bad;
}

/* The blocking collectives at 8 bytes and a little more, checked. */
static void blocking_set(MPI_Comm comm, int r, int k)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MTEST_OK(MPI_Barrier(comm));

    int b[2] = {-1, -1}, root = r % size;
    if (rank == root)
        b[0] = val(root, 0, r, k), b[1] = val(root, 1, r, k);
    MTEST_OK(MPI_Bcast(b, 2, MPI_INT, root, comm));
    MTEST_CHECK(b[0] == val(root, 0, r, k) && b[1] == val(root, 1, r, k), "comm %d round %d: bcast %d %d", k, r, b[0],
                b[1]);

    int in[2] = {val(rank, 0, r, k), val(rank, 1, r, k)}, out[2] = {-1, -1};
    MTEST_OK(MPI_Reduce(in, out, 2, MPI_INT, MPI_SUM, root, comm));
    if (rank == root)
        MTEST_CHECK(out[0] == sum(0, r, k, size) && out[1] == sum(1, r, k, size), "comm %d round %d: reduce %d %d", k,
                    r, out[0], out[1]);
    out[0] = out[1] = -1;
    MTEST_OK(MPI_Allreduce(in, out, 2, MPI_INT, MPI_SUM, comm));
    MTEST_CHECK(out[0] == sum(0, r, k, size) && out[1] == sum(1, r, k, size), "comm %d round %d: allreduce %d %d", k, r,
                out[0], out[1]);

    int *ag = mtest_malloc((size_t)size * 2 * sizeof(int)), *at = mtest_malloc((size_t)size * 2 * sizeof(int));
    int *as = mtest_malloc((size_t)size * 2 * sizeof(int));
    for (int p = 0; p < size; p++)
        as[2 * p] = val(rank, p, r, k), as[2 * p + 1] = -val(rank, p, r, k);
    MTEST_OK(MPI_Allgather(in, 2, MPI_INT, ag, 2, MPI_INT, comm));
    MTEST_OK(MPI_Alltoall(as, 2, MPI_INT, at, 2, MPI_INT, comm));
    int bad = 0;
    for (int p = 0; p < size; p++) {
        bad += ag[2 * p] != val(p, 0, r, k) || ag[2 * p + 1] != val(p, 1, r, k);
        bad += at[2 * p] != val(p, rank, r, k) || at[2 * p + 1] != -val(p, rank, r, k);
    }
    MTEST_CHECK(!bad, "comm %d round %d: %d bad allgather/alltoall elements", k, r, bad);
    free(ag), free(at), free(as);
}

/* A blocking allreduce on a vector type (packs into schedule scratch). */
static void blocking_vec(MPI_Comm comm, int cnt, int r, int k)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vec;
    MTEST_OK(MPI_Type_vector(cnt, 1, 2, MPI_INT, &vec));
    MTEST_OK(MPI_Type_commit(&vec));
    int *in = mtest_malloc((size_t)cnt * 2 * sizeof(int)), *out = mtest_malloc((size_t)cnt * 2 * sizeof(int));
    fill_vec(in, cnt, rank, r, k);
    for (int i = 0; i < 2 * cnt; i++)
        out[i] = -7;
    MTEST_OK(MPI_Allreduce(in, out, 1, vec, MPI_SUM, comm));
    int bad = check_vec_sum(out, cnt, r, k, size);
    MTEST_CHECK(!bad, "comm %d round %d: blocking vector allreduce of %d: %d bad", k, r, cnt, bad);
    MTEST_OK(MPI_Type_free(&vec));
    free(in), free(out);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank, n = mtest_size;
    MPI_Comm comm[NCOMM];
    comm[0] = MPI_COMM_WORLD;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]));
    MTEST_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &comm[2]));

    /* persistent allreduce on the dup, restarted every round */
    int pin = 0, pout = -1;
    MPI_Request preq;
    MTEST_OK(MPI_Allreduce_init(&pin, &pout, 1, MPI_INT, MPI_SUM, comm[1], MPI_INFO_NULL, &preq));

    for (int r = 0; r < ROUNDS; r++) {
        int rank[NCOMM];
        for (int k = 0; k < NCOMM; k++)
            MPI_Comm_rank(comm[k], &rank[k]);
        /* in flight on every communicator: a vector allreduce (scratch), an ibarrier, and
         * on WORLD an ialltoall; sizes change every round, one round goes past 64 KiB */
        int cnt[NCOMM];
        MPI_Datatype vec[NCOMM];
        int *nin[NCOMM], *nout[NCOMM];
        MPI_Request req[2 * NCOMM + 2];
        int nreq = 0;
        pin = me + r;
        MTEST_OK(MPI_Start(&preq));
        for (int k = 0; k < NCOMM; k++) {
            cnt[k] = r == 5 && k == 1 ? BIG : 1 + (r * 37 + k * 101) % 700;
            MTEST_OK(MPI_Type_vector(cnt[k], 1, 2, MPI_INT, &vec[k]));
            MTEST_OK(MPI_Type_commit(&vec[k]));
            nin[k] = mtest_malloc((size_t)cnt[k] * 2 * sizeof(int));
            nout[k] = mtest_malloc((size_t)cnt[k] * 2 * sizeof(int));
            fill_vec(nin[k], cnt[k], rank[k], r, k + 10);
            for (int i = 0; i < 2 * cnt[k]; i++)
                nout[k][i] = -7;
            MTEST_OK(MPI_Iallreduce(nin[k], nout[k], 1, vec[k], MPI_SUM, comm[k], &req[nreq++]));
            MTEST_OK(MPI_Ibarrier(comm[k], &req[nreq++]));
        }
        int *a2s = mtest_malloc((size_t)n * sizeof(int)), *a2r = mtest_malloc((size_t)n * sizeof(int));
        for (int p = 0; p < n; p++)
            a2s[p] = val(me, p, r, 20), a2r[p] = -1;
        MTEST_OK(MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, MPI_COMM_WORLD, &req[nreq++]));

        /* blocking ones meanwhile, the communicators interleaved */
        for (int k = 0; k < NCOMM; k++)
            blocking_set(comm[(k + r) % NCOMM], r, (k + r) % NCOMM);
        for (int k = NCOMM - 1; k >= 0; k--)
            blocking_vec(comm[k], 1 + (r * 53 + k * 29) % 900, r, k);
        blocking_set(comm[r % NCOMM], r + 100, r % NCOMM);

        MTEST_OK(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
        MTEST_OK(MPI_Wait(&preq, MPI_STATUS_IGNORE));
        int size[NCOMM];
        for (int k = 0; k < NCOMM; k++) {
            MPI_Comm_size(comm[k], &size[k]);
            int bad = check_vec_sum(nout[k], cnt[k], r, k + 10, size[k]);
            MTEST_CHECK(!bad, "comm %d round %d: non-blocking vector allreduce of %d: %d bad", k, r, cnt[k], bad);
            MTEST_OK(MPI_Type_free(&vec[k]));
            free(nin[k]), free(nout[k]);
        }
        int bad = 0;
        for (int p = 0; p < n; p++)
            bad += a2r[p] != val(p, me, r, 20);
        MTEST_CHECK(!bad, "round %d: ialltoall: %d bad", r, bad);
        MTEST_CHECK(pout == n * (n - 1) / 2 + n * r, "round %d: persistent allreduce %d", r, pout);
        free(a2s), free(a2r);
    }
    MTEST_OK(MPI_Request_free(&preq));
    MTEST_OK(MPI_Comm_free(&comm[1]));
    MTEST_OK(MPI_Comm_free(&comm[2]));
    return mtest_finalize();
}
