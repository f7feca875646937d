/* The selection table: which algorithm a collective call uses (coll_impl.h). A knob
 * (RMPI_COLL_<KIND>) forces one; "auto" follows the table below, whose thresholds are
 * knobs too. Every rank of a call must choose the same: inputs are only values that the
 * standard makes equal on all ranks (size, count, op, node layout). */
#include "coll_impl.h"

#include "../rt/rt.h"

/* Every algorithm knob lists auto first, so 0 means "not forced". */
_Static_assert(RMPI_COLL_BARRIER_AUTO == 0 && RMPI_COLL_BCAST_AUTO == 0 && RMPI_COLL_REDUCE_AUTO == 0 &&
                   RMPI_COLL_ALLREDUCE_AUTO == 0 && RMPI_COLL_REDUCE_SCATTER_AUTO == 0 && RMPI_COLL_SCAN_AUTO == 0,
               "auto is the first choice of every RMPI_COLL_<KIND> knob");

static int knob(int kind)
{
    switch (kind) {
    case COLL_BARRIER: return rmpi_knobs.COLL_BARRIER;
    case COLL_BCAST: return rmpi_knobs.COLL_BCAST;
    case COLL_REDUCE: return rmpi_knobs.COLL_REDUCE;
    case COLL_ALLREDUCE: return rmpi_knobs.COLL_ALLREDUCE;
    case COLL_REDUCE_SCATTER: return rmpi_knobs.COLL_REDUCE_SCATTER;
    case COLL_SCAN: return rmpi_knobs.COLL_SCAN;
    }
    return 0;
}

/* Scatter-allgather and Rabenseifner move about 2 * bytes per rank where the binomial tree
 * moves log2(n) * bytes, but take more rounds: they pay from 3 tree levels (8 ranks) on. */
int coll_bcast_large(int n, size_t bytes)
{
    return n >= 8 && bytes >= (size_t)n && bytes >= (size_t)rmpi_knobs.COLL_BCAST_LARGE;
}

int coll_reduce_large(int n, size_t count, size_t bytes)
{
    return n >= 8 && count >= (size_t)n && bytes >= (size_t)rmpi_knobs.COLL_REDUCE_LARGE;
}

/* Recursive doubling moves and reduces log2(n) * bytes; Rabenseifner reduces bytes once. */
int coll_allreduce_large(int n, size_t count, size_t bytes)
{
    return n > 2 && count >= (size_t)n && bytes >= (size_t)rmpi_knobs.COLL_ALLREDUCE_LARGE;
}

