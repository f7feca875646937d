/* Private to src/coll/: the predefined reduction kernels (reduce_ops.c) as op.c sees them. */
#ifndef RMPI_COLL_OP_IMPL_H
#define RMPI_COLL_OP_IMPL_H

#include <mpi.h>
#include <stddef.h>

/* Predefined operations, numbered for the kernels' switch. */
enum {
    RMPI_OP_SUM,
    RMPI_OP_PROD,
    RMPI_OP_MAX,
    RMPI_OP_MIN,
    RMPI_OP_LAND,
    RMPI_OP_LOR,
    RMPI_OP_LXOR,
    RMPI_OP_BAND,
    RMPI_OP_BOR,
    RMPI_OP_BXOR,
    RMPI_OP_MAXLOC,
    RMPI_OP_MINLOC,
    RMPI_OP_REPLACE,
    RMPI_OP_NO_OP,
    RMPI_OP_NPREDEF
};

/* RMPI_OP_* of a predefined handle, -1 for anything else (MPI_OP_NULL, user ops). */
int rmpi_op_predef_code(MPI_Op op);
/* Whether predefined operation `code` is defined on predefined type `basic` (the
 * standard's table: C/Fortran integer, floating, complex, logical, byte, pair groups). */
int rmpi_op_kernel_defined(int code, MPI_Datatype basic);
/* inout[i] = in[i] op inout[i] for n packed elements of `basic` (pairs: value then
 * index, no padding). Only for pairs (code, basic) that rmpi_op_kernel_defined accepts. */
void rmpi_op_kernel(int code, MPI_Datatype basic, const void *in, void *inout, size_t n);

#endif
