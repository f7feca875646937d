/* Direct one-sided operations on targets of the same node: the window memory of a node's
 * ranks lives in one shared segment every one of them maps, so the origin copies, loads
 * and stores itself and the target's progress is never needed (one-sided operations
 * mapped straight onto the memory system, Huang et al., 'Design Alternatives and
 * Performance Trade-offs for Implementing MPI-2 over InfiniBand', sec. 3.3).
 *
 * Segment: one sync line pair per node rank (passive-target lock word, accumulate lock),
 * then, page aligned, the node ranks' parts in window-rank order (allocate_shared: back
 * to back as MPI requires; allocate: each part 64-byte aligned). Small accumulates (up to
 * RMA_ATOMIC_MAX elements) on integer types with SUM/MIN/MAX/BAND/BOR/BXOR/REPLACE/NO_OP,
 * and compare-and-swap of a word, are hardware atomics per element; every other (type,
 * op, size) takes the target's accumulate lock and the vectorised kernel, so concurrent
 * accumulates stay atomic per element (MPI-4.1 12.7.1). A target's
 * own progress hook applies remote origins' accumulates and locks through the same
 * atomics and lock words (target.c). */
#include "rma_impl.h"

#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../rt/rt.h"

#define RW_EXCL 0x80000000u

int rmpi_rma_stores, rmpi_rma_owed; /* rma.h: what a flush owes for the plain stores below */

struct rmpi_win_sync {
    _Atomic uint32_t rw; /* RW_EXCL, or the number of shared holders */
    char pad0[60];
    _Atomic uint32_t acc;     /* 1 while an accumulate that is not hardware atomics runs */
    _Atomic uint32_t atomics; /* accumulates running as hardware atomics */
    char pad1[56];
};

/* A sense-reversing barrier of the node's ranks, at the head of the segment. */
typedef struct rma_shm_barrier {
    _Atomic uint32_t count, sense;
    char pad[120];
} rma_shm_barrier_t;

/* ---- the node segment ---- */

/* Window ranks' nodes; -1 for processes of other jobs (never mapped together). */
static int node_of(const rmpi_win_t *w, int r) { return rmpi_comm_node_of(w->comm, r); }

static int int_kind(MPI_Datatype t);

/* The size of a window rank's part in map_segment: its window memory */
#define PART_WINDOW SIZE_MAX

/* Map the node's segment: the barrier, one sync line pair per node rank, then, page aligned,
 * the node ranks' parts (al-byte aligned): their window memory (part PART_WINDOW), else part
 * bytes each; off[i]: rank i's part (SIZE_MAX: not on this node). Sets w->shm, w->shm_len,
 * w->nlocal, w->shm_data and w->lsync. */
static int map_segment(rmpi_win_t *w, size_t al, size_t part, size_t *off, const char *what)
{
    int_kind(MPI_INT);                           /* fills the type tables rmpi_rma_direct_small reads */
    (void)rmpi_coll_op_kernel(MPI_SUM, MPI_INT); /* and coll chooses its kernels, not in a timed call */
    int n = w->size, me = w->rank, mynode = node_of(w, me), nloc = 0;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        off[i] = SIZE_MAX;
        if (mynode < 0 ? i != me : node_of(w, i) != mynode)
            continue;
        nloc++;
        off[i] = total;
        total += ((part == PART_WINDOW ? w->peers[i].size : part) + al - 1) / al * al;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t head = (sizeof(rma_shm_barrier_t) + (size_t)nloc * sizeof(rmpi_win_sync_t) + pg - 1) / pg * pg;
    size_t len = head + (total + pg - 1) / pg * pg;
    void *p;
    if (rmpi_comm_node_segment(w->comm, len, RMA_TAG_SETUP, what, 0, &p))
        return MPI_ERR_NO_MEM;
    w->shm = p;
    w->shm_len = len;
    w->nlocal = nloc;
    w->shm_data = (char *)p + head;
    w->lsync = rmpi_xmalloc((size_t)n * sizeof *w->lsync);
    for (int i = 0, k = 0; i < n; i++)
        w->lsync[i] = off[i] == SIZE_MAX ? NULL : (rmpi_win_sync_t *)((rma_shm_barrier_t *)p + 1) + k++;
    return 0;
}

