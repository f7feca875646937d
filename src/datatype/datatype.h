/*
 * datatype: MPI datatypes (predefined and derived), their bounds, and packing.
 *
 * Callers: the api bindings (constructors, queries, MPI_Pack/Unpack, Get_count/elements),
 * the core through rmpi_dtype_core_ops (segment lists of non-contiguous eager sends,
 * pieces of rendezvous data, unpack of receives straight from the frame, packed copies),
 * coll and rma.
 * Objects: predefined types live in a static table indexed by handle value
 * (0x200..0x2ff) and are never freed (so are the f90 types, heap objects marked
 * predefined); user types are heap objects whose address is
 * the handle and which carry RMPI_DTYPE_MAGIC. A user type starts with refcount 1 (the
 * user's handle); a derived type holds a reference on every type it was built from
 * (for Get_contents); an operation that keeps a type past its call takes one with
 * rmpi_dtype_retain and drops it with rmpi_dtype_release. rmpi_dtype_free drops the
 * user's reference: the handle dies at once, the object when the last reference goes.
 * Layout: every element is flattened at construction into segments (runs of equal
 * blocks at a fixed stride, merged where adjacent); pack order is type-map order.
 * Past rmpi_dtype_flat_max segments a repeated multi-block child stays nested instead.
 * Threading: no internal locking. The caller holds the library lock for constructors,
 * free/retain/release and set_name; queries, pack and unpack only read the object.
 * No progress: nothing here blocks or talks to the network.
 */
#ifndef RMPI_DATATYPE_H
#define RMPI_DATATYPE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define RMPI_DTYPE_MAGIC 0x52445459u /* "RDTY" */
#define RMPI_DTYPE_PREDEF_BASE 0x200u
#define RMPI_DTYPE_PREDEF_COUNT 0x100u
/* Segments per element beyond which repeated multi-block children are not expanded
 * (default of rmpi_dtype_flat_max, which tests lower to exercise nesting). */
#define RMPI_DTYPE_FLAT_MAX 4096

typedef struct rmpi_dtype rmpi_dtype_t;

/* `count` blocks of `len` bytes, the first at `off` from the element's origin and the
 * next ones `stride` bytes apart; `pos` is where the first byte lands in the packed
 * stream of one element. When `sub` is set, each block is one whole element of that
 * type (len == sub->size) rather than plain bytes: types whose flat form would be huge
 * (a contiguous or vector of a struct) keep one level of nesting instead. */
typedef struct rmpi_dtype_seg {
    MPI_Aint off;
    size_t len;
    size_t count;
    MPI_Aint stride;
    size_t pos;
    const rmpi_dtype_t *sub;
} rmpi_dtype_seg_t;

struct rmpi_dtype {
    uint32_t magic;
    uint8_t predefined;
    uint8_t committed;
    uint8_t contig;     /* data of any count of elements is one byte range at buf + true_lb */
    uint8_t user_freed; /* MPI_Type_free was called: the handle is no longer valid */
    uint8_t sticky_lb;  /* lb / ub come from a resize and propagate through constructors */
    uint8_t sticky_ub;
    uint8_t nested; /* some segment has a sub type */
    int refcount;
    MPI_Datatype handle;

    size_t size;         /* bytes of data in one element */
    MPI_Count max_count; /* the most elements whose data bytes and span fit in an MPI_Aint
                            * (rmpi_dtype_count_ok) */
    MPI_Aint lb, ub, extent;
    MPI_Aint true_lb, true_ub, true_extent;
    size_t align; /* largest alignment among the basic types (struct padding) */

    size_t nseg;
    rmpi_dtype_seg_t *segs;

    MPI_Count nbasic;   /* basic elements in one element */
    size_t basic_size;  /* size of every basic element, 0 when they differ */
    size_t pair_first;  /* predefined pair types (MPI_DOUBLE_INT...): bytes of the first member */
    MPI_Datatype basic; /* the one predefined type every basic element is (a pair type counts
                            * as one), MPI_DATATYPE_NULL when they differ or there is no data:
                            * what predefined reduction operations apply to */

