/* Reduction operation objects (MPI_Op_create/free, refcounts) and the two ways of applying
 * an operation: on packed streams (what collectives move) and on user-layout buffers
 * (MPI_Reduce_local). Predefined operations go to the kernels of reduce_ops.c element
 * by element of the type's single basic type; user functions see typed buffers. */
#include "coll.h"
#include "op_impl.h"

#include "../datatype/datatype.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define RMPI_OP_MAGIC 0x524f5045u /* "ROPE" */

typedef struct rmpi_op {
    uint32_t magic;
    int refcount;   /* the user's handle + holders (persistent collectives) */
    int user_freed; /* MPI_Op_free was called: the handle is no longer valid */
    int commute;
    int large; /* created by MPI_Op_create_c: fn_c takes an MPI_Count length */
    MPI_User_function *fn;
    MPI_User_function_c *fn_c;
    struct rmpi_op *next_free;
} rmpi_op_t;

/* Released objects are kept for reuse instead of being freed, so a stale handle (an
 * erroneous call after MPI_Op_free) reads a cleared magic, not freed memory. */
static rmpi_op_t *op_pool;
/* Ops handed out (util.h): a handle is looked up before it is read. */
static rmpi_addrset_t op_live = RMPI_ADDRSET_INIT;

/* A live user op, or NULL (predefined handles, MPI_OP_NULL, freed ops, garbage). */
static rmpi_op_t *op_user(MPI_Op h)
{
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&op_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_op_t *o = (rmpi_op_t *)h;
    return o->magic == RMPI_OP_MAGIC && !o->user_freed ? o : NULL;
}

int rmpi_coll_op_valid(MPI_Op op) { return rmpi_op_predef_code(op) >= 0 || op_user(op) != NULL; }

int rmpi_coll_op_predefined(MPI_Op op) { return rmpi_op_predef_code(op) >= 0; }

int rmpi_coll_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    rmpi_op_t *o = op_pool;
    if (o) {
        op_pool = o->next_free;
        memset(o, 0, sizeof(*o));
    } else {
        o = rmpi_xcalloc(1, sizeof(*o));
    }
    o->magic = RMPI_OP_MAGIC;
    rmpi_addrset_add(&op_live, o);
    o->refcount = 1;
    o->commute = commute != 0;
    o->large = fn_c != NULL;
    o->fn = fn;
    o->fn_c = fn_c;
    *op = (MPI_Op)o;
    return MPI_SUCCESS;
}

int rmpi_coll_op_free(MPI_Op op)
{
    rmpi_op_t *o = op_user(op);
    if (!o)
        return MPI_ERR_OP;
    o->user_freed = 1;
    rmpi_coll_op_release(op);
    return MPI_SUCCESS;
}

/* Holders may keep an op past MPI_Op_free, so these look at the object, not the handle. */
void rmpi_coll_op_retain(MPI_Op op)
{
    if (rmpi_op_predef_code(op) < 0)
        ((rmpi_op_t *)op)->refcount++;
}

void rmpi_coll_op_release(MPI_Op op)
{
    if (rmpi_op_predef_code(op) >= 0)
        return;
    rmpi_op_t *o = (rmpi_op_t *)op;
    if (--o->refcount == 0) {
        o->magic = 0;
        rmpi_addrset_del(&op_live, o);
        o->next_free = op_pool;
        op_pool = o;
    }
}

/* REPLACE and NO_OP (RMA only) are not commutative; every other predefined one is. */
int rmpi_coll_op_commutative(MPI_Op op)
{
    int code = rmpi_op_predef_code(op);
    if (code >= 0)
        return code != RMPI_OP_REPLACE && code != RMPI_OP_NO_OP;
    return ((rmpi_op_t *)op)->commute;
}

int rmpi_coll_op_check(MPI_Op op, MPI_Datatype type)
{
    int code = rmpi_op_predef_code(op);
    if (code < 0 && !op_user(op))
        return MPI_ERR_OP;
    const rmpi_dtype_t *dt = rmpi_dtype_get(type);
    if (!dt)
        return MPI_ERR_TYPE;
    if (code < 0 || code == RMPI_OP_REPLACE || code == RMPI_OP_NO_OP || dt->size == 0)
        return 0;
    return dt->basic != MPI_DATATYPE_NULL && rmpi_op_kernel_defined(code, dt->basic) ? 0 : MPI_ERR_OP;
}

