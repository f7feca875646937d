/* The same checks on every window flavor: Win_allocate, Win_create, a dynamic window (the
 * memory attached at the target, addressed by absolute address) and Win_allocate_shared
 * (on each node's ranks: with RMPI_TOPO_FAKE_NODES the shared window's target is the
 * node's first rank, the others' the world's rank 0, across the pretend nodes). Each
 * flavor reaches the target by another path (node segment atomics, cross-memory attach or
 * messages, the region table, the shared mapping), so each gets the same checks:
 * - contention from every rank on one target at once: fetch-and-adds of a long (every
 *   fetched value seen once), Get_accumulate of an int (the same), MAX of a long, BXOR of
 *   an unsigned long, sums of a double, a float and a short, MIN of an int, a long counter
 *   incremented by compare-and-swap loops while others add to it with accumulates, and a
 *   16-long sum (the accumulate lock) over elements others fetch-and-add one at a time:
 *   exact totals, bytes around the elements untouched;
 * - flush ordering from every origin at once: data (16 ints, or 6 KiB: past the sizes sent
 *   as messages), flush, then a flag by MPI_REPLACE; the target, polling the flags with
 *   fetch-and-op NO_OP, must find an origin's data complete as soon as its flag shows;
 * Win_create_mem: Win_create over MPI_Alloc_mem memory on even ranks, malloc'd on odd ones
 * (RailMPI maps the former on its node: direct loads, stores and atomics), the same checks.
 * - windows of 0 bytes on every rank and on odd ranks only (dynamic: nothing attached, or
 *   attached on even ranks only), in fence, lock, lock_all + flush and PSCW epochs with
 *   operations of no elements; MPI_WIN_SIZE says 0; one element to a 0-byte target is
 *   MPI_ERR_RMA_RANGE (at the call, or at the flush for a dynamic window) and the window
 *   still works afterwards. */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ALLOCATE, CREATE, DYNAMIC, SHARED, CREATE_MEM, NFLAVOR };
static const char *const fname[NFLAVOR] = {"Win_allocate", "Win_create", "dynamic", "Win_allocate_shared",
                                           "Win_create_mem"};
/* Win_create_mem: Win_create over MPI_Alloc_mem memory on even ranks (mapped by the node's
 * origins: their operations are direct, while those of other nodes are messages the target
 * applies with the same atomics) and over malloc'd memory on odd ranks */
static void *wmem(int rank, MPI_Aint bytes)
{
    void *p = NULL;
    if (rank % 2 == 0)
        MTEST_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &p));
    else
        p = calloc((size_t)bytes + 1, 1);
    return p;
}
static void wmem_free(int rank, void *p)
{
    if (rank % 2 == 0)
        MTEST_OK(MPI_Free_mem(p));
    else
        free(p);
}

#define ROUNDS 100
#define VEC 16       /* longs: an accumulate this long takes the lock, not element atomics */
#define K_SMALL 16   /* ints of a small flush-order block */
#define K_LARGE 1536 /* ints (6 KiB) of a large one */

/* Layout of the contention area (bytes from the window's start). */
enum {
    O_FOP = 0,   /* long: fetch-and-add */
    O_MAX = 8,   /* long: MPI_MAX */
    O_BXOR = 16, /* unsigned long: MPI_BXOR */
    O_DSUM = 24, /* double: MPI_SUM */
    O_CAS = 32,  /* long: compare-and-swap loops and accumulates */
    O_GACC = 40, /* int: Get_accumulate MPI_SUM */
    O_MIN = 44,  /* int: MPI_MIN */
    O_FSUM = 48, /* float: MPI_SUM */
    O_SSUM = 52, /* short: MPI_SUM; 54-55 must stay 0 */
    O_VEC = 56,  /* VEC longs */
    O_END = O_VEC + VEC * 8,
    AREA = 256
};

typedef struct fwin {
    int flavor;
    MPI_Comm comm; /* WORLD, or the node's ranks for the shared flavor */
    int rank, size;
    MPI_Win win;
    char *mem;      /* this rank's window memory */
    MPI_Aint tbase; /* displacement of the target's byte 0 (dynamic: its address) */
} fwin_t;

