/* MPI_Type_get_envelope / get_contents from the stored constructor arguments. Stored
 * order: ints in the int binding's order (counts widened to MPI_Count), aints for the
 * address arguments. The _c layout moves every count and displacement of a type built by
 * an _c constructor to the large-count array, in argument order; subarray and darray
 * keep ndims/order (and size, rank, distribs, dargs, psizes) as integers. */
#include "dtype_impl.h"

#include <string.h>

/* Subarray/darray: which stored ints are large counts in the _c layout. */
static int array_int_is_large(const rmpi_dtype_t *dt, size_t i)
{
    size_t nd = (size_t)dt->ints[dt->combiner == MPI_COMBINER_DARRAY ? 2 : 0];
    if (dt->combiner == MPI_COMBINER_SUBARRAY)
        return i >= 1 && i < 1 + 3 * nd;
    return i >= 3 && i < 3 + nd; /* darray: gsizes */
}

static int is_array(const rmpi_dtype_t *dt)
{
    return dt->combiner == MPI_COMBINER_SUBARRAY || dt->combiner == MPI_COMBINER_DARRAY;
}

void rmpi_dtype_envelope(const rmpi_dtype_t *dt, int large_api, rmpi_dtype_envelope_t *env)
{
    env->combiner = dt->combiner;
    env->nd = dt->combiner == MPI_COMBINER_NAMED ? 0 : (MPI_Count)dt->ntypes;
    env->ni = (MPI_Count)dt->nints;
    env->na = (MPI_Count)dt->naints;
    env->nl = 0;
    if (!large_api || !dt->large)
        return;
    if (is_array(dt)) {
        for (size_t i = 0; i < dt->nints; i++)
            if (array_int_is_large(dt, i)) {
                env->ni--;
                env->nl++;
            }
        return;
    }
    env->nl = env->ni + env->na;
    env->ni = env->na = 0;
}

void rmpi_dtype_contents(const rmpi_dtype_t *dt, int large_api, MPI_Count *ints, MPI_Aint *aints, MPI_Count *large,
                         rmpi_dtype_t **types)
{
    if (dt->combiner == MPI_COMBINER_NAMED)
        return;
    for (size_t i = 0; i < dt->ntypes; i++)
        types[i] = dt->types[i];
    if (!large_api || !dt->large) {
        if (dt->nints)
            memcpy(ints, dt->ints, dt->nints * sizeof(*ints));
        if (dt->naints)
            memcpy(aints, dt->aints, dt->naints * sizeof(*aints));
        return;
    }
    if (is_array(dt)) {
        for (size_t i = 0; i < dt->nints; i++)
            *(array_int_is_large(dt, i) ? large++ : ints++) = dt->ints[i];
        return;
    }
    for (size_t i = 0; i < dt->nints; i++)
        *large++ = dt->ints[i];
    for (size_t i = 0; i < dt->naints; i++)
        *large++ = dt->aints[i];
}
