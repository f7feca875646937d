/* Accumulates as provider atomics (src/rma/atomic.c) mixed with those that stay active
 * messages, on the same target memory in one epoch: MPI orders one origin's accumulates
 * to one target (accumulate_ordering rar,raw,war,waw), whichever path each takes. Run
 * over tcp;ofi_rxm with one rank per fake node (tests/mpi/rma/testlist), where the ints
 * and longs below are libfabric atomics and the MAXLOC pairs, the vector targets and the
 * long doubles are messages the target applies. Every window flavor but shared.
 * - each origin on its own slot of its right neighbour: a chain of REPLACE, MAXLOC, SUM,
 *   Fetch_and_op, vector-typed and plain Get_accumulate, Compare_and_swap, each result
 *   the one its predecessors' order gives, 20 rounds in one lock epoch, then in a fence
 *   epoch and in lock_all;
 * - every rank adds to one counter of rank 0 with Fetch_and_op, every fetched value seen
 *   once, and increments a second one by Compare_and_swap loops while the others
 *   Accumulate into it: exact totals. */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 20
#define FAA 100

enum { SLOT = 16 }; /* longs per origin: [0] and [2] (vector), [4] pair, [6] and [8], [10] and [12] */

static void chain(MPI_Win win, MPI_Datatype vec, int rank, int size, int mode)
{
    int t = (rank + 1) % size;
    MPI_Aint base = (MPI_Aint)rank * SLOT; /* my slot on t, in longs (disp_unit sizeof(long)) */
    for (int i = 0; i < ROUNDS; i++) {
        long v = 1000 * rank + i, got = -1, one = 1, inc[2] = {1, 0}, pv[2] = {-1, -1};
        int pair[2] = {(int)(v % 97), rank}, pgot[2] = {-1, -1};
        /* [0]: REPLACE (native), +1 through the vector (message), fetch-and-add (native) */
        MTEST_OK(MPI_Accumulate(&v, 1, MPI_LONG, t, base, 1, MPI_LONG, MPI_REPLACE, win));
        MTEST_OK(MPI_Accumulate(inc, 2, MPI_LONG, t, base, 1, vec, MPI_SUM, win));
        MTEST_OK(MPI_Fetch_and_op(&one, &got, MPI_LONG, t, base, MPI_SUM, win));
        /* [4]: an int REPLACE (native) under a MAXLOC pair (message), then fetches of both */
        int small = -5, pv0 = -1, addi = 3;
        MTEST_OK(MPI_Accumulate(&small, 1, MPI_INT, t, base + 4, 1, MPI_INT, MPI_REPLACE, win));
        MTEST_OK(MPI_Accumulate(pair, 1, MPI_2INT, t, base + 4, 1, MPI_2INT, MPI_MAXLOC, win));
        MTEST_OK(MPI_Fetch_and_op(&addi, &pv0, MPI_INT, t, base + 4, MPI_SUM, win));
        MTEST_OK(MPI_Get_accumulate(NULL, 0, MPI_2INT, pgot, 1, MPI_2INT, t, base + 4, 1, MPI_2INT, MPI_NO_OP, win));
        /* [6], [8]: REPLACE each (native), read back through the vector (message) */
        long neg = -v;
        MTEST_OK(MPI_Accumulate(&v, 1, MPI_LONG, t, base + 6, 1, MPI_LONG, MPI_REPLACE, win));
        MTEST_OK(MPI_Accumulate(&neg, 1, MPI_LONG, t, base + 8, 1, MPI_LONG, MPI_REPLACE, win));
        MTEST_OK(MPI_Get_accumulate(NULL, 0, MPI_LONG, pv, 2, MPI_LONG, t, base + 6, 1, vec, MPI_NO_OP, win));
        /* [10]: compare-and-swap (native) against the value a message just put there */
        long cmp = v + 1, nw = v + 2, cgot = -1, seed[2] = {v + 1, 0}, last = -1;
        MTEST_OK(MPI_Accumulate(seed, 2, MPI_LONG, t, base + 10, 1, vec, MPI_REPLACE, win));
        MTEST_OK(MPI_Compare_and_swap(&nw, &cmp, &cgot, MPI_LONG, t, base + 10, win));
        MTEST_OK(MPI_Fetch_and_op(NULL, &last, MPI_LONG, t, base + 10, MPI_NO_OP, win));
        if (mode == 0)
            MTEST_OK(MPI_Win_flush(t, win));
        else if (mode == 1)
            MTEST_OK(MPI_Win_fence(0, win));
        else
            MTEST_OK(MPI_Win_flush_all(win));
        MTEST_CHECK(got == v + 1, "mode %d round %d: fetched %ld after REPLACE %ld and a message's +1", mode, i, got,
                    v);
        MTEST_CHECK(pv0 == pair[0], "mode %d round %d: MAXLOC gave %d, expected %d", mode, i, pv0, pair[0]);
        MTEST_CHECK(pgot[0] == pair[0] + 3 && pgot[1] == rank, "mode %d round %d: pair (%d, %d), expected (%d, %d)",
                    mode, i, pgot[0], pgot[1], pair[0] + 3, rank);
        MTEST_CHECK(pv[0] == v && pv[1] == -v, "mode %d round %d: vector read %ld %ld, expected %ld %ld", mode, i,
                    pv[0], pv[1], v, -v);
        MTEST_CHECK(cgot == v + 1 && last == v + 2, "mode %d round %d: CAS saw %ld then %ld, expected %ld, %ld", mode,
                    i, cgot, last, v + 1, v + 2);
    }
}