/* A window of `bytes` on every rank of the flavor's communicator; the target is rank 0. */
static void fwin_open(fwin_t *f, int flavor, MPI_Aint bytes, MPI_Comm node)
{
    f->flavor = flavor;
    f->comm = flavor == SHARED ? node : MPI_COMM_WORLD;
    MPI_Comm_rank(f->comm, &f->rank);
    MPI_Comm_size(f->comm, &f->size);
    f->tbase = 0;
    switch (flavor) {
    case ALLOCATE: MTEST_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, f->comm, &f->mem, &f->win)); break;
    case SHARED: MTEST_OK(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, f->comm, &f->mem, &f->win)); break;
    case CREATE:
        f->mem = calloc((size_t)bytes, 1);
        MTEST_OK(MPI_Win_create(f->mem, bytes, 1, MPI_INFO_NULL, f->comm, &f->win));
        break;
    case CREATE_MEM:
        f->mem = wmem(f->rank, bytes);
        MTEST_OK(MPI_Win_create(f->mem, bytes, 1, MPI_INFO_NULL, f->comm, &f->win));
        break;
    default: {
        f->mem = calloc((size_t)bytes, 1);
        MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, f->comm, &f->win));
        MTEST_OK(MPI_Win_attach(f->win, f->mem, bytes));
        MPI_Aint a;
        MPI_Get_address(f->mem, &a);
        MPI_Bcast(&a, 1, MPI_AINT, 0, f->comm);
        f->tbase = a;
    }
    }
    memset(f->mem, 0, (size_t)bytes);
    MPI_Barrier(f->comm);
}

static void fwin_close(fwin_t *f)
{
    MPI_Barrier(f->comm);
    if (f->flavor == DYNAMIC)
        MTEST_OK(MPI_Win_detach(f->win, f->mem));
    MTEST_OK(MPI_Win_free(&f->win));
    if (f->flavor == CREATE || f->flavor == DYNAMIC)
        free(f->mem);
    if (f->flavor == CREATE_MEM)
        wmem_free(f->rank, f->mem);
}

/* Every fetched value of 0 .. size * ROUNDS - 1 exactly once (checked on rank 0). */
static void distinct(fwin_t *f, const long *got, const char *what)
{
    long total = (long)f->size * ROUNDS;
    long *all = f->rank == 0 ? malloc((size_t)total * sizeof(long)) : NULL;
    MPI_Gather(got, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, 0, f->comm);
    if (f->rank == 0) {
        char *seen = calloc((size_t)total, 1);
        int bad = 0;
        for (long i = 0; i < total; i++) {
            if (all[i] < 0 || all[i] >= total || seen[all[i]])
                bad++;
            else
                seen[all[i]] = 1;
        }
        MTEST_CHECK(!bad, "%s: %s: %d fetched values out of range or seen twice", fname[f->flavor], what, bad);
        free(seen);
    }
    free(all);
}

