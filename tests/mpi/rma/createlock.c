/* Passive-target locks on a Win_create window (private memory: reached by cross-memory
 * attach or messages) contended by every rank, origins of the target's node (lock words in
 * shared memory) and, with RMPI_TOPO_FAKE_NODES, of other nodes (the target's lock manager
 * on the same word) mixed. Each check fails when the lock lets two writers, or a writer and
 * a reader, in at once:
 * - a pair of counters read, incremented and written back under an exclusive lock (small
 *   gets and puts: messages) by every rank in turn on every target, the target itself
 *   included through loads and stores of its own memory under its own exclusive lock;
 * - a block of 5 KiB (past the size that goes as messages on shm: cross-memory attach,
 *   nothing the target's progress sees) read, checked uniform, incremented and written
 *   back under an exclusive lock;
 * - shared readers of that block see it uniform and unchanged across two gets with a
 *   flush between; Lock_all readers of the pair see it equal, across a flush;
 * - fetch-and-adds under Lock_all, and then MPI_MODE_NOCHECK puts into slots nobody else
 *   writes;
 * final values exact on every rank. Argument "allocate": the same on a Win_allocate window;
 * "dynamic": on a dynamic window, the memory attached as two adjacent regions (an access
 * may run over both), addressed by absolute addresses; on shm the block then goes by
 * cross-memory attach once the target's published regions cover it; "allocmem": Win_create
 * over MPI_Alloc_mem memory (mapped by the node's origins: direct loads, stores and atomics
 * under the same lock words). */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define ITERS 60 /* a multiple of 1..4 ranks: every rank targets every rank ITERS / size times */
#define BLK 640  /* longs: 5120 bytes */
enum { PAIR = 0, ALLC = 2, NOCH = 4, BLOCK = 16, SLOTS = BLOCK + BLK };

static int dyn;        /* "dynamic": displacements are addresses */
static MPI_Aint *addr; /* dynamic: every rank's memory */
static MPI_Aint at(int t, int slot) { return dyn ? addr[t] + slot * (MPI_Aint)sizeof(long) : slot; }