/* The user function on `count` typed elements; int-length functions get chunks of at
 * most INT_MAX elements. */
static void call_user(const rmpi_op_t *o, MPI_Datatype type, MPI_Aint extent, const void *in, void *inout, size_t count)
{
    if (o->large) {
        MPI_Count len = (MPI_Count)count;
        o->fn_c((void *)(uintptr_t)in, inout, &len, &type);
        return;
    }
    while (count) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        o->fn((void *)(uintptr_t)in, inout, &len, &type);
        in = (const char *)in + (MPI_Aint)len * extent;
        inout = (char *)inout + (MPI_Aint)len * extent;
        count -= (size_t)len;
    }
}

/* A typed scratch area for `count` elements of dt: returns the malloc'ed block and sets
 * *buf to the address the elements start from (their data may lie below it). Each element
 * gets its whole extent, not just its data: a user function on pairs copies whole structs
 * (an MPI_DOUBLE_INT is 12 bytes of data in 16). */
static void *typed_scratch(const rmpi_dtype_t *dt, size_t count, char **buf)
{
    MPI_Aint span = (MPI_Aint)(count - 1) * dt->extent;
    MPI_Aint elo = dt->true_lb < dt->lb ? dt->true_lb : dt->lb;
    MPI_Aint ehi = dt->true_ub > dt->ub ? dt->true_ub : dt->ub;
    MPI_Aint lo = (span < 0 ? span : 0) + elo, hi = (span > 0 ? span : 0) + ehi;
    char *mem = rmpi_xmalloc((size_t)(hi - lo) + 1);
    *buf = mem - lo;
    return mem;
}

void rmpi_coll_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t count)
{
    const rmpi_dtype_t *dt = rmpi_dtype_held(type); /* a persistent schedule may outlive the handle */
    if (!count || !dt || !dt->size)
        return;
    int code = rmpi_op_predef_code(op);
    if (code == RMPI_OP_NO_OP)
        return;
    if (code == RMPI_OP_REPLACE) {
        memmove(inout, in, count * dt->size);
        return;
    }
    if (code >= 0) {
        rmpi_coll_kernel_t fn = rmpi_op_kernel_fn(code, dt->basic);
        if (fn)
            fn(in, inout, dt->basic == type ? count : count * dt->size / rmpi_dtype_get(dt->basic)->size);
        return;
    }
    const rmpi_op_t *o = (const rmpi_op_t *)op;
    /* Only when the typed layout is the packed one: a single element with padding (an
     * MPI_DOUBLE_INT) must not let the function touch bytes past the packed data. */
    if (dt->contig && dt->true_lb == 0) {
        call_user(o, type, dt->extent, in, inout, count);
        return;
    }
    char *a, *b;
    void *ma = typed_scratch(dt, count, &a), *mb = typed_scratch(dt, count, &b);
    size_t bytes = count * dt->size;
    rmpi_dtype_unpack(in, bytes, a, count, dt, 0);
    rmpi_dtype_unpack(inout, bytes, b, count, dt, 0);
    call_user(o, type, dt->extent, a, b, count);
    rmpi_dtype_pack(b, count, dt, 0, inout, bytes);
    free(ma);
    free(mb);
}

void rmpi_coll_op_reduce_local(MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t count)
{
    const rmpi_dtype_t *dt = rmpi_dtype_get(type);
    if (!count || !dt || !dt->size)
        return;
    if (rmpi_op_predef_code(op) < 0) {
        call_user((const rmpi_op_t *)op, type, dt->extent, in, inout, count);
        return;
    }
    if (rmpi_dtype_is_contig(dt, count)) {
        rmpi_coll_op_apply(op, type, rmpi_dtype_contig_ptr(in, dt), rmpi_dtype_contig_ptr(inout, dt), count);
        return;
    }
    size_t bytes = count * dt->size;
    char *a = rmpi_xmalloc(bytes), *b = rmpi_xmalloc(bytes);
    rmpi_dtype_pack(in, count, dt, 0, a, bytes);
    rmpi_dtype_pack(inout, count, dt, 0, b, bytes);
    rmpi_coll_op_apply(op, type, a, b, count);
    rmpi_dtype_unpack(b, bytes, inout, count, dt, 0);
    free(a);
    free(b);
}