static void contention(fwin_t *f)
{
    MPI_Win w = f->win;
    MPI_Aint b = f->tbase;
    long one = 1, got[ROUNDS], gacc[ROUNDS];
    int ione = 1;
    MTEST_OK(MPI_Win_lock_all(0, w));
    for (int i = 0; i < ROUNDS; i++) {
        long v = (long)f->rank * ROUNDS + i, old;
        MTEST_OK(MPI_Fetch_and_op(&one, &got[i], MPI_LONG, 0, b + O_FOP, MPI_SUM, w));
        int iold;
        MTEST_OK(MPI_Get_accumulate(&ione, 1, MPI_INT, &iold, 1, MPI_INT, 0, b + O_GACC, 1, MPI_INT, MPI_SUM, w));
        MTEST_OK(MPI_Accumulate(&v, 1, MPI_LONG, 0, b + O_MAX, 1, MPI_LONG, MPI_MAX, w));
        unsigned long bit = 1UL << ((f->rank * 7 + i) % 61);
        MTEST_OK(MPI_Accumulate(&bit, 1, MPI_UNSIGNED_LONG, 0, b + O_BXOR, 1, MPI_UNSIGNED_LONG, MPI_BXOR, w));
        double d = 0.5;
        MTEST_OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, b + O_DSUM, 1, MPI_DOUBLE, MPI_SUM, w));
        int neg = -(int)v;
        MTEST_OK(MPI_Accumulate(&neg, 1, MPI_INT, 0, b + O_MIN, 1, MPI_INT, MPI_MIN, w));
        float fl = 1.0f;
        float fold;
        MTEST_OK(MPI_Fetch_and_op(&fl, &fold, MPI_FLOAT, 0, b + O_FSUM, MPI_SUM, w));
        short s = 1, sold;
        MTEST_OK(MPI_Fetch_and_op(&s, &sold, MPI_SHORT, 0, b + O_SSUM, MPI_SUM, w));
        long ones[VEC];
        for (int k = 0; k < VEC; k++)
            ones[k] = 1;
        MTEST_OK(MPI_Accumulate(ones, VEC, MPI_LONG, 0, b + O_VEC, VEC, MPI_LONG, MPI_SUM, w));
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, b + O_VEC + 8 * (i % VEC), MPI_SUM, w));
        MTEST_OK(MPI_Win_flush(0, w));
        gacc[i] = iold;
        /* one increment by compare-and-swap, racing the others' and their accumulates */
        long seen, want;
        MTEST_OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG, 0, b + O_CAS, MPI_NO_OP, w));
        MTEST_OK(MPI_Win_flush(0, w));
        for (;;) {
            want = seen + 1;
            MTEST_OK(MPI_Compare_and_swap(&want, &seen, &old, MPI_LONG, 0, b + O_CAS, w));
            MTEST_OK(MPI_Win_flush(0, w));
            if (old == seen)
                break;
            seen = old;
        }
        MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, b + O_CAS, 1, MPI_LONG, MPI_SUM, w));
    }
    MTEST_OK(MPI_Win_unlock_all(w));
    distinct(f, got, "fetch-and-add of a long");
    distinct(f, gacc, "Get_accumulate of an int");
    MPI_Barrier(f->comm);
    if (f->rank == 0) {
        const char *fl = fname[f->flavor];
        long n = (long)f->size * ROUNDS;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
        MTEST_OK(MPI_Win_sync(w));
        long l;
        unsigned long ul = 0, want = 0;
        double d;
        int iv;
        float fv;
        short sv;
        memcpy(&l, f->mem + O_FOP, 8);
        MTEST_CHECK(l == n, "%s: fetch-and-add counter %ld, expected %ld", fl, l, n);
        memcpy(&l, f->mem + O_MAX, 8);
        MTEST_CHECK(l == n - 1, "%s: max %ld, expected %ld", fl, l, n - 1);
        for (int r = 0; r < f->size; r++)
            for (int i = 0; i < ROUNDS; i++)
                want ^= 1UL << ((r * 7 + i) % 61);
        memcpy(&ul, f->mem + O_BXOR, 8);
        MTEST_CHECK(ul == want, "%s: bxor %lx, expected %lx", fl, ul, want);
        memcpy(&d, f->mem + O_DSUM, 8);
        MTEST_CHECK(d == 0.5 * (double)n, "%s: double sum %g, expected %g", fl, d, 0.5 * (double)n);
        memcpy(&l, f->mem + O_CAS, 8);
        MTEST_CHECK(l == 2 * n, "%s: compare-and-swap counter %ld, expected %ld", fl, l, 2 * n);
        memcpy(&iv, f->mem + O_GACC, 4);
        MTEST_CHECK(iv == n, "%s: Get_accumulate counter %d, expected %ld", fl, iv, n);
        memcpy(&iv, f->mem + O_MIN, 4);
        MTEST_CHECK(iv == -(int)(n - 1), "%s: min %d, expected %ld", fl, iv, -(n - 1));
        memcpy(&fv, f->mem + O_FSUM, 4);
        MTEST_CHECK(fv == (float)n, "%s: float sum %g, expected %ld", fl, (double)fv, n);
        memcpy(&sv, f->mem + O_SSUM, 2);
        MTEST_CHECK(sv == (short)n && f->mem[54] == 0 && f->mem[55] == 0, "%s: short sum %d, expected %ld", fl, sv, n);
        for (int k = 0; k < VEC; k++) {
            long exp = n + (long)f->size * (ROUNDS / VEC + (k < ROUNDS % VEC));
            memcpy(&l, f->mem + O_VEC + 8 * k, 8);
            MTEST_CHECK(l == exp, "%s: vector sum %d: %ld, expected %ld", fl, k, l, exp);
        }
        int untouched = 1;
        for (int k = O_END; k < AREA; k++)
            untouched &= f->mem[k] == 0;
        MTEST_CHECK(untouched, "%s: bytes past the elements written", fl);
        MTEST_OK(MPI_Win_unlock(0, w));
    }
    MPI_Barrier(f->comm);
}

