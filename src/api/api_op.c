/* Reduction operation bindings: Op_create(_c)/free/commutative and Reduce_local(_c).
 * The objects and kernels are in src/coll/op.c and reduce_ops.c. */
#include "api_impl.h"

#include "../coll/coll.h"
#include "../datatype/datatype.h"

static int op_create(const char *func, MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    if (RMPI_UNLIKELY((!fn && !fn_c) || !op))
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "user_fn and op must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_coll_op_create(fn, fn_c, commute, op);
    RMPI_UNLOCK();
    return rc;
}

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create(__func__, user_fn, NULL, commute, op);
}

int MPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create(__func__, NULL, user_fn, commute, op);
}

int MPI_Op_free(MPI_Op *op)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(op, NULL, MPI_ERR_ARG, "op must not be NULL");
    RMPI_CHECK(!rmpi_coll_op_predefined(*op), NULL, MPI_ERR_OP, "op %p is a predefined operation and cannot be freed",
               (void *)*op);
    RMPI_LOCK();
    int rc = rmpi_coll_op_free(*op);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(NULL, rc, "op %p is not a valid operation (null, already freed, or not an op handle)",
                          (void *)*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(rmpi_coll_op_valid(op), NULL, MPI_ERR_OP,
               "op %p is not a valid operation (null, already freed, or not an op handle)", (void *)op);
    RMPI_CHECK(commute, NULL, MPI_ERR_ARG, "commute must not be NULL");
    *commute = rmpi_coll_op_commutative(op);
    return MPI_SUCCESS;
}

/* No lock: user functions may call MPI, and the kernels touch only the caller's buffers. */
static int reduce_local(const char *func, const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    if (RMPI_UNLIKELY(count < 0))
        return rmpi_api_error(NULL, MPI_ERR_COUNT, func, "count %lld is negative", (long long)count);
    rmpi_dtype_t *dt = rmpi_dtype_get(datatype);
    if (RMPI_UNLIKELY(!dt))
        return rmpi_api_error(NULL, MPI_ERR_TYPE, func,
                              "datatype %p is not a valid datatype (null, already freed, or not a datatype handle)",
                              (void *)datatype);
    if (RMPI_UNLIKELY(!dt->committed))
        return rmpi_api_error(NULL, MPI_ERR_TYPE, func, "datatype %p is not committed (call MPI_Type_commit)",
                              (void *)datatype);
    if (RMPI_UNLIKELY(!rmpi_dtype_count_ok(dt, count)))
        return rmpi_api_count_error(func, NULL, count, dt);
    int rc = rmpi_coll_op_check(op, datatype);
    if (RMPI_UNLIKELY(rc == MPI_ERR_OP && !rmpi_coll_op_valid(op)))
        return rmpi_api_error(NULL, rc, func,
                              "op %p is not a valid operation (null, already freed, or not an op handle)", (void *)op);
    if (RMPI_UNLIKELY(rc))
        return rmpi_api_error(NULL, rc, func,
                              "the operation is not defined on datatype %s (its basic elements must "
                              "all be one predefined type the standard allows for the operation)",
                              rmpi_dtype_name(dt)[0] ? rmpi_dtype_name(dt) : "(derived)");
    if (RMPI_UNLIKELY(inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE))
        return rmpi_api_error(NULL, MPI_ERR_BUFFER, func, "MPI_IN_PLACE is not allowed in MPI_Reduce_local");
    if (RMPI_UNLIKELY(count > 0 && dt->size && ((!inbuf && dt->true_lb <= 0) || (!inoutbuf && dt->true_lb <= 0))))
        return rmpi_api_error(NULL, MPI_ERR_BUFFER, func, "inbuf and inoutbuf must not be NULL when count is %lld",
                              (long long)count);
    rmpi_coll_op_reduce_local(op, datatype, inbuf, inoutbuf, (size_t)count);
    return MPI_SUCCESS;
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    return reduce_local(__func__, inbuf, inoutbuf, count, datatype, op);
}

int MPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op)
{
    return reduce_local(__func__, inbuf, inoutbuf, count, datatype, op);
}
