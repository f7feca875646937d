/* Group bindings: queries, comparisons, set algebra, incl/excl and ranges, free. */
#include "api_impl.h"

#define GET_GROUP(g, h)                  \
    rmpi_group_t *g = rmpi_group_get(h); \
    RMPI_CHECK(g, NULL, MPI_ERR_GROUP, "invalid group %p", (void *)(h))

int MPI_Group_size(MPI_Group group, int *size)
{
    RMPI_API_INIT_CHECK();
    GET_GROUP(g, group);
    RMPI_CHECK(size, NULL, MPI_ERR_ARG, "size must not be NULL");
    *size = g->size;
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    RMPI_API_INIT_CHECK();
    GET_GROUP(g, group);
    RMPI_CHECK(rank, NULL, MPI_ERR_ARG, "rank must not be NULL");
    *rank = g->rank;
    return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    RMPI_API_INIT_CHECK();
    GET_GROUP(a, group1);
    GET_GROUP(b, group2);
    RMPI_CHECK(result, NULL, MPI_ERR_ARG, "result must not be NULL");
    *result = rmpi_group_compare(a, b);
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    RMPI_API_INIT_CHECK();
    GET_GROUP(a, group1);
    GET_GROUP(b, group2);
    RMPI_CHECK(n >= 0, NULL, MPI_ERR_ARG, "n %d is negative", n);
    RMPI_CHECK(n == 0 || (ranks1 && ranks2), NULL, MPI_ERR_ARG, "ranks1 and ranks2 must not be NULL");
    for (int i = 0; i < n; i++)
        RMPI_CHECK(ranks1[i] == MPI_PROC_NULL || (ranks1[i] >= 0 && ranks1[i] < a->size), NULL, MPI_ERR_RANK,
                   "ranks1[%d] = %d is not a rank of group1 (size %d)", i, ranks1[i], a->size);
    rmpi_group_translate(a, n, ranks1, b, ranks2);
    return MPI_SUCCESS;
}

#define SET_OP(name, fn)                                                      \
    int name(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)         \
    {                                                                         \
        RMPI_API_INIT_CHECK();                                                \
        GET_GROUP(a, group1);                                                 \
        GET_GROUP(b, group2);                                                 \
        RMPI_CHECK(newgroup, NULL, MPI_ERR_ARG, "newgroup must not be NULL"); \
        RMPI_LOCK();                                                          \
        rmpi_group_t *g = fn(a, b, rmpi_core_rank);                           \
        RMPI_UNLOCK();                                                        \
        *newgroup = rmpi_group_handle(g);                                     \
        return MPI_SUCCESS;                                                   \
    }
SET_OP(MPI_Group_union, rmpi_group_union)
SET_OP(MPI_Group_intersection, rmpi_group_intersection)
SET_OP(MPI_Group_difference, rmpi_group_difference)

static int subset(const char *func, rmpi_group_t *g, int rc, rmpi_group_t *n, MPI_Group *newgroup)
{
    if (rc)
        return rmpi_api_error(NULL, rc, func,
                              rc == MPI_ERR_RANK ? "a rank is out of range (group size %d) or repeated"
                                                 : "invalid argument (negative n or zero stride; group "
                                                   "size %d)",
                              g->size);
    *newgroup = rmpi_group_handle(n);
    return MPI_SUCCESS;
}

#define LIST_OP(name, fn, decl)                                                           \
    int name(MPI_Group group, int n, decl, MPI_Group *newgroup)                           \
    {                                                                                     \
        RMPI_API_INIT_CHECK();                                                            \
        GET_GROUP(g, group);                                                              \
        RMPI_CHECK(newgroup, NULL, MPI_ERR_ARG, "newgroup must not be NULL");             \
        RMPI_CHECK(n <= 0 || ranks, NULL, MPI_ERR_ARG, "the rank list must not be NULL"); \
        rmpi_group_t *ng = NULL;                                                          \
        RMPI_LOCK();                                                                      \
        int rc = fn(g, n, ranks, rmpi_core_rank, &ng);                                    \
        RMPI_UNLOCK();                                                                    \
        return subset(__func__, g, rc, ng, newgroup);                                     \
    }
LIST_OP(MPI_Group_incl, rmpi_group_incl, const int ranks[])
LIST_OP(MPI_Group_excl, rmpi_group_excl, const int ranks[])
LIST_OP(MPI_Group_range_incl, rmpi_group_range_incl, int ranks[][3])
LIST_OP(MPI_Group_range_excl, rmpi_group_range_excl, int ranks[][3])

int MPI_Group_free(MPI_Group *group)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(group, NULL, MPI_ERR_ARG, "group must not be NULL");
    GET_GROUP(g, *group);
    RMPI_LOCK();
    rmpi_group_release(g); /* MPI_GROUP_EMPTY is static: freeing it only clears the handle */
    RMPI_UNLOCK();
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