/* Every origin puts its block, flushes, then sets its flag; rank 0 polls the flags. */
static void flush_order(fwin_t *f)
{
    if (f->size < 2)
        return;
    MPI_Win w = f->win;
    MPI_Aint flags = f->tbase + AREA, data = flags + 4 * (MPI_Aint)f->size;
    int *block = malloc(K_LARGE * sizeof(int));
    MTEST_OK(MPI_Win_lock_all(0, w));
    for (int round = 1; round <= 20; round++) {
        int k = round % 2 ? K_SMALL : K_LARGE;
        if (f->rank > 0) {
            for (int j = 0; j < k; j++)
                block[j] = round * 100000 + f->rank * 10000 + j;
            MTEST_OK(MPI_Put(block, k, MPI_INT, 0, data + (MPI_Aint)f->rank * K_LARGE * 4, k, MPI_INT, w));
            MTEST_OK(MPI_Win_flush(0, w));
            MTEST_OK(MPI_Accumulate(&round, 1, MPI_INT, 0, flags + 4 * f->rank, 1, MPI_INT, MPI_REPLACE, w));
            MTEST_OK(MPI_Win_flush(0, w));
        } else {
            int *fl = (int *)(void *)(f->mem + AREA), *dat = fl + f->size;
            int left = f->size - 1, dummy = 0;
            char *done = calloc((size_t)f->size, 1);
            while (left) {
                for (int r = 1; r < f->size; r++) {
                    if (done[r])
                        continue;
                    int seen;
                    MTEST_OK(MPI_Fetch_and_op(&dummy, &seen, MPI_INT, 0, flags + 4 * r, MPI_NO_OP, w));
                    MTEST_OK(MPI_Win_flush(0, w));
                    if (seen != round)
                        continue;
                    MTEST_OK(MPI_Win_sync(w));
                    int bad = 0;
                    for (int j = 0; j < k; j++)
                        bad += dat[r * K_LARGE + j] != round * 100000 + r * 10000 + j;
                    MTEST_CHECK(!bad, "%s: round %d: %d of origin %d's %d ints not there after its flag",
                                fname[f->flavor], round, bad, r, k);
                    done[r] = 1, left--;
                }
            }
            free(done);
        }
        MPI_Barrier(f->comm);
    }
    MTEST_OK(MPI_Win_unlock_all(w));
    free(block);
}

