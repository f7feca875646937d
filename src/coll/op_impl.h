/* Private to src/coll/: the predefined reduction kernels (reduce_ops.c) as op.c sees them. */
#ifndef RMPI_COLL_OP_IMPL_H
#define RMPI_COLL_OP_IMPL_H

#include <mpi.h>
#include <stddef.h>

#include "coll.h"

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
/* The kernel of `code` on `basic` (coll.h rmpi_coll_kernel_t), NULL where
 * rmpi_op_kernel_defined refuses the pair and for REPLACE and NO_OP. */
rmpi_coll_kernel_t rmpi_op_kernel_fn(int code, MPI_Datatype basic);
/* For tests: use the wide (AVX2) kernels when on and the CPU has them, else the portable
 * ones; returns whether the wide ones are now in use. Not while kernels run. The default,
 * chosen at the first lookup, is the wide ones where the CPU has them. */
int rmpi_op_kernels_wide(int on);

#endif
