/* Algorithm choice for the data-movement collectives (gather_sched.h). A knob per
 * collective (RMPI_COLL_GATHER...) forces one algorithm; under auto the crossover sizes are
 * knobs too (RMPI_COLL_GATHER_LARGE...), their defaults measured at 2..8 ranks over shm and
 * tcp on a 2-core machine. */
#include "coll_impl.h"
#include "gather_sched.h"

#include "../rt/rt.h"

static int is_pow2(int n) { return !(n & (n - 1)); }

static int pick_rooted(int scatter, int n, size_t block)
{
    /* COLL_SCATTER has the same choices as COLL_GATHER */
    _Static_assert((int)RMPI_COLL_SCATTER_BINOMIAL == (int)RMPI_COLL_GATHER_BINOMIAL &&
                       (int)RMPI_COLL_SCATTER_LINEAR == (int)RMPI_COLL_GATHER_LINEAR,
                   "gather and scatter choices differ");
    static const int alg[] = {[RMPI_COLL_GATHER_BINOMIAL] = GX_BINOMIAL, [RMPI_COLL_GATHER_LINEAR] = GX_LINEAR};
    int f = scatter ? rmpi_knobs.COLL_SCATTER : rmpi_knobs.COLL_GATHER;
    if (f != RMPI_COLL_GATHER_AUTO)
        return alg[f];
    return n > 2 && block * (size_t)n < (size_t)rmpi_knobs.COLL_GATHER_LARGE ? GX_BINOMIAL : GX_LINEAR;
}

static int pick_allgather(rmpi_comm_t *c, size_t total, int form)
{
    int n = c->size;
    /* COLL_ALLGATHERV has the same choices as COLL_ALLGATHER */
    _Static_assert((int)RMPI_COLL_ALLGATHERV_BRUCK == (int)RMPI_COLL_ALLGATHER_BRUCK &&
                       (int)RMPI_COLL_ALLGATHERV_RECURSIVE_DOUBLING == (int)RMPI_COLL_ALLGATHER_RECURSIVE_DOUBLING &&
                       (int)RMPI_COLL_ALLGATHERV_RING == (int)RMPI_COLL_ALLGATHER_RING &&
                       (int)RMPI_COLL_ALLGATHERV_LINEAR == (int)RMPI_COLL_ALLGATHER_LINEAR,
                   "allgather and allgatherv choices differ");
    static const int alg[] = {[RMPI_COLL_ALLGATHER_BRUCK] = GX_BRUCK,
                              [RMPI_COLL_ALLGATHER_RECURSIVE_DOUBLING] = GX_RECURSIVE_DOUBLING,
                              [RMPI_COLL_ALLGATHER_RING] = GX_RING,
                              [RMPI_COLL_ALLGATHER_LINEAR] = GX_LINEAR,
                              [RMPI_COLL_ALLGATHER_SITE] = GX_SITE};
    int f = form != RMPI_COLL_REGULAR ? rmpi_knobs.COLL_ALLGATHERV : rmpi_knobs.COLL_ALLGATHER;
    if (form == RMPI_COLL_REGULAR && f == RMPI_COLL_ALLGATHER_AUTO && coll_multi_site(c))
        return GX_SITE;
    if (f != RMPI_COLL_ALLGATHER_AUTO)
        return alg[f] == GX_RECURSIVE_DOUBLING && !is_pow2(n) ? GX_BRUCK : alg[f];
    /* log2(n) rounds while latency matters; recursive doubling's halves stay zero-copy, so
     * at powers of two it holds on until about 1 MiB in all; Bruck copies every block twice
     * more, so it gives way sooner. Large: every transfer at once up to 8 ranks (4 ranks on
     * 2 cores, 1 MiB each: 2.5-3.8 ms against 3.1-7.0 for the ring), the ring beyond. */
    size_t large = (size_t)rmpi_knobs.COLL_ALLGATHER_LARGE;
    /* on one node every transfer at once from COLL_ALLGATHER_NODE_LINEAR: each block is one
     * single-copy rendezvous from its owner, where the rounds' later blocks wait for earlier
     * rounds (Iallgather, 4 ranks on 2 cores: 16 KiB blocks 17.7 us against 22.8, 64 KiB 37.8
     * against 54.6; 8 ranks, 4-64 KiB 5-6 of 6 rounds); across nodes the rounds win (tcp, 4
     * pretend nodes: 512 B-128 KiB 0 of 8 rounds all at once) */
    long long node_linear = rmpi_knobs.COLL_ALLGATHER_NODE_LINEAR;
    if (n <= 8 && node_linear > 0 && total >= (size_t)node_linear && !coll_multi_node(c))
        return GX_LINEAR;
    if (is_pow2(n) && total < large)
        return GX_RECURSIVE_DOUBLING;
    if (total < large / 16)
        return GX_BRUCK;
    return n <= 8 ? GX_LINEAR : GX_RING;
}