int rma_node_segment(rmpi_win_t *w, int packed, int direct)
{
    size_t *off = rmpi_xmalloc((size_t)w->size * sizeof *off);
    if (map_segment(w, packed ? 1 : 64, PART_WINDOW, off,
                    "Win_allocate falls back to private memory, Win_allocate_shared fails")) {
        free(off);
        return MPI_ERR_NO_MEM;
    }
    w->base = w->shm_data + off[w->rank];
    if (direct) {
        w->dptr = rmpi_xmalloc((size_t)w->size * sizeof *w->dptr);
        w->dsync = rmpi_xmalloc((size_t)w->size * sizeof *w->dsync);
        for (int i = 0; i < w->size; i++) {
            w->dptr[i] = off[i] == SIZE_MAX ? NULL : w->shm_data + off[i];
            w->dsync[i] = w->lsync[i];
        }
        w->all_direct = w->nlocal == w->size;
    } else { /* the lock words of targets reached by messages are the lock manager's (rma_node_locks) */
        free(w->lsync);
        w->lsync = NULL;
    }
    free(off);
    return 0;
}

/* A node rank's MPI_Alloc_mem file mapped here (rma_share_t), at the window's first byte;
 * NULL when it cannot be opened (another user's process, /proc mounted hidepid), is not
 * the file that was named (its inode) or does not hold the window. */
static char *map_peer(const rma_share_t *s, uint64_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)s->pid, (int)s->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), lo = s->off / pg * pg;
    struct stat st;
    void *m = MAP_FAILED;
    if (!fstat(fd, &st) && (uint64_t)st.st_ino == s->ino && (uint64_t)st.st_size == s->flen && s->off <= s->flen &&
        size <= s->flen - s->off)
        m = mmap(NULL, (size_t)((s->off - lo + size + pg - 1) / pg * pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 (off_t)lo);
    close(fd);
    return m == MAP_FAILED ? NULL : (char *)m + (s->off - lo);
}

void rma_node_map(rmpi_win_t *w, const rma_share_t *sh)
{
    /* alone on the node: nobody maps our memory, and a target that thinks itself direct
     * applies other nodes' accumulates as atomics and turns their short messages down */
    if (!w->lsync || w->nlocal < 2)
        return;
    int n = w->size, any = 0;
    w->dptr = rmpi_xcalloc((size_t)n, sizeof *w->dptr);
    w->dsync = rmpi_xcalloc((size_t)n, sizeof *w->dsync);
    for (int t = 0; t < n; t++) {
        if (!w->lsync[t] || sh[t].fd < 0 || !w->peers[t].size)
            continue;
        w->dptr[t] = t == w->rank ? (char *)w->base : map_peer(&sh[t], w->peers[t].size);
        if (w->dptr[t]) {
            w->dsync[t] = w->lsync[t];
            any = 1;
        }
    }
    if (!any) {
        rma_node_unmap(w);
        return;
    }
    int_kind(MPI_INT); /* as map_segment: the tables the short paths read */
    (void)rmpi_coll_op_kernel(MPI_SUM, MPI_INT);
}

void rma_node_unmap(rmpi_win_t *w)
{
    if (w->flavor == MPI_WIN_FLAVOR_CREATE && w->dptr) {
        uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
        for (int t = 0; t < w->size; t++)
            if (w->dptr[t] && t != w->rank) {
                uintptr_t a = (uintptr_t)w->dptr[t], lo = a / pg * pg;
                munmap((void *)lo, (size_t)((a - lo + w->peers[t].size + pg - 1) / pg * pg));
            }
    }
    free(w->dptr);
    free(w->dsync);
    w->dptr = NULL;
    w->dsync = NULL;
}

/* A dynamic window rank's attached regions as origins of its node read them before they
 * write or read its memory by cross-memory attach: a sequence lock with one writer, the
 * owner (seq odd while it rewrites the table). n past RMA_RTAB_MAX: more regions than the
 * table holds, so origins use messages (the owner's own check, target.c). */
#define RMA_RTAB_MAX 31
/* an origin's memo of rma_rtab_covers: [lo, hi) was covered while the table's seq was seq */
struct rma_rtab_hit {
    uint64_t seq, lo, hi;
};
struct rma_rtab {
    _Atomic uint64_t seq;
    _Atomic uint32_t n;
    uint32_t pad;
    struct {
        _Atomic uint64_t base, len;
    } r[RMA_RTAB_MAX];
};