    /* Constructor and its arguments, in MPI_Type_get_contents order. Integer arguments
     * are kept as MPI_Count whether they came from the int or the _c binding; `large`
     * says which. types[] hold references. */
    int combiner;
    int large;
    size_t nints, naints, ntypes;
    MPI_Count *ints;
    MPI_Aint *aints;
    rmpi_dtype_t **types;
    /* Subarray and darray: the equivalent type built from simpler constructors (one
     * reference); their single piece is one copy of it at displacement 0. */
    rmpi_dtype_t *inner;

    char name[MPI_MAX_OBJECT_NAME];
    void *attrs; /* attribute list, owned by the api layer */
};

extern size_t rmpi_dtype_flat_max;

/* Handle <-> object. NULL for MPI_DATATYPE_NULL, freed handles and detectable garbage. */
rmpi_dtype_t *rmpi_dtype_get(MPI_Datatype h);
/* Bytes of one element of a predefined type whose elements are contiguous (size ==
 * extent, no gap: not MPI_DOUBLE_INT...), by handle, for short paths that look no object
 * up; 0 for every other handle, and until the predefined types are set up (the first
 * rmpi_dtype_get, at MPI_Init). */
extern unsigned char rmpi_dtype_predef_csize[RMPI_DTYPE_PREDEF_COUNT];
static inline size_t rmpi_dtype_predef_contig_size(MPI_Datatype h)
{
    uintptr_t v = (uintptr_t)h - RMPI_DTYPE_PREDEF_BASE;
    return v < RMPI_DTYPE_PREDEF_COUNT ? rmpi_dtype_predef_csize[v] : 0;
}
/* The same for a holder that took a reference (a persistent schedule): also finds a type
 * the user freed since, which stays alive until its last reference goes. */
rmpi_dtype_t *rmpi_dtype_held(MPI_Datatype h);
static inline MPI_Datatype rmpi_dtype_handle(const rmpi_dtype_t *dt) { return dt->handle; }
/* Whether count elements of dt can be addressed: count * size and count * |extent| fit in
 * an MPI_Aint. Bindings check every (count, datatype) they take with it (MPI_ERR_COUNT),
 * so the layers below multiply counts by sizes without overflow. */
static inline int rmpi_dtype_count_ok(const rmpi_dtype_t *dt, MPI_Count count) { return count <= dt->max_count; }
/* Sets dt->max_count from its size and extent (constructors and predefined types). */
void rmpi_dtype_set_max_count(rmpi_dtype_t *dt);

/* Constructors. On success *newtype is an uncommitted user type with refcount 1.
 * Return MPI_SUCCESS, MPI_ERR_COUNT (negative count), MPI_ERR_ARG (negative block
 * length, NULL array or output, overflow) or MPI_ERR_TYPE (invalid input type).
 * indexed/indexed_block displacements are in extents of oldtype, the h* ones in bytes.
 * `large` records that the call came from an _c binding (for Get_envelope). */
int rmpi_dtype_contiguous(MPI_Count count, MPI_Datatype oldtype, int large, rmpi_dtype_t **newtype);
int rmpi_dtype_vector(MPI_Count count, MPI_Count blocklen, MPI_Count stride, MPI_Datatype oldtype, int large,
                      rmpi_dtype_t **newtype);
int rmpi_dtype_hvector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride, MPI_Datatype oldtype, int large,
                       rmpi_dtype_t **newtype);
int rmpi_dtype_indexed(MPI_Count count, const MPI_Count *blocklens, const MPI_Count *disps, MPI_Datatype oldtype,
                       int large, rmpi_dtype_t **newtype);
int rmpi_dtype_hindexed(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *disps, MPI_Datatype oldtype,
                        int large, rmpi_dtype_t **newtype);
int rmpi_dtype_indexed_block(MPI_Count count, MPI_Count blocklen, const MPI_Count *disps, MPI_Datatype oldtype,
                             int large, rmpi_dtype_t **newtype);
int rmpi_dtype_hindexed_block(MPI_Count count, MPI_Count blocklen, const MPI_Aint *disps, MPI_Datatype oldtype,
                              int large, rmpi_dtype_t **newtype);
int rmpi_dtype_struct(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *disps, const MPI_Datatype *types,
                      int large, rmpi_dtype_t **newtype);
