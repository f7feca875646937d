/* Dynamic windows: each rank attaches two regions, publishes their addresses, the others
 * put and accumulate into them by absolute address; detach; attach conflicts. */
#include "mtest.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win win;
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MTEST_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int *a = calloc((size_t)size, sizeof(int)), *b = calloc(4, sizeof(int));
    MTEST_OK(MPI_Win_attach(win, a, (MPI_Aint)size * sizeof(int)));
    MTEST_OK(MPI_Win_attach(win, b, 4 * sizeof(int)));
    MTEST_ERR(MPI_Win_attach(win, b + 1, sizeof(int)), MPI_ERR_RMA_ATTACH);
    MPI_Aint mine[2], *all = malloc((size_t)size * 2 * sizeof(MPI_Aint));
    MPI_Get_address(a, &mine[0]);
    MPI_Get_address(b, &mine[1]);
    MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD);
    /* an address outside every region for certain: memory never attached (b + 4096 was a's
     * address in one heap layout, and b + 256 may be too) */
    long *gap = calloc(8, sizeof(long));
    MPI_Aint gapa, *gaps = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(gap, &gapa);
    MPI_Allgather(&gapa, 1, MPI_AINT, gaps, 1, MPI_AINT, MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        int v = rank + 1;
        MTEST_OK(MPI_Put(&v, 1, MPI_INT, t, MPI_Aint_add(all[2 * t], rank * (MPI_Aint)sizeof(int)), 1, MPI_INT, win));
        MTEST_OK(MPI_Accumulate(&v, 1, MPI_INT, t, all[2 * t + 1], 1, MPI_INT, MPI_SUM, win));
    }
    MTEST_OK(MPI_Win_fence(0, win));
    for (int s = 0; s < size; s++)
        MTEST_CHECK(a[s] == s + 1, "a[%d] = %d", s, a[s]);
    MTEST_CHECK(b[0] == size * (size + 1) / 2, "b[0] = %d", b[0]);
    /* outside any attached region: the target reports MPI_ERR_RMA_RANGE at the next sync */
    int t = (rank + 1) % size, v = 5;
    MTEST_OK(MPI_Put(&v, 1, MPI_INT, t, gaps[t], 1, MPI_INT, win));
    MTEST_ERR(MPI_Win_fence(0, win), MPI_ERR_RMA_RANGE);
    /* A put and a get of 8 KiB that start inside an attached region and run past it (on shm
     * such sizes go by cross-memory attach where the target's published regions cover
     * them): the same error, nothing written past the region. */
    enum { BIG = 2048 };
    int *big = calloc(BIG, sizeof(int));
    MTEST_OK(MPI_Put(big, BIG, MPI_INT, t, all[2 * t + 1], BIG, MPI_INT, win));
    MTEST_ERR(MPI_Win_fence(0, win), MPI_ERR_RMA_RANGE);
    MTEST_OK(MPI_Get(big, BIG, MPI_INT, t, all[2 * t + 1], BIG, MPI_INT, win));
    MTEST_ERR(MPI_Win_fence(0, win), MPI_ERR_RMA_RANGE);
    free(big);
    /* The same in a PSCW epoch: Complete reports a put outside every region (one int, and
     * 5 KiB, which goes as RDMA across nodes over tcp), once; a valid put then completes. */
    {
        MPI_Group world, to, from;
        int prev = (rank - 1 + size) % size;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, 1, &t, &to);
        MPI_Group_incl(world, 1, &prev, &from);
        enum { PBIG = 1280 };
        int *pbig = calloc(PBIG, sizeof(int));
        for (int pass = 0; pass < 3; pass++) {
            MTEST_OK(MPI_Win_post(from, 0, win));
            MTEST_OK(MPI_Win_start(to, 0, win));
            if (pass == 0)
                MTEST_OK(MPI_Put(&v, 1, MPI_INT, t, gaps[t], 1, MPI_INT, win));
            else if (pass == 1)
                MTEST_OK(MPI_Put(pbig, PBIG, MPI_INT, t, gaps[t], PBIG, MPI_INT, win));
            else
                MTEST_OK(MPI_Put(&v, 1, MPI_INT, t, MPI_Aint_add(all[2 * t], rank * (MPI_Aint)sizeof(int)), 1, MPI_INT,
                                 win));
            if (pass < 2)
                MTEST_ERR(MPI_Win_complete(win), MPI_ERR_RMA_RANGE);
            else
                MTEST_OK(MPI_Win_complete(win));
            MTEST_OK(MPI_Win_wait(win));
        }
        MTEST_CHECK(a[prev] == 5, "a put in a PSCW epoch after two refused ones: a[%d] = %d", prev, a[prev]);
        free(pbig);
        MPI_Group_free(&world);
        MPI_Group_free(&to);
        MPI_Group_free(&from);
    }
    /* A get and a fetch-and-op of one long outside every region: only the target can check
     * (across nodes; on shm when its published regions do not cover it): the error comes
     * in the answer, or the ack of the flush's FLUSH. */
    long lv = 0, lold = 0, lone = 1;
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    MTEST_OK(MPI_Get(&lv, 1, MPI_LONG, t, gaps[t], 1, MPI_LONG, win));
    MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
    MTEST_OK(MPI_Fetch_and_op(&lone, &lold, MPI_LONG, t, gaps[t], MPI_SUM, win));
    MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
    /* The same for compare-and-swap (its answer says so: 0 bytes, docs/wire/rma.md), and a
     * fetch-and-op inside a region then succeeds: the error was reported once. */
    lold = 77;
    MTEST_OK(MPI_Compare_and_swap(&lone, &lv, &lold, MPI_LONG, t, gaps[t], win));
    MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
    MTEST_CHECK(lold == 77, "a refused compare-and-swap wrote %ld into its result", lold);
    MTEST_OK(MPI_Fetch_and_op(&lone, &lold, MPI_LONG, t, all[2 * t + 1], MPI_NO_OP, win));
    MTEST_OK(MPI_Win_flush(t, win));
    MTEST_OK(MPI_Win_unlock(t, win));
    /* Many regions of 5 KiB: 20 (on shm in the table origins of the node read), then 40
     * (more than it holds: messages); a put into each from the previous rank arrives. */
    enum { NREG = 40, RLEN = 1280 };
    int *reg[NREG];
    MPI_Aint raddr[NREG], *rall = malloc((size_t)size * NREG * sizeof(MPI_Aint));
    int *rsrc = malloc(RLEN * sizeof(int));
    for (int half = 0; half < 2; half++) {
        int n = half ? NREG : NREG / 2;
        for (int i = half ? NREG / 2 : 0; i < n; i++) {
            reg[i] = calloc(RLEN, sizeof(int));
            MTEST_OK(MPI_Win_attach(win, reg[i], RLEN * sizeof(int)));
            MPI_Get_address(reg[i], &raddr[i]);
        }
        MPI_Allgather(raddr, NREG, MPI_AINT, rall, NREG, MPI_AINT, MPI_COMM_WORLD);
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < RLEN; k++)
                rsrc[k] = half * 100000 + i * 1000 + k;
            MTEST_OK(MPI_Put(rsrc, RLEN, MPI_INT, t, rall[t * NREG + i], RLEN, MPI_INT, win));
        }
        MTEST_OK(MPI_Win_unlock(t, win));
        MPI_Barrier(MPI_COMM_WORLD);
        int bad = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < RLEN; k++)
                bad += reg[i][k] != half * 100000 + i * 1000 + k;
        MTEST_CHECK(!bad, "%d regions attached: %d wrong values", n, bad);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* A region detached (its memory still allocated): a put and a get of 5 KiB there fail
     * at the target's check (over tcp as RDMA: the range list the key names no longer
     * holds it) and nothing is written. */
    MTEST_OK(MPI_Win_detach(win, reg[0]));
    for (int k = 0; k < RLEN; k++)
        reg[0][k] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    MTEST_OK(MPI_Put(rsrc, RLEN, MPI_INT, t, rall[t * NREG], RLEN, MPI_INT, win));
    MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
    MTEST_OK(MPI_Get(rsrc, RLEN, MPI_INT, t, rall[t * NREG], RLEN, MPI_INT, win));
    MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
    MTEST_OK(MPI_Win_unlock(t, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int wrote = 0;
    for (int k = 0; k < RLEN; k++)
        wrote += reg[0][k] != -1;
    MTEST_CHECK(!wrote, "a put into a detached region wrote %d values", wrote);
    for (int i = 0; i < NREG; i++) {
        if (i)
            MTEST_OK(MPI_Win_detach(win, reg[i]));
        free(reg[i]);
    }
    free(rall);
    free(rsrc);
    /* One buffer attached as two adjacent regions: an access running over both is valid
     * (put, accumulate, get_accumulate of 9,216 ints in a lock_all epoch, then flush). */
    enum { HALF = 4608 };
    int *c = calloc(2 * HALF, sizeof(int)), *src = malloc(2 * HALF * sizeof(int)),
        *res = malloc(2 * HALF * sizeof(int));
    for (int i = 0; i < 2 * HALF; i++)
        src[i] = i;
    MTEST_OK(MPI_Win_attach(win, c, HALF * sizeof(int)));
    MTEST_OK(MPI_Win_attach(win, c + HALF, HALF * sizeof(int)));
    MPI_Aint caddr, *call = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(c, &caddr);
    MPI_Allgather(&caddr, 1, MPI_AINT, call, 1, MPI_AINT, MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock_all(0, win));
    if (rank == 0) {
        MTEST_OK(MPI_Put(src, 2 * HALF, MPI_INT, t, call[t], 2 * HALF, MPI_INT, win));
        MTEST_OK(MPI_Win_flush(t, win));
        MTEST_OK(MPI_Accumulate(src, 2 * HALF, MPI_INT, t, call[t], 2 * HALF, MPI_INT, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(t, win));
        MTEST_OK(MPI_Get_accumulate(src, 2 * HALF, MPI_INT, res, 2 * HALF, MPI_INT, t, call[t], 2 * HALF, MPI_INT,
                                    MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(t, win));
        int bad = 0;
        for (int i = 0; i < 2 * HALF; i++)
            bad += res[i] != 2 * i;
        MTEST_CHECK(!bad, "get_accumulate over two adjacent regions: %d wrong values", bad);
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == (size > 1 ? 1 : 0)) {
        int bad = 0;
        for (int i = 0; i < 2 * HALF; i++)
            bad += c[i] != 3 * i;
        MTEST_CHECK(!bad, "put + 2 accumulates over two adjacent regions: %d wrong values", bad);
    }
    MTEST_OK(MPI_Win_detach(win, c));
    MTEST_OK(MPI_Win_detach(win, c + HALF));
    free(c);
    free(src);
    free(res);
    free(call);
    /* After puts the origin moved itself (on shm: the target's published regions covered
     * them, and the origin keeps the range found covered while the table stays the same), a
     * put and a get that start inside the same region and run past it still fail and write
     * nothing past it; a put inside it at another offset lands. */
    {
        enum { RN = 16384, GUARD = 2048, PIECE = 2048 };
        int *r = malloc((RN + GUARD) * sizeof(int)), *src = malloc(RN * sizeof(int));
        for (int i = 0; i < RN + GUARD; i++)
            r[i] = -1;
        for (int i = 0; i < RN; i++)
            src[i] = i;
        MTEST_OK(MPI_Win_attach(win, r, RN * sizeof(int)));
        MPI_Aint ra, *rall2 = malloc((size_t)size * sizeof(MPI_Aint));
        MPI_Get_address(r, &ra);
        MPI_Allgather(&ra, 1, MPI_AINT, rall2, 1, MPI_AINT, MPI_COMM_WORLD);
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        for (int k = 0; k < 3; k++)
            MTEST_OK(MPI_Put(src, RN, MPI_INT, t, rall2[t], RN, MPI_INT, win));
        MTEST_OK(MPI_Win_flush(t, win));
        MPI_Aint past = MPI_Aint_add(rall2[t], (RN - PIECE / 2) * (MPI_Aint)sizeof(int));
        MTEST_OK(MPI_Put(src, PIECE, MPI_INT, t, past, PIECE, MPI_INT, win));
        MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
        MTEST_OK(MPI_Get(src + RN - PIECE, PIECE, MPI_INT, t, past, PIECE, MPI_INT, win));
        MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
        for (int i = 0; i < PIECE; i++)
            src[i] = -2 - i;
        MTEST_OK(MPI_Put(src, PIECE, MPI_INT, t, MPI_Aint_add(rall2[t], PIECE * (MPI_Aint)sizeof(int)), PIECE, MPI_INT,
                         win));
        MTEST_OK(MPI_Win_unlock(t, win));
        MPI_Barrier(MPI_COMM_WORLD);
        int bad = 0, past_bad = 0;
        for (int i = 0; i < RN; i++)
            bad += r[i] != (i >= PIECE && i < 2 * PIECE ? -2 - (i - PIECE) : i);
        for (int i = RN; i < RN + GUARD; i++)
            past_bad += r[i] != -1;
        MTEST_CHECK(!bad, "puts into one region by the origin: %d wrong values", bad);
        MTEST_CHECK(!past_bad, "a put running past a region written before wrote %d values past it", past_bad);
        MTEST_OK(MPI_Win_detach(win, r));
        free(r);
        free(src);
        free(rall2);
    }
    /* A get of 256 KiB (answered from the target's memory, by rendezvous), then a small put
     * (in the same message) and a large one to the same place in the same epoch: the get
     * reads what was there before. MPI leaves such conflicting accesses undefined; RailMPI
     * applies one origin's operations in issue order (src/rma/README.md), so the target
     * holds the puts until the answer was read. */
    enum { BIGN = 65536, SMALLN = 200 };
    int *d = malloc(BIGN * sizeof(int)), *got = malloc(BIGN * sizeof(int)), *nv = malloc(BIGN * sizeof(int));
    for (int i = 0; i < BIGN; i++) {
        d[i] = rank * 7 + i;
        nv[i] = -(rank + 1) - i;
    }
    MTEST_OK(MPI_Win_attach(win, d, BIGN * sizeof(int)));
    MPI_Aint daddr, *dall = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(d, &daddr);
    MPI_Allgather(&daddr, 1, MPI_AINT, dall, 1, MPI_AINT, MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MTEST_OK(MPI_Get(got, BIGN, MPI_INT, t, dall[t], BIGN, MPI_INT, win));
    MTEST_OK(MPI_Put(nv, SMALLN, MPI_INT, t, dall[t], SMALLN, MPI_INT, win));
    MTEST_OK(MPI_Put(nv, BIGN, MPI_INT, t, dall[t], BIGN, MPI_INT, win));
    MTEST_OK(MPI_Win_unlock(t, win));
    int bad = 0;
    for (int i = 0; i < BIGN; i++)
        bad += got[i] != t * 7 + i;
    MTEST_CHECK(!bad, "get then put to the same place: the get saw %d values of the put", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    int from = (rank - 1 + size) % size;
    bad = 0;
    for (int i = 0; i < BIGN; i++)
        bad += d[i] != -(from + 1) - i;
    MTEST_CHECK(!bad, "the put after the get: %d wrong values", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_detach(win, d));
    free(d);
    free(got);
    free(nv);
    free(dall);
    MTEST_OK(MPI_Win_detach(win, b));
    MTEST_ERR(MPI_Win_detach(win, b), MPI_ERR_RMA_ATTACH);
    MTEST_OK(MPI_Win_detach(win, a));
    int flavor_ok, *fl;
    MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flavor_ok));
    MTEST_CHECK(flavor_ok && *fl == MPI_WIN_FLAVOR_DYNAMIC, "flavor");
    MPI_Aint sz, du;
    void *base;
    MTEST_ERR(MPI_Win_shared_query_c(win, 0, &sz, &du, &base), MPI_ERR_RMA_FLAVOR);
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_OK(MPI_Win_free(&win));
    free(a);
    free(b);
    free(all);
    free(gap);
    free(gaps);
    return mtest_finalize();
}