int rma_node_locks(rmpi_win_t *w)
{
    int dyn = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    size_t *off = rmpi_xmalloc((size_t)w->size * sizeof *off);
    int rc = map_segment(w, 64, dyn ? sizeof(struct rma_rtab) : 0, off,
                         dyn ? "dynamic windows' locks and accesses go through messages"
                             : "Win_create's passive-target locks go through messages");
    if (!rc && dyn) {
        w->rtab = rmpi_xmalloc((size_t)w->size * sizeof *w->rtab);
        w->rtab_hit = rmpi_xmalloc((size_t)w->size * sizeof *w->rtab_hit);
        for (int i = 0; i < w->size; i++) {
            w->rtab[i] = off[i] == SIZE_MAX ? NULL : (struct rma_rtab *)(void *)(w->shm_data + off[i]);
            w->rtab_hit[i] = (struct rma_rtab_hit){.seq = 1}; /* odd: no table reads so */
        }
    }
    free(off);
    return rc;
}

void rma_rtab_publish(rmpi_win_t *w)
{
    struct rma_rtab *t = w->rtab ? w->rtab[w->rank] : NULL;
    if (!t)
        return;
    uint64_t s = atomic_load_explicit(&t->seq, memory_order_relaxed);
    atomic_store_explicit(&t->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* odd before any entry changes */
    int n = w->regions.n > RMA_RTAB_MAX ? RMA_RTAB_MAX + 1 : w->regions.n;
    for (int i = 0; i < n && i < RMA_RTAB_MAX; i++) {
        atomic_store_explicit(&t->r[i].base, w->regions.r[i].addr, memory_order_relaxed);
        atomic_store_explicit(&t->r[i].len, w->regions.r[i].len, memory_order_relaxed);
    }
    atomic_store_explicit(&t->n, (uint32_t)n, memory_order_relaxed);
    atomic_store_explicit(&t->seq, s + 2, memory_order_release);
}

/* Whether [a, a + len) lies in t's attached regions, following regions that touch each
 * other as target.c's check does; 0 too when the table is being rewritten for long or holds
 * too few regions (the caller then sends a message, which the target checks). */
int rma_rtab_covers(const rmpi_win_t *w, int t, uint64_t a, uint64_t len)
{
    const struct rma_rtab *rt = w->rtab ? w->rtab[t] : NULL;
    uint64_t b = a + len;
    if (!rt || b < a)
        return 0;
    /* the run of regions found last, while the table has not changed since (its seq moves
     * on with every rewrite): a loop of puts to one region reads one word (callgrind, rank
     * 0, put_lat 64 KiB: 70 -> 16 instructions a put) */
    struct rma_rtab_hit *hit = &w->rtab_hit[t];
    uint64_t s0 = atomic_load_explicit(&rt->seq, memory_order_acquire);
    if (s0 == hit->seq && a >= hit->lo && b <= hit->hi)
        return 1;
    for (int tries = 0; tries < 64; tries++) {
        uint64_t s1 = atomic_load_explicit(&rt->seq, memory_order_acquire);
        if (s1 & 1) {
            sched_yield();
            continue;
        }
        uint32_t n = atomic_load_explicit(&rt->n, memory_order_relaxed);
        int ok = 0;
        uint64_t lo = 0, at = a;
        if (n <= RMA_RTAB_MAX) {
            for (uint32_t step = 0; step <= n && !ok; step++) {
                uint32_t i = 0;
                uint64_t rb = 0, rl = 0;
                for (; i < n; i++) {
                    rb = atomic_load_explicit(&rt->r[i].base, memory_order_relaxed);
                    rl = atomic_load_explicit(&rt->r[i].len, memory_order_relaxed);
                    if (at >= rb && at - rb < rl)
                        break;
                }
                if (i == n)
                    break;
                lo = step ? lo : rb;
                at = rb + rl;
                ok = b <= at;
            }
        }
        atomic_thread_fence(memory_order_acquire); /* the entries read before seq again */
        if (atomic_load_explicit(&rt->seq, memory_order_relaxed) != s1)
            continue;
        if (ok)
            *hit = (struct rma_rtab_hit){s1, lo, at};
        return ok;
    }
    return 0;
}

int rma_node_barrier(rmpi_win_t *w)
{
    if (!w->all_direct)
        return 0;
    rma_shm_barrier_t *b = w->shm;
    uint32_t sense = w->bar_sense = !w->bar_sense;
    if (atomic_fetch_add(&b->count, 1) == (uint32_t)w->size - 1) {
        atomic_store(&b->count, 0);
        atomic_store(&b->sense, sense);
    } else {
        /* progress while waiting: other windows' messages and our own pending sends */
        unsigned idle = 0;
        while (atomic_load(&b->sense) != sense)
            rmpi_core_wait_step(&idle);
    }
    return 1;
}

/* ---- lock words ---- */

int rma_rw_try(rmpi_win_sync_t *s, int excl)
{
    uint32_t v = 0;
    if (excl)
        return atomic_compare_exchange_strong(&s->rw, &v, RW_EXCL);
    v = atomic_load(&s->rw);
    while (!(v & RW_EXCL))
        if (atomic_compare_exchange_weak(&s->rw, &v, v + 1))
            return 1;
    return 0;
}

void rma_rw_lock(rmpi_win_sync_t *s, int excl)
{
    /* progress while waiting: the holder may be a remote origin whose unlock this
     * process's progress hook must handle */
    unsigned idle = 0;
    while (!rma_rw_try(s, excl))
        rmpi_core_wait_step(&idle);
}

void rma_rw_release(rmpi_win_sync_t *s, int excl)
{
    if (excl) /* a release store, a plain one on x86: the next holder's compare-exchange orders it */
        atomic_store_explicit(&s->rw, 0, memory_order_release);
    else
        atomic_fetch_sub(&s->rw, 1);
}

/* The accumulate lock excludes other locked accumulates and the atomic ones: a large
 * accumulate runs the vectorised kernel on plain memory, which element atomics of a
 * concurrent small one must not interleave with. Atomic ones announce themselves in
 * `atomics` and then check `acc`; the lock is set and then waits for `atomics` to drain
 * (both sequentially consistent, so one of the two always sees the other). */
static void spin(unsigned *spins)
{
    if (++*spins > 64)
        sched_yield(); /* the holder may be descheduled when ranks outnumber cores */
}

static void acc_lock(rmpi_win_sync_t *s)
{
    unsigned spins = 0;
    while (atomic_exchange(&s->acc, 1))
        spin(&spins);
    while (atomic_load(&s->atomics))
        spin(&spins);
}

/* a release store, a plain one on x86: the exchange that took the lock was the full barrier */
static void acc_unlock(rmpi_win_sync_t *s) { atomic_store_explicit(&s->acc, 0, memory_order_release); }

static void atomics_enter(rmpi_win_sync_t *s)
{
    unsigned spins = 0;
    for (;;) {
        atomic_fetch_add(&s->atomics, 1);
        if (!atomic_load(&s->acc))
            return;
        atomic_fetch_sub(&s->atomics, 1);
        while (atomic_load(&s->acc))
            spin(&spins);
    }
}

static void atomics_leave(rmpi_win_sync_t *s) { atomic_fetch_sub(&s->atomics, 1); }

/* ---- element-wise atomics ---- */

/* predefined handles are 0x200..0x2ff (include/mpi.h): one table lookup per operation */
static signed char kind[256];
unsigned char rma_int_size[256]; /* bytes of the integer types of kind[] */

/* Predefined operations the hardware has as element atomics: a bit per handle above
 * MPI_OP_NULL (include/mpi.h: 0x20..0x5f), filled with the type tables. */
uint64_t rma_atomic_ops;
static int op_atomic(MPI_Op o)
{
    uintptr_t v = (uintptr_t)o - (uintptr_t)MPI_OP_NULL;
    return v < 64 && (rma_atomic_ops >> v & 1);
}

/* 1: signed integer, 2: unsigned (or byte), 0: not an integer type. */
static int int_kind(MPI_Datatype t)
{
    static int ready;
    if (!ready) {
        static const MPI_Op ops[] = {MPI_SUM, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE, MPI_NO_OP};
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            rma_atomic_ops |= 1ull << ((uintptr_t)ops[i] - (uintptr_t)MPI_OP_NULL);
        static const MPI_Datatype sgn[] = {MPI_AINT,     MPI_COUNT,     MPI_OFFSET,  MPI_SHORT,    MPI_INT,
                                           MPI_LONG,     MPI_LONG_LONG, MPI_INTEGER, MPI_INT8_T,   MPI_SIGNED_CHAR,
                                           MPI_INT16_T,  MPI_INT32_T,   MPI_INT64_T, MPI_INTEGER1, MPI_INTEGER2,
                                           MPI_INTEGER4, MPI_INTEGER8};
        static const MPI_Datatype uns[] = {MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG,
                                           MPI_UINT8_T,        MPI_UINT16_T, MPI_UINT32_T,      MPI_UINT64_T,
                                           MPI_UNSIGNED_CHAR,  MPI_BYTE};
        for (size_t i = 0; i < sizeof sgn / sizeof sgn[0]; i++)
            kind[(uintptr_t)sgn[i] & 0xff] = 1;
        for (size_t i = 0; i < sizeof uns / sizeof uns[0]; i++)
            kind[(uintptr_t)uns[i] & 0xff] = 2;
        for (int i = 0; i < 256; i++)
            if (kind[i])
                rma_int_size[i] = (unsigned char)rmpi_dtype_size(rmpi_dtype_get((MPI_Datatype)(uintptr_t)(0x200 + i)));
        ready = 1;
    }
    uintptr_t h = (uintptr_t)t;
    return h >= 0x200 && h <= 0x2ff ? kind[h & 0xff] : 0;
}

void rma_int_tables(void) { (void)int_kind(MPI_INT); }

int rma_int_kind(MPI_Datatype t) { return int_kind(t); }

#define AT_RMW(T, ST)                                                                                 \
    static T at_rmw_##T(_Atomic T *a, T v, MPI_Op op, int sgn)                                        \
    {                                                                                                 \
        if (op == MPI_SUM)                                                                            \
            return atomic_fetch_add(a, v);                                                            \
        if (op == MPI_BAND)                                                                           \
            return atomic_fetch_and(a, v);                                                            \
        if (op == MPI_BOR)                                                                            \
            return atomic_fetch_or(a, v);                                                             \
        if (op == MPI_BXOR)                                                                           \
            return atomic_fetch_xor(a, v);                                                            \
        if (op == MPI_REPLACE)                                                                        \
            return atomic_exchange(a, v);                                                             \
        T old = atomic_load(a);                                                                       \
        while (op != MPI_NO_OP) { /* MIN, MAX: replace while the new value wins */                    \
            int lt = sgn == 1 ? (ST)v < (ST)old : v < old, gt = sgn == 1 ? (ST)v > (ST)old : v > old; \
            if (!(op == MPI_MIN ? lt : gt) || atomic_compare_exchange_weak(a, &old, v))               \
                break;                                                                                \
        }                                                                                             \
        return old;                                                                                   \
    }                                                                                                 \
    static T at_cas_##T(_Atomic T *a, T v, T cmp)                                                     \
    {                                                                                                 \
        atomic_compare_exchange_strong(a, &cmp, v);                                                   \
        return cmp;                                                                                   \
    }
AT_RMW(uint8_t, int8_t)
AT_RMW(uint16_t, int16_t)
AT_RMW(uint32_t, int32_t)
AT_RMW(uint64_t, int64_t)

/* The same operations as plain loads and stores, for n elements under the accumulate
 * lock (a few elements: the reduction kernel's dispatch would cost more than they do). */
#define PLAIN_RMW(T, ST)                                                                   \
    static void plain_##T(char *p, size_t n, MPI_Op op, int sgn, const char *v, char *out) \
    {                                                                                      \
        for (size_t i = 0; i < n; i++) {                                                   \
            T a, x = 0, r;                                                                 \
            memcpy(&a, p + i * sizeof a, sizeof a);                                        \
            if (op != MPI_NO_OP)                                                           \
                memcpy(&x, v + i * sizeof x, sizeof x);                                    \
            if (out)                                                                       \
                memcpy(out + i * sizeof a, &a, sizeof a);                                  \
            if (op == MPI_SUM)                                                             \
                r = (T)(a + x);                                                            \
            else if (op == MPI_BAND)                                                       \
                r = a & x;                                                                 \
            else if (op == MPI_BOR)                                                        \
                r = a | x;                                                                 \
            else if (op == MPI_BXOR)                                                       \
                r = a ^ x;                                                                 \
            else if (op == MPI_REPLACE)                                                    \
                r = x;                                                                     \
            else if (op == MPI_MIN)                                                        \
                r = (sgn == 1 ? (ST)x < (ST)a : x < a) ? x : a;                            \
            else if (op == MPI_MAX)                                                        \
                r = (sgn == 1 ? (ST)x > (ST)a : x > a) ? x : a;                            \
            else                                                                           \
                continue;                                                                  \
            memcpy(p + i * sizeof r, &r, sizeof r);                                        \
        }                                                                                  \
    }
PLAIN_RMW(uint8_t, int8_t)
PLAIN_RMW(uint16_t, int16_t)
PLAIN_RMW(uint32_t, int32_t)
PLAIN_RMW(uint64_t, int64_t)

/* One element at p (es bytes, aligned): *p = v op *p; old value to out (may be NULL).
 * cmp != NULL: compare-and-swap instead. */
static void at_elem(char *p, size_t es, int sgn, MPI_Op op, const void *v, const void *cmp, void *out)
{
#define AT_DO(T)                                                                                             \
    do {                                                                                                     \
        T x, c = 0, o;                                                                                       \
        memcpy(&x, v, sizeof x);                                                                             \
        if (cmp)                                                                                             \
            memcpy(&c, cmp, sizeof c);                                                                       \
        o = cmp ? at_cas_##T((_Atomic T *)(void *)p, x, c) : at_rmw_##T((_Atomic T *)(void *)p, x, op, sgn); \
        if (out)                                                                                             \
            memcpy(out, &o, sizeof o);                                                                       \
    } while (0)
    switch (es) {
    case 1: AT_DO(uint8_t); break;
    case 2: AT_DO(uint16_t); break;
    case 4: AT_DO(uint32_t); break;
    default: AT_DO(uint64_t); break;
    }
#undef AT_DO
}

/* Up to this many elements an accumulate runs as element atomics; past it the lock and
 * the vectorised kernel are faster (a locked add costs about as much as a lock). */
#define RMA_ATOMIC_MAX 32

/* Whether (type, op) on these segments can run as per-element hardware atomics. */
static int atomic_ok(MPI_Datatype basic, size_t es, MPI_Op op, const char *base, const rma_seg_t *segs, uint32_t nseg,
                     size_t bytes)
{
    if (!int_kind(basic) || (es != 1 && es != 2 && es != 4 && es != 8) || bytes / es > RMA_ATOMIC_MAX || !op_atomic(op))
        return 0;
    for (uint32_t i = 0; i < nseg; i++) /* a misaligned element would be a split lock */
        if ((uintptr_t)(base + segs[i].off) % es || segs[i].len % es)
            return 0;
    return 1;
}

/* memmove, except where the destination is 1..63 bytes past the source modulo a page: the
 * string instruction glibc copies medium sizes with then runs about 20 times slower (64
 * KiB: 90 us instead of 4; a malloc'd buffer 16 bytes into its page against a window at a
 * page start is that case), and 256-byte copies the compiler inlines are not affected. */
static void copy(char *d, const char *s, size_t n)
{
    size_t delta = ((uintptr_t)d - (uintptr_t)s) & 4095;
    if (RMPI_LIKELY(n < 2048) || n >= (512 << 10) || !delta || delta >= 64 || (d < s + n && s < d + n)) {
        memmove(d, s, n);
        return;
    }
    size_t i = 0;
    for (; i + 256 <= n; i += 256)
        memcpy(d + i, s + i, 256);
    memcpy(d + i, s + i, n - i);
}

void rma_segs_gather(const char *base, const rma_seg_t *segs, uint32_t nseg, char *out)
{
    for (uint32_t i = 0; i < nseg; i++) {
        copy(out, base + segs[i].off, segs[i].len);
        out += segs[i].len;
    }
}

void rma_segs_scatter(char *base, const rma_seg_t *segs, uint32_t nseg, const char *in)
{
    for (uint32_t i = 0; i < nseg; i++) {
        copy(base + segs[i].off, in, segs[i].len);
        in += segs[i].len;
    }
}

/* An accumulate on one contiguous range under the accumulate lock (the lock taken here).
 * The coll kernel is looked up before the lock (a table read: the kernels are chosen once
 * per process) and loads and stores unaligned, so a target at any displacement and an
 * origin buffer at any address are used in place. */
static void acc_locked(rmpi_win_sync_t *s, char *p, size_t bytes, size_t es, MPI_Op op, MPI_Datatype basic,
                       const void *src, void *result)
{
    rmpi_coll_kernel_t fn = rmpi_coll_op_kernel(op, basic);
    acc_lock(s);
    if (result)
        copy(result, p, bytes);
    if (op == MPI_REPLACE)
        copy(p, src, bytes);
    else if (fn)
        fn(src, p, bytes / es);
    else /* NO_OP (apply does nothing for it) */
        rmpi_coll_op_apply(op, basic, src, p, bytes / es);
    acc_unlock(s);
}

void rma_direct_acc(rmpi_win_sync_t *s, char *base, const rma_seg_t *segs, uint32_t nseg, size_t bytes, MPI_Op op,
                    MPI_Datatype basic, const void *src, void *result)
{
    if (!bytes)
        return;
    size_t es = rmpi_dtype_size(rmpi_dtype_get(basic));
    if (atomic_ok(basic, es, op, base, segs, nseg, bytes)) {
        static const uint64_t none; /* the operand of MPI_NO_OP, never used */
        int sgn = int_kind(basic);
        atomics_enter(s);
        size_t pos = 0;
        for (uint32_t i = 0; i < nseg; i++)
            for (size_t k = 0; k < segs[i].len; k += es, pos += es)
                at_elem(base + segs[i].off + k, es, sgn, op, src ? (const char *)src + pos : (const char *)&none, NULL,
                        result ? (char *)result + pos : NULL);
        atomics_leave(s);
        return;
    }
    if (nseg == 1) {
        acc_locked(s, base + segs[0].off, bytes, es, op, basic, src, result);
        return;
    }
    acc_lock(s);
    if (result)
        rma_segs_gather(base, segs, nseg, result);
    if (op == MPI_REPLACE)
        rma_segs_scatter(base, segs, nseg, src);
    else if (op != MPI_NO_OP) {
        char *tmp = rmpi_xmalloc(bytes);
        rma_segs_gather(base, segs, nseg, tmp);
        rmpi_coll_op_apply(op, basic, src, tmp, bytes / es);
        rma_segs_scatter(base, segs, nseg, tmp);
        free(tmp);
    }
    acc_unlock(s);
}

void rma_direct_cas(rmpi_win_sync_t *s, char *p, size_t es, const void *v, const void *cmp, void *result)
{
    rma_seg_t one = {0, es};
    /* compare-and-swap compares bits: atomic for every type of a hardware word size */
    if (atomic_ok(MPI_BYTE, es, MPI_REPLACE, p, &one, 1, es)) {
        atomics_enter(s);
        at_elem(p, es, 2, MPI_REPLACE, v, cmp, result);
        atomics_leave(s);
        return;
    }
    acc_lock(s);
    memmove(result, p, es);
    if (memcmp(result, cmp, es) == 0)
        memmove(p, v, es);
    acc_unlock(s);
}

/* ---- the origin ---- */

/* The target's window memory mapped here for `bytes` at tdisp displacement units, when an
 * operation may take a short path: a target of this node, an access epoch to it opened by
 * a lock, lock_all or fence (PSCW takes the general path), that target's fence over, and
 * the range inside its window (computed without overflow). NULL: the general path
 * decides, every error included. */
static inline char *direct_at(const rmpi_win_t *w, int t, MPI_Aint tdisp, uint64_t bytes)
{
    if ((unsigned)t >= (unsigned)w->size || !w->dsync || !w->dsync[t] ||
        !(w->lock_all || w->locked[t] || w->fence_open) || rma_fence_gated(w, t) || tdisp < 0)
        return NULL;
    const rmpi_win_peer_t *peer = &w->peers[t];
    uint64_t disp;
    if (__builtin_mul_overflow((uint64_t)tdisp, (uint64_t)peer->disp_unit, &disp) || disp > peer->size ||
        bytes > peer->size - disp)
        return NULL;
    return w->dptr[t] + disp;
}

/* A put (the origin's data to the target) or a get: count elements of a contiguous
 * predefined type (the general path takes the others, and counts whose bytes could
 * overflow; it checks them) */
static inline int direct_copy(rmpi_win_t *w, int put, const void *src, void *dst, MPI_Datatype type, MPI_Count count,
                              int t, MPI_Aint tdisp)
{
    size_t es = rmpi_dtype_predef_contig_size(type);
    if (!es || count <= 0 || count > (MPI_Count)(SIZE_MAX >> 8))
        return 1;
    uint64_t bytes = (uint64_t)count * es;
    char *p = direct_at(w, t, tdisp, bytes);
    if (!p)
        return 1;
    if (put) {
        copy(p, src, bytes);
        rmpi_rma_stores = 1;
    } else {
        rmpi_rma_before_load();
        copy(dst, p, bytes);
    }
    return 0;
}

int rmpi_rma_direct_put(rmpi_win_t *w, const void *buf, MPI_Datatype type, MPI_Count count, int t, MPI_Aint tdisp)
{
    return direct_copy(w, 1, buf, NULL, type, count, t, tdisp);
}

int rmpi_rma_direct_get(rmpi_win_t *w, void *buf, MPI_Datatype type, MPI_Count count, int t, MPI_Aint tdisp)
{
    return direct_copy(w, 0, NULL, buf, type, count, t, tdisp);
}

int rmpi_rma_direct_small(rmpi_win_t *w, const rmpi_rma_op_t *op, MPI_Datatype type, MPI_Count count)
{
    /* the tables are filled by the first int_kind call, made when the segment was mapped */
    uintptr_t h = (uintptr_t)type - RMPI_DTYPE_PREDEF_BASE;
    int sgn = h < 256 ? kind[h] : 0, k = op->kind;
    MPI_Op o = k == RMPI_RMA_CAS ? MPI_REPLACE : op->op;
    if (!sgn || count <= 0 || count > (MPI_Count)(SIZE_MAX >> 8) || !op_atomic(o))
        return 1;
    size_t es = rma_int_size[h], n = (size_t)count;
    char *p = direct_at(w, op->target, op->tdisp, (uint64_t)n * es);
    if (!p)
        return 1;               /* the general path reports the error, or runs it */
    static const uint64_t none; /* the operand of MPI_NO_OP, never used */
    const char *v = o == MPI_NO_OP ? (const char *)&none : op->obuf;
    char *res = op->rbuf;
    rmpi_win_sync_t *s = w->dsync[op->target];
    int misaligned = ((uintptr_t)p & (es - 1)) != 0; /* es: 1, 2, 4 or 8 */
    if (misaligned && k == RMPI_RMA_CAS)
        return 1; /* the general path compares under the lock */
    if (k != RMPI_RMA_CAS)
        rmpi_rma_stores = 1; /* the lock's release is a plain store, so are its updates */
    if (n > RMA_ATOMIC_MAX) {
        acc_locked(s, p, n * es, es, o, type, v, res);
        return 0;
    }
    if (k != RMPI_RMA_CAS) {
        /* plain arithmetic under the lock, one element too: its one locked exchange
         * against three locked instructions for an element atomic (announcing it in
         * `atomics`, the operation, leaving), about 13 ns each here; Open MPI's osc/sm
         * takes its lock for a fetch-and-op as well. A misaligned element would be a
         * split lock. */
        acc_lock(s);
        switch (es) {
        case 1: plain_uint8_t(p, n, o, sgn, v, res); break;
        case 2: plain_uint16_t(p, n, o, sgn, v, res); break;
        case 4: plain_uint32_t(p, n, o, sgn, v, res); break;
        default: plain_uint64_t(p, n, o, sgn, v, res); break;
        }
        acc_unlock(s);
        return 0;
    }
    atomics_enter(s);
    at_elem(p, es, 2, MPI_REPLACE, v, op->cbuf, res);
    atomics_leave(s);
    return 0;
}

int rma_direct_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, const rma_seg_t *segs, uint32_t nseg,
                     size_t tbytes, rmpi_req_t *ureq)
{
    int t = op->target, k = op->kind;
    char *tb = w->dptr[t] + disp;
    rmpi_rma_stores = 1;
    rma_seg_t one = {0, tbytes};
    if (!nseg)
        segs = &one, nseg = 1;
    if (tbytes) {
        int has_o = k == RMPI_RMA_PUT || k == RMPI_RMA_CAS ||
                    ((k == RMPI_RMA_ACC || k == RMPI_RMA_GACC) && op->op != MPI_NO_OP);
        int has_r = k == RMPI_RMA_GET || k == RMPI_RMA_GACC || k == RMPI_RMA_CAS;
        const void *src = NULL;
        void *stmp = NULL, *res = NULL, *rtmp = NULL;
        if (has_o && k != RMPI_RMA_CAS && !rmpi_dtype_is_contig(op->odt, op->ocount)) {
            src = stmp = rmpi_xmalloc(tbytes);
            rmpi_dtype_pack(op->obuf, op->ocount, op->odt, 0, stmp, tbytes);
        } else if (has_o)
            src = k == RMPI_RMA_CAS ? op->obuf : rmpi_dtype_contig_ptr(op->obuf, op->odt);
        if (has_r)
            res = k != RMPI_RMA_CAS && !rmpi_dtype_is_contig(op->rdt, op->rcount)
                      ? (rtmp = rmpi_xmalloc(tbytes))
                      : (k == RMPI_RMA_CAS ? op->rbuf : rmpi_dtype_contig_ptr(op->rbuf, op->rdt));
        switch (k) {
        case RMPI_RMA_PUT: rma_segs_scatter(tb, segs, nseg, src); break;
        case RMPI_RMA_GET: rma_segs_gather(tb, segs, nseg, res); break;
        case RMPI_RMA_CAS: rma_direct_cas(w->dsync[t], tb, tbytes, src, op->cbuf, res); break;
        default: rma_direct_acc(w->dsync[t], tb, segs, nseg, tbytes, op->op, op->tdt->basic, src, res); break;
        }
        if (rtmp) {
            rmpi_dtype_unpack(rtmp, tbytes, op->rbuf, op->rcount, op->rdt, 0);
            free(rtmp);
        }
        free(stmp);
    }
    if (ureq)
        rmpi_req_complete(ureq); /* done at the target already: locally and remotely complete */
    return 0;
}
