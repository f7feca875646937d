/* Algorithm choice for the data-movement collectives (gather_sched.h). A knob per
 * collective (RMPI_COLL_GATHER...) forces one algorithm; under auto the crossover sizes are
 * knobs too (RMPI_COLL_GATHER_LARGE...), their defaults measured at 2..8 ranks over shm and
 * tcp on a 2-core machine. */
#include "gather_sched.h"

#include "../rt/rt.h"

/* Index of the knob's value among its choices (0 = auto), parsed once. */
static int forced(const char *knob, const char *value, const char *choices, int *cache)
{
    if (*cache < 0)
        *cache = rmpi_knob_choice(knob, value, choices);
    return *cache;
}

static int is_pow2(int n) { return !(n & (n - 1)); }

int gx_pick_rooted(int scatter, int n, size_t block)
{
    static int knob[2] = {-1, -1};
    static const int alg[] = {-1, GX_BINOMIAL, GX_LINEAR};
    int f = scatter ? forced("COLL_SCATTER", rmpi_knobs.COLL_SCATTER, "auto|binomial|linear", &knob[1])
                    : forced("COLL_GATHER", rmpi_knobs.COLL_GATHER, "auto|binomial|linear", &knob[0]);
    if (f)
        return alg[f];
    return n > 2 && block * (size_t)n < (size_t)rmpi_knobs.COLL_GATHER_LARGE ? GX_BINOMIAL : GX_LINEAR;
}

int gx_pick_allgather(int n, size_t total, int form)
{
    static int knob[2] = {-1, -1};
    static const int alg[] = {-1, GX_BRUCK, GX_RECURSIVE_DOUBLING, GX_RING, GX_LINEAR};
    int v = form != RMPI_COLL_REGULAR;
    int f = forced(v ? "COLL_ALLGATHERV" : "COLL_ALLGATHER", v ? rmpi_knobs.COLL_ALLGATHERV : rmpi_knobs.COLL_ALLGATHER,
                   "auto|bruck|recursive_doubling|ring|linear", &knob[v]);
    if (f)
        return alg[f] == GX_RECURSIVE_DOUBLING && !is_pow2(n) ? GX_BRUCK : alg[f];
    /* log2(n) rounds while latency matters; recursive doubling's halves stay zero-copy, so
     * at powers of two it holds on until about 1 MiB in all; Bruck copies every block twice
     * more, so it gives way sooner. Large: every transfer at once up to 8 ranks (4 ranks on
     * 2 cores, 1 MiB each: 2.5-3.8 ms against 3.1-7.0 for the ring), the ring beyond. */
    size_t large = (size_t)rmpi_knobs.COLL_ALLGATHER_LARGE;
    if (is_pow2(n) && total < large)
        return GX_RECURSIVE_DOUBLING;
    if (total < large / 16)
        return GX_BRUCK;
    return n <= 8 ? GX_LINEAR : GX_RING;
}

int gx_pick_alltoall(int n, size_t block, int form)
{
    static int knob[2] = {-1, -1};
    if (form != RMPI_COLL_REGULAR) {
        /* linear and pairwise exchange the same messages, so ranks may choose differently
         * (block sizes differ per rank in the v and w forms) */
        static const int alg[] = {-1, GX_LINEAR, GX_PAIRWISE};
        int f = forced("COLL_ALLTOALLV", rmpi_knobs.COLL_ALLTOALLV, "auto|linear|pairwise", &knob[1]);
        if (f)
            return alg[f];
        return block < (size_t)rmpi_knobs.COLL_ALLTOALL_LARGE ? GX_LINEAR : GX_PAIRWISE;
    }
    static const int alg[] = {-1, GX_BRUCK, GX_LINEAR, GX_PAIRWISE};
    int f = forced("COLL_ALLTOALL", rmpi_knobs.COLL_ALLTOALL, "auto|bruck|linear|pairwise", &knob[0]);
    if (f)
        return alg[f];
    /* pairwise from 8 KiB: one partner at a time keeps the copies in cache and the
     * rendezvous from piling up (4 ranks on 2 cores: 64 KiB 0.26 ms vs 0.24-1.3 ms linear);
     * Bruck's log2(n) rounds only pay for tiny blocks among many ranks */
    if (n >= 8 && block <= 256)
        return GX_BRUCK;
    return block < (size_t)rmpi_knobs.COLL_ALLTOALL_LARGE ? GX_LINEAR : GX_PAIRWISE;
}