int rmpi_dtype_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, int large, rmpi_dtype_t **newtype);
/* A dup is committed when its source is (MPI_Type_dup semantics). */
int rmpi_dtype_dup(MPI_Datatype oldtype, rmpi_dtype_t **newtype);

/* MPI_Type_create_subarray / darray (integer arguments as in the bindings, order
 * MPI_ORDER_C or MPI_ORDER_FORTRAN). MPI_ERR_ARG for arguments the standard rejects
 * (sizes, starts, process grid, distribution arguments), MPI_ERR_TYPE for oldtype.
 * Extent: the whole global array (lb 0), as the standard's type maps say. */
int rmpi_dtype_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes, const MPI_Count *starts,
                        int order, MPI_Datatype oldtype, int large, rmpi_dtype_t **newtype);
int rmpi_dtype_darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs, const int *dargs,
                      const int *psizes, int order, MPI_Datatype oldtype, int large, rmpi_dtype_t **newtype);
/* A new object equal to t: same combiner, arguments and commit state (what
 * MPI_Type_get_contents hands out for derived argument types). */
int rmpi_dtype_clone(const rmpi_dtype_t *t, rmpi_dtype_t **newtype);

/* MPI_Type_get_envelope / get_contents. `large_api` selects the _c layout (counts of
 * a type built by an _c constructor go to the large-count array); otherwise every
 * integer argument is reported as an integer (the caller checks that it fits in int).
 * rmpi_dtype_contents fills arrays of the envelope's sizes; types are the objects the
 * type holds (the caller hands out clones of derived ones). */
typedef struct rmpi_dtype_envelope {
    MPI_Count ni, na, nl, nd;
    int combiner;
} rmpi_dtype_envelope_t;
void rmpi_dtype_envelope(const rmpi_dtype_t *dt, int large_api, rmpi_dtype_envelope_t *env);
void rmpi_dtype_contents(const rmpi_dtype_t *dt, int large_api, MPI_Count *ints, MPI_Aint *aints, MPI_Count *large,
                         rmpi_dtype_t **types);

/* "external32" (MPI-4.1 13.5.2): big endian, the standard's sizes (MPI_WCHAR 2 bytes,
 * long double IEEE binary128). Sizes are per element of dt; the converters go between
 * the native packed stream (rmpi_dtype_pack) of `count` elements and external32. */
size_t rmpi_dtype_external_size(const rmpi_dtype_t *dt);
void rmpi_dtype_to_external(const rmpi_dtype_t *dt, size_t count, const void *packed, void *ext);
void rmpi_dtype_from_external(const rmpi_dtype_t *dt, size_t count, const void *ext, void *packed);

/* MPI_Type_match_size: the predefined type of a type class and byte size, or
 * MPI_DATATYPE_NULL. */
MPI_Datatype rmpi_dtype_match_size(int typeclass, int size);
/* MPI_Type_create_f90_*: a predefined heap object (cached per arguments, never freed)
 * with combiner MPI_COMBINER_F90_* and ints [r] or [p, r], laid out as `match`. */
int rmpi_dtype_f90(int combiner, int p, int r, MPI_Datatype match, rmpi_dtype_t **newtype);

int rmpi_dtype_commit(rmpi_dtype_t *dt);
/* The user's MPI_Type_free: MPI_ERR_TYPE for predefined or already freed types. */
int rmpi_dtype_free(rmpi_dtype_t *dt);
/* References held by pending operations; no-ops on predefined types. */
void rmpi_dtype_retain(rmpi_dtype_t *dt);
void rmpi_dtype_release(rmpi_dtype_t *dt);

static inline size_t rmpi_dtype_size(const rmpi_dtype_t *dt) { return dt->size; }
static inline void rmpi_dtype_get_extent(const rmpi_dtype_t *dt, MPI_Aint *lb, MPI_Aint *extent)
{
    *lb = dt->lb;
    *extent = dt->extent;
}
static inline void rmpi_dtype_get_true_extent(const rmpi_dtype_t *dt, MPI_Aint *lb, MPI_Aint *extent)
{
    *lb = dt->true_lb;
    *extent = dt->true_extent;
}
/* True when `count` elements at buf are the single byte range
 * [rmpi_dtype_contig_ptr(buf, dt), + count * size): the zero-copy fast path. */
