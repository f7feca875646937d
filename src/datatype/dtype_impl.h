/* Private to src/datatype/: what the constructor, pack and predefined files share. */
#ifndef RMPI_DTYPE_IMPL_H
#define RMPI_DTYPE_IMPL_H

#include "datatype.h"

#include "../util/util.h"

/* User types handed out (util.h address set): looked up before a handle is read. */
extern rmpi_addrset_t rmpi_dtype_live;

/* One constructor argument tuple: `bl` copies of `t`, the first at byte `disp`. Every
 * combiner is a list of pieces, in type-map order. */
typedef struct rmpi_dtype_piece {
    MPI_Aint disp;
    MPI_Count bl;
    const rmpi_dtype_t *t;
} rmpi_dtype_piece_t;

size_t rmpi_dtype_npieces(const rmpi_dtype_t *dt);
void rmpi_dtype_piece(const rmpi_dtype_t *dt, size_t i, rmpi_dtype_piece_t *p);
/* True when every piece has the same block length and type (only disp varies). */
int rmpi_dtype_uniform_pieces(const rmpi_dtype_t *dt);

/* Constructor plumbing shared by dtype_create.c and dtype_array.c: a new object with
 * room for its arguments; then (after filling them) take references and build. On
 * failure dtype_finish destroys the object. */
rmpi_dtype_t *rmpi_dtype_new(int combiner, int large, size_t nints, size_t naints, size_t ntypes);
int rmpi_dtype_finish(rmpi_dtype_t *dt, rmpi_dtype_t **newtype);

/* Index of the segment holding packed byte `within` (< size) of one element. */
static inline size_t rmpi_dtype_seg_find(const rmpi_dtype_t *dt, size_t within)
{
    size_t lo = 0, hi = dt->nseg;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (dt->segs[mid].pos <= within)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

#endif
