/* Fence epochs with operations of every kind (fence by markers, docs/wire/rma.md): in each
 * epoch every rank puts 8 B, 2 KiB or 100,000 B (batched messages, one message, RDMA) to
 * the next rank, gets what it put there in the epoch before, accumulates to every rank,
 * fetch-and-adds a counter on rank 0 and compare-and-swaps a slot of the next rank; after
 * each fence every value is checked (two banks of slots by epoch parity, so the checks
 * never read what the next epoch writes). Across epochs, in turn: every rank accumulates
 * into slot X of every rank, one rank puts a value there, nobody touches it (and it is
 * checked); an accumulate overtaken by the put of the next epoch shows up as a wrong value.
 * The first fence asserts MPI_MODE_NOPRECEDE, the last MPI_MODE_NOSUCCEED; run with both
 * window flavors (allocate: direct on one node; create: RDMA). */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define EPOCHS 24
#define BIG 100000
#define REGION 100352                                    /* BIG rounded up to 64 */
#define SLOTS 128                                        /* bytes of long slots before the two put regions */
#define SLOT(k) ((MPI_Aint)(k) * (MPI_Aint)sizeof(long)) /* the window's unit is a byte */
/* bank b (epoch parity): b*4 + 0 accumulated sum, + 1 fetch-and-op counter (rank 0), + 2
 * compare-and-swap; slot X across epochs */
#define ACC(b) (4 * (b))
#define FOP(b) (4 * (b) + 1)
#define CAS(b) (4 * (b) + 2)
#define X 8

static unsigned char pat(int e, int r, size_t i) { return (unsigned char)(e * 31 + r * 7 + i); }

static size_t len_of(int e) { return e % 3 == 0 ? 8 : e % 3 == 1 ? 2048 : BIG; }

static void run(const char *flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Aint bytes = SLOTS + 2 * REGION;
    unsigned char *mem, *own = NULL;
    MPI_Win win;
    if (!strcmp(flavor, "create")) {
        own = mem = malloc((size_t)bytes);
        MTEST_OK(MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else
        MTEST_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (size_t)bytes);
    long *slot = (long *)(void *)mem;
    int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
    unsigned char *out = malloc(BIG), *in = malloc(BIG);
    long one = 1, fetched = -1, cas_old = -1;
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int e = 0; e < EPOCHS; e++) {
        size_t len = len_of(e);
        MPI_Aint mine = SLOTS + (MPI_Aint)(e % 2) * REGION, before = SLOTS + (MPI_Aint)((e + 1) % 2) * REGION;
        for (size_t i = 0; i < len; i++)
            out[i] = pat(e, rank, i);
        MTEST_OK(MPI_Put(out, (int)len, MPI_BYTE, next, mine, (int)len, MPI_BYTE, win));
        size_t plen = e ? len_of(e - 1) : 0;
        memset(in, 0xee, BIG);
        if (plen)
            MTEST_OK(MPI_Get(in, (int)plen, MPI_BYTE, next, before, (int)plen, MPI_BYTE, win));
        long add = rank + 1;
        int b = e % 2;
        long before_b = e / 2; /* epochs of this parity before this one */
        for (int t = 0; t < size; t++)
            MTEST_OK(MPI_Accumulate(&add, 1, MPI_LONG, t, SLOT(ACC(b)), 1, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Fetch_and_op(&one, &fetched, MPI_LONG, 0, SLOT(FOP(b)), MPI_SUM, win));
        long cmp = before_b, nv = before_b + 1;
        MTEST_OK(MPI_Compare_and_swap(&nv, &cmp, &cas_old, MPI_LONG, next, SLOT(CAS(b)), win));
        if (e % 3 == 0)
            for (int t = 0; t < size; t++)
                MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, SLOT(X), 1, MPI_LONG, MPI_SUM, win));
        else if (e % 3 == 1 && rank == (e / 3) % size) {
            long v = 1000 + e;
            for (int t = 0; t < size; t++)
                MTEST_OK(MPI_Put(&v, 1, MPI_LONG, t, SLOT(X), 1, MPI_LONG, win));
        }
        MTEST_OK(MPI_Win_fence(e == EPOCHS - 1 ? MPI_MODE_NOSUCCEED : 0, win));

        long tri = (long)size * (size + 1) / 2;
        MTEST_CHECK(slot[ACC(b)] == tri * (before_b + 1), "%s epoch %d: accumulated %ld, expected %ld", flavor, e,
                    slot[ACC(b)], tri * (before_b + 1));
        if (e % 3 == 1)
            MTEST_CHECK(slot[X] == 1000 + e,
                        "%s epoch %d: slot X is %ld, expected %ld (an accumulate crossed a fence?)", flavor, e, slot[X],
                        1000L + e);
        MTEST_CHECK(fetched >= (long)size * before_b && fetched < (long)size * (before_b + 1),
                    "%s epoch %d: fetch-and-op returned %ld", flavor, e, fetched);
        if (rank == 0)
            MTEST_CHECK(slot[FOP(b)] == (long)size * (before_b + 1), "%s epoch %d: counter %ld", flavor, e,
                        slot[FOP(b)]);
        MTEST_CHECK(cas_old == before_b, "%s epoch %d: compare-and-swap saw %ld", flavor, e, cas_old);
        MTEST_CHECK(slot[CAS(b)] == before_b + 1, "%s epoch %d: compare-and-swap slot is %ld", flavor, e, slot[CAS(b)]);
        size_t bad = len;
        for (size_t i = 0; i < len && bad == len; i++)
            if (mem[mine + (MPI_Aint)i] != pat(e, prev, i))
                bad = i;
        MTEST_CHECK(bad == len, "%s epoch %d: byte %zu of %zu put by rank %d is wrong", flavor, e, bad, len, prev);
        bad = plen;
        for (size_t i = 0; i < plen && bad == plen; i++)
            if (in[i] != pat(e - 1, rank, i))
                bad = i;
        MTEST_CHECK(bad == plen, "%s epoch %d: byte %zu of %zu got back is wrong", flavor, e, bad, plen);
    }
    MTEST_OK(MPI_Win_free(&win));
    free(own);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run("allocate");
    run("create");
    return mtest_finalize();
}