static inline int rmpi_dtype_is_contig(const rmpi_dtype_t *dt, size_t count)
{
    return dt->contig || (count == 1 && dt->nseg == 1 && dt->segs[0].count == 1 && !dt->segs[0].sub);
}
static inline void *rmpi_dtype_contig_ptr(const void *buf, const rmpi_dtype_t *dt)
{
    /* in integers: buf may be NULL (count 0), and NULL + 0 is undefined behaviour in C */
    return (void *)((uintptr_t)buf + (uintptr_t)dt->true_lb);
}

/* Copy bytes [offset, offset + outlen) of the packed stream of (inbuf, count, dt) to
 * out; returns the bytes copied (less than outlen only at the end of the stream).
 * Restartable at any byte offset, so callers may pack in pieces. */
size_t rmpi_dtype_pack(const void *inbuf, size_t count, const rmpi_dtype_t *dt, size_t offset, void *out,
                       size_t outlen);
/* Inverse: scatter `inlen` packed bytes, which start at stream byte `offset`, into
 * (outbuf, count, dt); returns the bytes consumed. */
size_t rmpi_dtype_unpack(const void *in, size_t inlen, void *outbuf, size_t count, const rmpi_dtype_t *dt,
                         size_t offset);

/* Segment iterator: bytes [offset, offset + len) of the packed stream of (buf, count, dt)
 * as the contiguous (address, length) pieces of the user's buffer they occupy, in
 * type-map order, adjacent pieces merged. rmpi_dtype_iter_next writes at most `max`
 * segments and returns how many (0 at the end); the last one takes in every piece
 * adjacent to it, so successive calls give the same list as one unbounded call. The
 * state is the stream offset reached (`offset`): resuming is a seek, like pack. Cost:
 * one step per piece before merging (a type whose blocks all touch is still walked
 * block by block). */
typedef struct rmpi_dtype_iter {
    char *buf;
    size_t count;
    const rmpi_dtype_t *dt;
    size_t offset, end; /* stream bytes: next one to list, end of the range */
} rmpi_dtype_iter_t;
void rmpi_dtype_iter_init(rmpi_dtype_iter_t *it, const void *buf, size_t count, const rmpi_dtype_t *dt, size_t offset,
                          size_t len);
int rmpi_dtype_iter_next(rmpi_dtype_iter_t *it, struct iovec *iov, int max);
static inline int rmpi_dtype_iter_done(const rmpi_dtype_iter_t *it) { return it->offset >= it->end; }
/* Mean length of the contiguous pieces of one element, counted before adjacent pieces
 * merge (so at most what the iterator lists); 0 for a type without data. Cost: one step
 * per segment of the type and of its nested sub types. */
size_t rmpi_dtype_mean_piece(const rmpi_dtype_t *dt);
/* The table through which the core lists, packs and unpacks typed data (core.h
 * rmpi_core_types, set by the runtime before the core starts). */
extern const struct rmpi_core_type_ops rmpi_dtype_core_ops;

/* MPI_Get_elements: basic elements in `bytes` bytes of a stream of dt (a partial
 * element counts the whole basic elements it holds); MPI_UNDEFINED when `bytes` ends
 * inside a basic element. */
MPI_Count rmpi_dtype_elements(const rmpi_dtype_t *dt, size_t bytes);
/* Inverse of rmpi_dtype_elements (MPI_Status_set_elements): bytes taken by the first
 * `n` basic elements of a stream of dt. */
size_t rmpi_dtype_elements_bytes(const rmpi_dtype_t *dt, MPI_Count n);
/* MPI_Get_count: whole elements in `bytes`, MPI_UNDEFINED when not a multiple of the
 * size (0 for a zero-size type). */
MPI_Count rmpi_dtype_count(const rmpi_dtype_t *dt, size_t bytes);

/* "MPI_INT" for predefined types, the MPI_Type_set_name value (default "") otherwise. */
static inline const char *rmpi_dtype_name(const rmpi_dtype_t *dt) { return dt->name; }
/* Truncates to MPI_MAX_OBJECT_NAME - 1 characters. */
void rmpi_dtype_set_name(rmpi_dtype_t *dt, const char *name);

#endif
