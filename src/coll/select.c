/* The selection table: which algorithm a collective call uses (coll_impl.h). A knob
 * (RMPI_COLL_<KIND>) forces one; "auto" follows the table below, whose thresholds are
 * knobs too. Every rank of a call must choose the same: inputs are only values that the
 * standard makes equal on all ranks (size, count, op, node layout). */
#include "coll_impl.h"

#include "../rt/rt.h"

static const char *const choices[COLL_NKINDS] = {
    [COLL_BARRIER] = "auto|dissemination|two_level",
    [COLL_BCAST] = "auto|binomial|scatter_allgather|two_level",
    [COLL_REDUCE] = "auto|binomial|rabenseifner|two_level",
    [COLL_ALLREDUCE] = "auto|recursive_doubling|rabenseifner|ring|two_level",
    [COLL_REDUCE_SCATTER] = "auto|recursive_halving|pairwise",
    [COLL_SCAN] = "auto|recursive_doubling|linear",
};

/* Knob values parsed once (knobs are read at init and do not change). */
static int forced[COLL_NKINDS] = {-1, -1, -1, -1, -1, -1};

static int knob(int kind)
{
    if (forced[kind] < 0) {
        static const char *const names[COLL_NKINDS] = {"COLL_BARRIER", "COLL_BCAST", "COLL_REDUCE",
                                                       "COLL_ALLREDUCE", "COLL_REDUCE_SCATTER", "COLL_SCAN"};
        const char *vals[COLL_NKINDS] = {rmpi_knobs.COLL_BARRIER, rmpi_knobs.COLL_BCAST,
                                         rmpi_knobs.COLL_REDUCE, rmpi_knobs.COLL_ALLREDUCE,
                                         rmpi_knobs.COLL_REDUCE_SCATTER, rmpi_knobs.COLL_SCAN};
        forced[kind] = rmpi_knob_choice(names[kind], vals[kind], choices[kind]);
    }
    return forced[kind];
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

int coll_select(int kind, rmpi_comm_t *c, size_t bytes, size_t count, int commute)
{
    int n = c->size, k = knob(kind);
    if (k)
        return k;
    switch (kind) {
    case COLL_BARRIER:
        return coll_multi_node(c) ? BARRIER_TWO_LEVEL : BARRIER_DISSEMINATION;
    case COLL_BCAST:
        if (coll_multi_node(c))
            return BCAST_TWO_LEVEL;
        return coll_bcast_large(n, bytes) ? BCAST_SCATTER_ALLGATHER : BCAST_BINOMIAL;
    case COLL_REDUCE:
        if (commute && coll_multi_node(c))
            return REDUCE_TWO_LEVEL;
        return coll_reduce_large(n, count, bytes) ? REDUCE_RABENSEIFNER : REDUCE_BINOMIAL;
    case COLL_ALLREDUCE:
        if (commute && coll_multi_node(c))
            return ALLREDUCE_TWO_LEVEL;
        if (!coll_allreduce_large(n, count, bytes))
            return ALLREDUCE_RECURSIVE_DOUBLING;
        if (commute && bytes >= (size_t)rmpi_knobs.COLL_ALLREDUCE_RING)
            return ALLREDUCE_RING;
        return ALLREDUCE_RABENSEIFNER;
    case COLL_REDUCE_SCATTER:
        return commute && bytes < (size_t)rmpi_knobs.COLL_REDUCE_SCATTER_LARGE ? REDUCE_SCATTER_RECURSIVE_HALVING
                                                                                : REDUCE_SCATTER_PAIRWISE;
    case COLL_SCAN:
        return SCAN_RECURSIVE_DOUBLING;
    }
    return 1;
}