static void check_uniform(const long *b, long *v, const char *what, int it, int t)
{
    for (int i = 1; i < BLK; i++)
        if (b[i] != b[0]) {
            MTEST_CHECK(0, "iteration %d, target %d, %s: block[%d] = %ld, block[0] = %ld", it, t, what, i, b[i], b[0]);
            break;
        }
    *v = b[0];
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int alloc = argc > 1 && strcmp(argv[1], "allocate") == 0;
    dyn = argc > 1 && strcmp(argv[1], "dynamic") == 0;
    int amem = argc > 1 && strcmp(argv[1], "allocmem") == 0;
    long *mem = NULL, *own = NULL;
    long *blk = malloc(BLK * sizeof *blk), *blk2 = malloc(BLK * sizeof *blk2);
    MPI_Win win;
    if (alloc)
        MTEST_OK(MPI_Win_allocate(SLOTS * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    else if (amem) {
        MTEST_OK(MPI_Alloc_mem(SLOTS * sizeof *mem, MPI_INFO_NULL, &mem));
        MTEST_OK(MPI_Win_create(mem, SLOTS * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        mem = own = calloc(SLOTS, sizeof *mem);
        MTEST_CHECK(mem != NULL, "out of memory");
        if (dyn) {
            MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            MTEST_OK(MPI_Win_attach(win, mem, (BLOCK + BLK / 2) * sizeof *mem));
            MTEST_OK(MPI_Win_attach(win, mem + BLOCK + BLK / 2, (BLK - BLK / 2) * sizeof *mem));
            addr = malloc((size_t)size * sizeof *addr);
            MPI_Aint mine;
            MPI_Get_address(mem, &mine);
            MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
        } else {
            MTEST_OK(MPI_Win_create(mem, SLOTS * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
    }
    MTEST_CHECK(blk && blk2, "out of memory");
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    memset(mem, 0, SLOTS * sizeof *mem);
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int nall = 0;
    long one = 1;

    for (int it = 0; it < ITERS; it++) {
        int t = (rank + it) % size;
        long pair[2] = {-1, -2};

        /* the pair, by messages, under an exclusive lock */
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Get(pair, 2, MPI_LONG, t, at(t, PAIR), 2, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(t, win));
        MTEST_CHECK(pair[0] == pair[1], "iteration %d: target %d's pair differs under an exclusive lock: %ld %ld", it,
                    t, pair[0], pair[1]);
        pair[0]++;
        pair[1]++;
        MTEST_OK(MPI_Put(pair, 2, MPI_LONG, t, at(t, PAIR), 2, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(t, win));

        /* the block, by cross-memory attach on shm, under an exclusive lock */
        long v;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Get(blk, BLK, MPI_LONG, t, at(t, BLOCK), BLK, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(t, win));
        check_uniform(blk, &v, "exclusive", it, t);
        for (int i = 0; i < BLK; i++)
            blk[i] = v + 1;
        MTEST_OK(MPI_Put(blk, BLK, MPI_LONG, t, at(t, BLOCK), BLK, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(t, win));

        /* a shared reader of the block: no writer between its two reads */
        long v2;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, (t + 1) % size, 0, win));
        MTEST_OK(MPI_Get(blk, BLK, MPI_LONG, (t + 1) % size, at((t + 1) % size, BLOCK), BLK, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush((t + 1) % size, win));
        MTEST_OK(MPI_Get(blk2, BLK, MPI_LONG, (t + 1) % size, at((t + 1) % size, BLOCK), BLK, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock((t + 1) % size, win));
        check_uniform(blk, &v, "shared, first read", it, (t + 1) % size);
        check_uniform(blk2, &v2, "shared, second read", it, (t + 1) % size);
        MTEST_CHECK(v == v2, "iteration %d: a shared lock on %d saw a writer: %ld then %ld", it, (t + 1) % size, v, v2);

        /* our own pair, by loads and stores, under our own exclusive lock */
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        long a = mem[PAIR], b = mem[PAIR + 1];
        MTEST_CHECK(a == b, "iteration %d: own pair differs under own exclusive lock: %ld %ld", it, a, b);
        mem[PAIR] = a + 1;
        mem[PAIR + 1] = b + 1;
        MTEST_OK(MPI_Win_unlock(rank, win));

        /* Lock_all: a reader of the pair, and a fetch-and-add on every rank */
        if (it % 3 == 0) {
            nall++;
            long p1[2] = {-1, -2}, p2[2] = {-3, -4}, old = -1;
            MTEST_OK(MPI_Win_lock_all(0, win));
            MTEST_OK(MPI_Get(p1, 2, MPI_LONG, t, at(t, PAIR), 2, MPI_LONG, win));
            MTEST_OK(MPI_Win_flush(t, win));
            MTEST_OK(MPI_Get(p2, 2, MPI_LONG, t, at(t, PAIR), 2, MPI_LONG, win));
            for (int r = 0; r < size; r++)
                MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, r, at(r, ALLC), MPI_SUM, win));
            MTEST_OK(MPI_Win_unlock_all(win));
            MTEST_CHECK(p1[0] == p1[1] && p2[0] == p2[1] && p1[0] == p2[0],
                        "iteration %d: Lock_all on %d saw a writer: %ld %ld then %ld %ld", it, t, p1[0], p1[1], p2[0],
                        p2[1]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* NOCHECK (nobody locks exclusively meanwhile): a slot only this rank writes, on the
     * next rank */
    for (int it = 0; it < ITERS; it++) {
        long x = 1000L * rank + it;
        int to = (rank + 1) % size;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, to, MPI_MODE_NOCHECK, win));
        MTEST_OK(MPI_Put(&x, 1, MPI_LONG, to, at(to, NOCH + rank % 12), 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(to, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    MTEST_CHECK(mem[PAIR] == 2 * ITERS && mem[PAIR + 1] == 2 * ITERS, "own pair %ld %ld, expected %d each", mem[PAIR],
                mem[PAIR + 1], 2 * ITERS);
    long v;
    check_uniform(mem + BLOCK, &v, "final", ITERS, rank);
    MTEST_CHECK(v == ITERS, "block holds %ld, expected %d", v, ITERS);
    MTEST_CHECK(mem[ALLC] == (long)nall * size, "Lock_all counter %ld, expected %ld", mem[ALLC], (long)nall * size);
    int from = (rank - 1 + size) % size;
    MTEST_CHECK(mem[NOCH + from % 12] == 1000L * from + ITERS - 1, "NOCHECK slot %ld, expected %ld",
                mem[NOCH + from % 12], 1000L * from + ITERS - 1);
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);

    if (dyn) {
        MTEST_OK(MPI_Win_detach(win, mem));
        MTEST_OK(MPI_Win_detach(win, mem + BLOCK + BLK / 2));
    }
    MTEST_OK(MPI_Win_free(&win));
    if (amem)
        MTEST_OK(MPI_Free_mem(mem));
    free(addr);
    free(own);
    free(blk);
    free(blk2);
    return mtest_finalize();
}