/* Under auto, every transfer at once or one partner at a time: at once on a node of at
 * most 8 ranks at every size (COLL_ALLTOALL_NODE_LINEAR: the single-copy rendezvous of all
 * partners overlap; Ialltoall, 4 ranks on 2 cores, 256 KiB-1 MiB blocks lower in 7-8 of 8
 * rounds, 1 MiB 942 us against 1004; 8 ranks 512 KiB-1 MiB 3-4 of 4), else below
 * COLL_ALLTOALL_LARGE. */
static int linear_or_pairwise(rmpi_comm_t *c, size_t block)
{
    if (rmpi_knobs.COLL_ALLTOALL_NODE_LINEAR && c->size <= 8 && !coll_multi_node(c))
        return GX_LINEAR;
    return block < (size_t)rmpi_knobs.COLL_ALLTOALL_LARGE ? GX_LINEAR : GX_PAIRWISE;
}

static int pick_alltoall(rmpi_comm_t *c, size_t block, int form)
{
    int n = c->size;
    if (form != RMPI_COLL_REGULAR) {
        /* linear and pairwise exchange the same messages, so ranks may choose differently
         * (block sizes differ per rank in the v and w forms) */
        if (rmpi_knobs.COLL_ALLTOALLV != RMPI_COLL_ALLTOALLV_AUTO)
            return rmpi_knobs.COLL_ALLTOALLV == RMPI_COLL_ALLTOALLV_LINEAR ? GX_LINEAR : GX_PAIRWISE;
        return linear_or_pairwise(c, block);
    }
    static const int alg[] = {[RMPI_COLL_ALLTOALL_BRUCK] = GX_BRUCK,
                              [RMPI_COLL_ALLTOALL_LINEAR] = GX_LINEAR,
                              [RMPI_COLL_ALLTOALL_PAIRWISE] = GX_PAIRWISE,
                              [RMPI_COLL_ALLTOALL_SITE] = GX_SITE};
    if (rmpi_knobs.COLL_ALLTOALL != RMPI_COLL_ALLTOALL_AUTO)
        return alg[rmpi_knobs.COLL_ALLTOALL];
    if (coll_multi_site(c))
        return GX_SITE;
    /* every transfer at once below COLL_ALLTOALL_LARGE: the rendezvous of all partners
     * overlap (Ialltoall and tcp, 4-8 ranks, up to 128 KiB blocks); pairwise from there, one
     * partner at a time, keeps the copies in cache and the rendezvous from piling up. Bruck's
     * log2(n) rounds only pay for tiny blocks among many ranks */
    if (n >= 8 && block <= 256)
        return GX_BRUCK;
    return linear_or_pairwise(c, block);
}

/* The GX_ algorithms by name, in their enum's order, for RMPI_REPORT (coll_note). */
static const char gx_choices[] = "binomial|linear|bruck|recursive_doubling|ring|pairwise|site";
_Static_assert(GX_BINOMIAL == 0 && GX_LINEAR == 1 && GX_BRUCK == 2 && GX_RECURSIVE_DOUBLING == 3 && GX_RING == 4 &&
                   GX_PAIRWISE == 5 && GX_SITE == 6,
               "gx_choices follows the GX_ enum");

int gx_pick_rooted(int scatter, int form, int n, size_t block)
{
    int alg = form != RMPI_COLL_REGULAR ? GX_LINEAR : pick_rooted(scatter, n, block);
    coll_note(scatter ? COLL_CALL_SCATTER : COLL_CALL_GATHER, gx_choices, alg, block);
    return alg;
}

int gx_pick_allgather(rmpi_comm_t *c, size_t total, int form)
{
    int alg = pick_allgather(c, total, form);
    coll_note(form != RMPI_COLL_REGULAR ? COLL_CALL_ALLGATHERV : COLL_CALL_ALLGATHER, gx_choices, alg, total);
    return alg;
}

int gx_pick_alltoall(rmpi_comm_t *c, size_t block, int form)
{
    int alg = pick_alltoall(c, block, form);
    coll_note(form != RMPI_COLL_REGULAR ? COLL_CALL_ALLTOALLV : COLL_CALL_ALLTOALL, gx_choices, alg, block);
    return alg;
}