static void contention(MPI_Win win, long *mem, int rank, int size)
{
    long seen[FAA], one = 1;
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < FAA; i++) {
        MTEST_OK(MPI_Fetch_and_op(&one, &seen[i], MPI_LONG, 0, 0, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(0, win));
        if (rank % 2 == 0) { /* a CAS loop on [1] */
            long old = 0, cur;
            do {
                cur = old;
                long nw = cur + 1;
                MTEST_OK(MPI_Compare_and_swap(&nw, &cur, &old, MPI_LONG, 0, 1, win));
                MTEST_OK(MPI_Win_flush(0, win));
            } while (old != cur);
        } else {
            MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win));
        }
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    long *all = rank == 0 ? malloc(sizeof(long) * FAA * (size_t)size) : NULL;
    MPI_Gather(seen, FAA, MPI_LONG, all, FAA, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *hit = calloc((size_t)(FAA * size), 1);
        for (int i = 0; i < FAA * size; i++) {
            MTEST_CHECK(all[i] >= 0 && all[i] < FAA * size && !hit[all[i]], "fetched value %ld twice or out of range",
                        all[i]);
            if (all[i] >= 0 && all[i] < FAA * size)
                hit[all[i]] = 1;
        }
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MTEST_CHECK(mem[0] == FAA * size, "counter %ld, expected %d", mem[0], FAA * size);
        MTEST_CHECK(mem[1] == FAA * size, "CAS/accumulate counter %ld, expected %d", mem[1], FAA * size);
        MTEST_OK(MPI_Win_unlock(0, win));
        free(hit);
        free(all);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype vec; /* two longs with one between: not contiguous, so always a message */
    MPI_Type_vector(2, 1, 2, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    size_t bytes = (size_t)size * SLOT * sizeof(long);
    for (int flavor = 0; flavor < 3; flavor++) {
        long *mem = NULL;
        MPI_Win win;
        if (flavor == 0) {
            MTEST_OK(MPI_Win_allocate((MPI_Aint)bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            mem = calloc(1, bytes);
            if (flavor == 1) {
                MTEST_OK(MPI_Win_create(mem, (MPI_Aint)bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            } else {
                MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
                MTEST_OK(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
            }
        }
        memset(mem, 0, bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        if (flavor == 2) { /* displacements are addresses: chain and contention need them */
            MPI_Aint mine = (MPI_Aint)(uintptr_t)mem, *bases = malloc(sizeof(MPI_Aint) * (size_t)size);
            MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
            /* only the ring part runs on the dynamic window, through its own displacements */
            int t = (rank + 1) % size;
            long v = 42 + rank, got = -1;
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            MTEST_OK(MPI_Accumulate(&v, 1, MPI_LONG, t, bases[t] + rank * SLOT * (MPI_Aint)sizeof(long), 1, MPI_LONG,
                                    MPI_REPLACE, win));
            MTEST_OK(
                MPI_Fetch_and_op(&v, &got, MPI_LONG, t, bases[t] + rank * SLOT * (MPI_Aint)sizeof(long), MPI_SUM, win));
            MTEST_OK(MPI_Win_unlock(t, win));
            MTEST_CHECK(got == v, "dynamic: fetched %ld, expected %ld", got, v);
            free(bases);
        } else {
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, win));
            chain(win, vec, rank, size, 0);
            MTEST_OK(MPI_Win_unlock((rank + 1) % size, win));
            MTEST_OK(MPI_Win_fence(0, win));
            chain(win, vec, rank, size, 1);
            MTEST_OK(MPI_Win_fence(0, win));
            MTEST_OK(MPI_Win_lock_all(0, win));
            chain(win, vec, rank, size, 2);
            MTEST_OK(MPI_Win_unlock_all(win));
            MPI_Barrier(MPI_COMM_WORLD);
            memset(mem, 0, 2 * sizeof(long));
            MPI_Barrier(MPI_COMM_WORLD);
            contention(win, mem, rank, size);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (flavor == 2)
            MTEST_OK(MPI_Win_detach(win, mem));
        MTEST_OK(MPI_Win_free(&win));
        if (flavor)
            free(mem);
    }
    MPI_Type_free(&vec);
    return mtest_finalize();
}