/* Windows of 0 bytes: mode 0 on every rank, mode 1 on odd ranks only. */
static void empty(int flavor, int mode, MPI_Comm node)
{
    MPI_Comm comm = flavor == SHARED ? node : MPI_COMM_WORLD;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const char *fl = fname[flavor];
    MPI_Aint bytes = mode == 0 || rank % 2 ? 0 : 2 * sizeof(long);
    long *mem = NULL, region[2] = {0, 0};
    MPI_Win win;
    switch (flavor) {
    case ALLOCATE: MTEST_OK(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, comm, &mem, &win)); break;
    case SHARED: MTEST_OK(MPI_Win_allocate_shared(bytes, sizeof(long), MPI_INFO_NULL, comm, &mem, &win)); break;
    case CREATE:
        mem = bytes ? region : NULL;
        MTEST_OK(MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, comm, &win));
        break;
    case CREATE_MEM:
        mem = bytes ? wmem(rank, bytes) : NULL;
        MTEST_OK(MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, comm, &win));
        break;
    default:
        MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
        if (bytes)
            MTEST_OK(MPI_Win_attach(win, region, bytes)), mem = region;
    }
    MTEST_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint *wsize = NULL;
    void *wbase = NULL;
    int flag = 0;
    if (flavor != DYNAMIC) {
        MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
        MTEST_CHECK(flag && *wsize == bytes, "%s of %ld bytes: MPI_WIN_SIZE %ld", fl, (long)bytes,
                    flag ? (long)*wsize : -1L);
        MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &wbase, &flag));
        MTEST_CHECK(flag && (!bytes || wbase == mem), "%s: MPI_WIN_BASE", fl);
    }
    if (bytes)
        mem[0] = mem[1] = 0;
    /* displacements of every rank's memory (dynamic: its region's address, attached or not) */
    MPI_Aint a = 0, *addr = malloc((size_t)size * sizeof(MPI_Aint));
    if (flavor == DYNAMIC)
        MPI_Get_address(region, &a);
    MPI_Allgather(&a, 1, MPI_AINT, addr, 1, MPI_AINT, comm);
    int t = (rank + 1) % size, ct = (rank + 1) % size;
    long v = 7, r = -1, r2 = -1;
    MPI_Group g, peers;
    MPI_Win_get_group(win, &g);
    int pr[2] = {(rank + 1) % size, (rank - 1 + size) % size};
    MPI_Group_incl(g, size > 1 ? (pr[0] == pr[1] ? 1 : 2) : 1, pr, &peers);
    for (int epoch = 0; epoch < 4; epoch++) {
        if (epoch == 0)
            MTEST_OK(MPI_Win_fence(0, win));
        else if (epoch == 1)
            MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        else if (epoch == 2)
            MTEST_OK(MPI_Win_lock_all(0, win));
        else {
            MTEST_OK(MPI_Win_post(peers, 0, win));
            MTEST_OK(MPI_Win_start(peers, 0, win));
        }
        MTEST_OK(MPI_Put(&v, 0, MPI_LONG, t, addr[t], 0, MPI_LONG, win));
        MTEST_OK(MPI_Get(&r, 0, MPI_LONG, t, addr[t], 0, MPI_LONG, win));
        MTEST_OK(MPI_Accumulate(&v, 0, MPI_LONG, t, addr[t], 0, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Get_accumulate(&v, 0, MPI_LONG, &r2, 0, MPI_LONG, t, addr[t], 0, MPI_LONG, MPI_SUM, win));
        if (epoch == 2)
            MTEST_OK(MPI_Win_flush_all(win));
        if (epoch == 0)
            MTEST_OK(MPI_Win_fence(0, win));
        else if (epoch == 1)
            MTEST_OK(MPI_Win_unlock(t, win));
        else if (epoch == 2)
            MTEST_OK(MPI_Win_unlock_all(win));
        else {
            MTEST_OK(MPI_Win_complete(win));
            MTEST_OK(MPI_Win_wait(win));
        }
    }
    MTEST_CHECK(r == -1 && r2 == -1, "%s: a get of no elements wrote %ld, %ld", fl, r, r2);
    MPI_Barrier(comm);
    /* one element to a rank whose window has no bytes there */
    int et = mode == 0 ? ct : 1; /* mode 1: rank 1 (odd) has none */
    if (et < size && et != rank) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, et, 0, win));
        int rc = MPI_Put(&v, 1, MPI_LONG, et, addr[et], 1, MPI_LONG, win), cls = MPI_SUCCESS;
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(et, win);
        MPI_Error_class(rc, &cls);
        MTEST_CHECK(cls == MPI_ERR_RMA_RANGE, "%s: a put of one long into rank %d's 0 bytes: class %d", fl, et, cls);
        MTEST_OK(MPI_Win_unlock(et, win));
    }
    MPI_Barrier(comm);
    /* the window still works: each rank with bytes gets 5 from its lower neighbour with bytes */
    int from = -1;
    for (int k = 1; k < size && bytes; k++) {
        int q = (rank - k + size) % size;
        if (mode == 1 && q % 2 == 0) {
            from = q;
            break;
        }
    }
    int to = -1; /* the rank whose `from` is this one */
    for (int k = 1; k < size && mode == 1 && rank % 2 == 0; k++) {
        int q = (rank + k) % size;
        if (q % 2 == 0) {
            to = q;
            break;
        }
    }
    MTEST_OK(MPI_Win_lock_all(0, win));
    if (to >= 0 && to != rank) {
        long five = 5 + rank;
        MTEST_OK(MPI_Put(&five, 1, MPI_LONG, to, addr[to] + (flavor == DYNAMIC ? 8 : 1), 1, MPI_LONG, win));
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(comm);
    if (from >= 0 && from != rank) {
        MTEST_OK(MPI_Win_sync(win));
        MTEST_CHECK(mem[1] == 5 + from && mem[0] == 0, "%s: after the error, rank %d's put: %ld %ld", fl, from, mem[0],
                    mem[1]);
    }
    MPI_Barrier(comm);
    MPI_Group_free(&peers);
    MPI_Group_free(&g);
    if (flavor == DYNAMIC && bytes)
        MTEST_OK(MPI_Win_detach(win, region));
    MTEST_OK(MPI_Win_free(&win));
    if (flavor == CREATE_MEM && bytes)
        wmem_free(rank, mem);
    free(addr);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int first = 0, last = NFLAVOR - 1;
    for (int fl = 0; fl < NFLAVOR; fl++)
        if (argc > 1 && !strcmp(argv[1], fname[fl]))
            first = last = fl;
    for (int fl = first; fl <= last; fl++) {
        fwin_t f;
        int wsize;
        MPI_Comm_size(fl == SHARED ? node : MPI_COMM_WORLD, &wsize);
        fwin_open(&f, fl, AREA + 4 * (MPI_Aint)wsize + 4 * (MPI_Aint)wsize * K_LARGE, node);
        contention(&f);
        flush_order(&f);
        fwin_close(&f);
        empty(fl, 0, node);
        empty(fl, 1, node);
    }
    MPI_Comm_free(&node);
    return mtest_finalize();
}