static int pick(int kind, rmpi_comm_t *c, size_t bytes, size_t count, int commute)
{
    int n = c->size, k = knob(kind);
    if (k)
        return k;
    /* Sites first: a long link costs more than any node-level saving (seed infiniband-wan
     * 3.4). Reductions only when commutative: the tiers do not keep rank order. */
    /* A large Allreduce with the sites in runs of nodes stays node-aware: the node leaders'
     * recursive doubling, Rabenseifner or ring then crosses the long links only between the
     * runs, where the tiers add steps (1 ms, block placement, 4 MiB: site-aware 0.88x
     * node-aware with 1 rank per host, 0.68x with 2; below 2 MiB the tiers won with 1 rank
     * per host; interleaved sites: site-aware 1.29-1.59x from 128 KiB; docs/results/wan.md). */
    if (kind != COLL_REDUCE_SCATTER && kind != COLL_SCAN && (commute || kind == COLL_BCAST) && coll_multi_site(c) &&
        !(kind == COLL_ALLREDUCE && bytes >= (size_t)rmpi_knobs.COLL_SITE_RUNS_MIN && coll_sites_in_runs(c))) {
        static const int site[] = {[COLL_BARRIER] = RMPI_COLL_BARRIER_SITE,
                                   [COLL_BCAST] = RMPI_COLL_BCAST_SITE,
                                   [COLL_REDUCE] = RMPI_COLL_REDUCE_SITE,
                                   [COLL_ALLREDUCE] = RMPI_COLL_ALLREDUCE_SITE};
        if (kind == COLL_BCAST && rmpi_knobs.COLL_SITE_CHAIN_BCAST && bytes >= (size_t)rmpi_knobs.COLL_SITE_CHAIN_BCAST)
            return RMPI_COLL_BCAST_SITE_CHAIN;
        return site[kind];
    }
    switch (kind) {
    case COLL_BARRIER: return coll_multi_node(c) ? RMPI_COLL_BARRIER_TWO_LEVEL : RMPI_COLL_BARRIER_DISSEMINATION;
    case COLL_BCAST:
        if (coll_multi_node(c))
            return RMPI_COLL_BCAST_TWO_LEVEL;
        return coll_bcast_large(n, bytes) ? RMPI_COLL_BCAST_SCATTER_ALLGATHER : RMPI_COLL_BCAST_BINOMIAL;
    case COLL_REDUCE:
        if (commute && coll_multi_node(c))
            return RMPI_COLL_REDUCE_TWO_LEVEL;
        return coll_reduce_large(n, count, bytes) ? RMPI_COLL_REDUCE_RABENSEIFNER : RMPI_COLL_REDUCE_BINOMIAL;
    case COLL_ALLREDUCE:
        if (commute && coll_multi_node(c))
            return RMPI_COLL_ALLREDUCE_TWO_LEVEL;
        /* on one node Rabenseifner above COLL_ALLREDUCE_NODE_LARGE (the intra-node eager
         * limit): recursive doubling's whole vector per round goes by rendezvous there, each
         * a round trip that an oversubscribed node pays in time slices, where the halves stay
         * eager longer (Iallreduce, 4 ranks on 2 cores, 12 KiB: 12.9 us against 26.4); across nodes the rounds of
         * whole vectors stayed faster up to COLL_ALLREDUCE_LARGE (tcp, 24 KiB: 36.8 us
         * against 44.6) */
        if (!coll_allreduce_large(n, count, bytes) &&
            !(n > 2 && count >= (size_t)n && rmpi_knobs.COLL_ALLREDUCE_NODE_LARGE > 0 &&
              bytes > (size_t)rmpi_knobs.COLL_ALLREDUCE_NODE_LARGE && !coll_multi_node(c)))
            return RMPI_COLL_ALLREDUCE_RECURSIVE_DOUBLING;
        if (commute && bytes >= (size_t)rmpi_knobs.COLL_ALLREDUCE_RING)
            return RMPI_COLL_ALLREDUCE_RING;
        return RMPI_COLL_ALLREDUCE_RABENSEIFNER;
    case COLL_REDUCE_SCATTER:
        return commute && bytes < (size_t)rmpi_knobs.COLL_REDUCE_SCATTER_LARGE
                   ? RMPI_COLL_REDUCE_SCATTER_RECURSIVE_HALVING
                   : RMPI_COLL_REDUCE_SCATTER_PAIRWISE;
    case COLL_SCAN:
        /* the chain combines once per rank and pipelines calls back to back; recursive
         * doubling moves and combines the whole vector every round (3, 4 and 8 ranks on 2
         * cores: the chain 4-8x faster at 8 B, 5-7x at 256 KiB-1 MiB; more ranks with a core
         * each not measured here, so recursive doubling keeps its log2 n rounds there, and
         * across nodes, where each of the chain's n - 1 hops would cross the network) */
        return n <= 8 && !coll_multi_node(c) ? RMPI_COLL_SCAN_LINEAR : RMPI_COLL_SCAN_RECURSIVE_DOUBLING;
    }
    return 1;
}

/* Forced with a non-commutative op, the algorithms that reorder the operands give way. */
static int keep_order(int kind, int alg)
{
    switch (kind) {
    case COLL_REDUCE: return alg == RMPI_COLL_REDUCE_SITE ? RMPI_COLL_REDUCE_BINOMIAL : alg;
    case COLL_ALLREDUCE:
        if (alg == RMPI_COLL_ALLREDUCE_RING)
            return RMPI_COLL_ALLREDUCE_RABENSEIFNER;
        return alg == RMPI_COLL_ALLREDUCE_SITE ? RMPI_COLL_ALLREDUCE_RECURSIVE_DOUBLING : alg;
    case COLL_REDUCE_SCATTER: return RMPI_COLL_REDUCE_SCATTER_PAIRWISE;
    }
    return alg;
}

int coll_select(int kind, rmpi_comm_t *c, size_t bytes, size_t count, int commute)
{
    static const char *const names[] = {[COLL_BARRIER] = "COLL_BARRIER",
                                        [COLL_BCAST] = "COLL_BCAST",
                                        [COLL_REDUCE] = "COLL_REDUCE",
                                        [COLL_ALLREDUCE] = "COLL_ALLREDUCE",
                                        [COLL_REDUCE_SCATTER] = "COLL_REDUCE_SCATTER",
                                        [COLL_SCAN] = "COLL_SCAN"};
    static const char *choices[COLL_NKINDS];
    int alg = pick(kind, c, bytes, count, commute);
    if (!commute)
        alg = keep_order(kind, alg);
    if (!choices[kind])
        choices[kind] = coll_knob_choices(names[kind]);
    coll_note(kind, choices[kind], alg, bytes);
    return alg;
}
