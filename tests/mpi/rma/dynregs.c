/* Dynamic windows whose regions come and go while traffic runs (over libfabric each
 * attached region is a registration of its own, listed in the target's region table that
 * origins read by RDMA and read again in every access epoch):
 * - a region detached and attached again at the same address, five rounds: puts and gets
 *   of 64 KiB and 8 B through it in lock, lock_all and fence epochs, checked byte for byte
 *   (a copy of the table kept from an earlier epoch, with the closed key, fails this or
 *   ends the job: tcp;ofi_rxm drops the connection on a write with a closed key);
 * - between rounds, a put and a get of 64 KiB into the detached region fail with
 *   MPI_ERR_RMA_RANGE at the next flush and write nothing;
 * - a region attached inside a lock_all epoch, its address sent by message, then written
 *   (a copy read at the epoch's start does not list it);
 * - 80 regions of 4 KiB, more than the table lists (64): every one written and read back. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

enum { BIG = 64 << 10, ROUNDS = 5, NMANY = 80, MANY = 4096 };

static void fill(unsigned char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 9));
}

static int differs(const unsigned char *p, size_t n, int seed)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char)(seed * 31 + i * 7 + (i >> 9));
    return bad;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Win win;
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    MTEST_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    unsigned char *reg = malloc(BIG), *src = malloc(BIG), *back = malloc(BIG);
    MPI_Aint mine, *all = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(reg, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);

    for (int round = 0; round < ROUNDS; round++) {
        memset(reg, 0, BIG);
        MTEST_OK(MPI_Win_attach(win, reg, BIG));
        MPI_Barrier(MPI_COMM_WORLD);
        /* lock: a put and a get of 64 KiB, an 8 B put at the end */
        fill(src, BIG, round);
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, t, all[t], BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Win_flush(t, win));
        memset(back, 0, BIG);
        MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, t, all[t], BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Win_unlock(t, win));
        int bad = differs(back, BIG, round);
        MTEST_CHECK(!bad, "round %d: 64 KiB read back from rank %d: %d bytes differ", round, t, bad);
        /* lock_all: a second pattern, then fence: a third, each seen by the target */
        fill(src, BIG, round + 100);
        MTEST_OK(MPI_Win_lock_all(0, win));
        MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, t, all[t], BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        bad = differs(reg, BIG, round + 100);
        MTEST_CHECK(!bad, "round %d: lock_all put from rank %d: %d bytes differ", round, from, bad);
        fill(src, BIG, round + 200);
        MTEST_OK(MPI_Win_fence(0, win));
        MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, t, all[t], BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Win_fence(0, win));
        bad = differs(reg, BIG, round + 200);
        MTEST_CHECK(!bad, "round %d: fence put from rank %d: %d bytes differ", round, from, bad);
        MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        /* detached: refused, nothing written, at the same address as the next round's */
        MTEST_OK(MPI_Win_detach(win, reg));
        memset(reg, 0xee, BIG);
        MPI_Barrier(MPI_COMM_WORLD);
        if (size > 1) {
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, t, all[t], BIG, MPI_BYTE, win));
            MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
            MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, t, all[t], BIG, MPI_BYTE, win));
            MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
            MTEST_OK(MPI_Win_unlock(t, win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int wrote = 0;
        for (size_t i = 0; i < BIG; i++)
            wrote += reg[i] != 0xee;
        MTEST_CHECK(!wrote, "round %d: a put into the detached region wrote %d bytes", round, wrote);
    }

    /* attached inside an epoch: the origin's copy of the table is older than the region */
    MTEST_OK(MPI_Win_lock_all(0, win));
    if (size > 1) {
        MTEST_OK(MPI_Put(src, 8, MPI_BYTE, t, all[t], 8, MPI_BYTE, win)); /* detached: refused */
        MTEST_ERR(MPI_Win_flush(t, win), MPI_ERR_RMA_RANGE);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* refused before the target attaches it again */
    memset(reg, 0, BIG);
    MTEST_OK(MPI_Win_attach(win, reg, BIG));
    MPI_Aint late;
    MPI_Sendrecv(&mine, 1, MPI_AINT, from, 0, &late, 1, MPI_AINT, t, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fill(src, BIG, 7);
    MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, t, late, BIG, MPI_BYTE, win));
    MTEST_OK(MPI_Win_flush(t, win));
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = differs(reg, BIG, 7);
    MTEST_CHECK(!bad, "a region attached in the epoch: %d bytes differ", bad);
    MTEST_OK(MPI_Win_detach(win, reg));

    /* more regions than the table lists */
    unsigned char *many[NMANY];
    MPI_Aint maddr[NMANY], *mall = malloc((size_t)size * NMANY * sizeof(MPI_Aint));
    for (int i = 0; i < NMANY; i++) {
        many[i] = calloc(1, MANY);
        MTEST_OK(MPI_Win_attach(win, many[i], MANY));
        MPI_Get_address(many[i], &maddr[i]);
    }
    MPI_Allgather(maddr, NMANY, MPI_AINT, mall, NMANY, MPI_AINT, MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    unsigned char *msrc = malloc((size_t)NMANY * MANY);
    for (int i = 0; i < NMANY; i++) {
        fill(msrc + (size_t)i * MANY, MANY, 300 + i);
        MTEST_OK(MPI_Put(msrc + (size_t)i * MANY, MANY, MPI_BYTE, t, mall[t * NMANY + i], MANY, MPI_BYTE, win));
    }
    MTEST_OK(MPI_Win_flush(t, win));
    unsigned char *mback = calloc(NMANY, MANY);
    for (int i = 0; i < NMANY; i++)
        MTEST_OK(MPI_Get(mback + (size_t)i * MANY, MANY, MPI_BYTE, t, mall[t * NMANY + i], MANY, MPI_BYTE, win));
    MTEST_OK(MPI_Win_unlock(t, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int mbad = 0, rbad = 0;
    for (int i = 0; i < NMANY; i++) {
        mbad += differs(many[i], MANY, 300 + i);
        rbad += differs(mback + (size_t)i * MANY, MANY, 300 + i);
    }
    MTEST_CHECK(!mbad, "%d regions: %d bytes written wrong", NMANY, mbad);
    MTEST_CHECK(!rbad, "%d regions: %d bytes read back wrong", NMANY, rbad);
    for (int i = 0; i < NMANY; i++) {
        MTEST_OK(MPI_Win_detach(win, many[i]));
        free(many[i]);
    }
    MTEST_OK(MPI_Win_free(&win));
    free(reg);
    free(src);
    free(back);
    free(all);
    free(mall);
    free(msrc);
    free(mback);
    return mtest_finalize();
}
