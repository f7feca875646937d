/* Constructor error codes, handle validity after free, and reference counting. */
#include <stdio.h>
#include <string.h>

#include "../unit_check.h"
#include "datatype/datatype.h"

#define EXPECT_RC(call, want)                                                      \
    do {                                                                           \
        int rc_ = (call);                                                          \
        CHECK(rc_ == (want), "returned %d, expected %d (%s)", rc_, (want), #want); \
    } while (0)

int main(void)
{
    rmpi_dtype_t *dt = NULL, *a, *b;
    static uint64_t garbage[16];
    MPI_Datatype junk = (MPI_Datatype)garbage;
    MPI_Count bl[2] = {1, 1}, negbl[2] = {1, -1}, disp[2] = {0, 2};
    MPI_Aint adisp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, badtypes[2] = {MPI_INT, MPI_DATATYPE_NULL};

    EXPECT_RC(rmpi_dtype_contiguous(-1, MPI_INT, 0, &dt), MPI_ERR_COUNT);
    EXPECT_RC(rmpi_dtype_contiguous(1, MPI_DATATYPE_NULL, 0, &dt), MPI_ERR_TYPE);
    EXPECT_RC(rmpi_dtype_contiguous(1, junk, 0, &dt), MPI_ERR_TYPE);
    EXPECT_RC(rmpi_dtype_contiguous(1, (MPI_Datatype)0x101, 0, &dt), MPI_ERR_TYPE);
    EXPECT_RC(rmpi_dtype_contiguous(1, MPI_INT, 0, NULL), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_vector(-2, 1, 1, MPI_INT, 0, &dt), MPI_ERR_COUNT);
    EXPECT_RC(rmpi_dtype_vector(2, -1, 1, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_vector(2, 1, INT64_MAX / 2, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_hvector(2, -1, 8, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_hvector(-1, 1, 8, MPI_INT, 0, &dt), MPI_ERR_COUNT);
    EXPECT_RC(rmpi_dtype_indexed(2, negbl, disp, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_indexed(2, NULL, disp, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_indexed(2, bl, NULL, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_indexed(-1, bl, disp, MPI_INT, 0, &dt), MPI_ERR_COUNT);
    EXPECT_RC(rmpi_dtype_indexed(2, bl, disp, MPI_DATATYPE_NULL, 0, &dt), MPI_ERR_TYPE);
    EXPECT_RC(rmpi_dtype_hindexed(2, negbl, adisp, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_hindexed(2, bl, NULL, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_indexed_block(2, -1, disp, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_indexed_block(-1, 1, disp, MPI_INT, 0, &dt), MPI_ERR_COUNT);
    EXPECT_RC(rmpi_dtype_hindexed_block(2, 1, NULL, MPI_INT, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_struct(2, bl, adisp, badtypes, 0, &dt), MPI_ERR_TYPE);
    EXPECT_RC(rmpi_dtype_struct(2, negbl, adisp, types, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_struct(-1, bl, adisp, types, 0, &dt), MPI_ERR_COUNT);
    EXPECT_RC(rmpi_dtype_struct(2, bl, adisp, NULL, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_resized(MPI_DATATYPE_NULL, 0, 4, 0, &dt), MPI_ERR_TYPE);
    EXPECT_RC(rmpi_dtype_resized(MPI_INT, INT64_MAX, 4, 0, &dt), MPI_ERR_ARG);
    EXPECT_RC(rmpi_dtype_dup(junk, &dt), MPI_ERR_TYPE);
    /* Zero counts with NULL arrays are legal. */
    EXPECT_RC(rmpi_dtype_indexed(0, NULL, NULL, MPI_INT, 0, &dt), MPI_SUCCESS);
    rmpi_dtype_free(dt);
    EXPECT_RC(rmpi_dtype_struct(0, NULL, NULL, NULL, 0, &dt), MPI_SUCCESS);
    CHECK(dt->size == 0 && dt->extent == 0, "empty struct");
    rmpi_dtype_free(dt);
    EXPECT_RC(rmpi_dtype_free(rmpi_dtype_get(MPI_INT)), MPI_ERR_TYPE);

    /* A type freed by the user lives on inside the types built from it. */
    EXPECT_RC(rmpi_dtype_contiguous(2, MPI_INT, 0, &a), MPI_SUCCESS);
    MPI_Datatype ah = rmpi_dtype_handle(a);
    CHECK(rmpi_dtype_get(ah) == a, "handle round trip");
    EXPECT_RC(rmpi_dtype_vector(2, 1, 2, ah, 0, &b), MPI_SUCCESS);
    CHECK(a->refcount == 2, "parent holds a reference (refcount %d)", a->refcount);
    EXPECT_RC(rmpi_dtype_free(a), MPI_SUCCESS);
    CHECK(rmpi_dtype_get(ah) == NULL, "freed handle is invalid");
    EXPECT_RC(rmpi_dtype_contiguous(1, ah, 0, &dt), MPI_ERR_TYPE);
    CHECK(b->types[0] == a && a->refcount == 1, "child kept alive");
    rmpi_dtype_commit(b);
    int in[8] = {0, 1, 2, 3, 4, 5, 6, 7}, out[4];
    CHECK(rmpi_dtype_pack(in, 1, b, 0, out, sizeof(out)) == 16 && out[0] == 0 && out[1] == 1 && out[2] == 4 &&
              out[3] == 5,
          "pack after the child was freed");

    /* A pending operation keeps the type alive past MPI_Type_free. */
    rmpi_dtype_retain(b);
    MPI_Datatype bh = rmpi_dtype_handle(b);
    EXPECT_RC(rmpi_dtype_free(b), MPI_SUCCESS);
    CHECK(rmpi_dtype_get(bh) == NULL, "freed handle is invalid");
    CHECK(rmpi_dtype_free(b) == MPI_ERR_TYPE, "double free is refused");
    memset(out, 0, sizeof(out));
    CHECK(rmpi_dtype_pack(in, 1, b, 0, out, sizeof(out)) == 16 && out[3] == 5, "pack by a pending operation");
    rmpi_dtype_release(b); /* frees b and then a; the leak checker verifies */

    rmpi_dtype_retain(rmpi_dtype_get(MPI_INT));
    rmpi_dtype_release(rmpi_dtype_get(MPI_INT));
    rmpi_dtype_release(rmpi_dtype_get(MPI_INT));
    CHECK(rmpi_dtype_get(MPI_INT) != NULL, "predefined types ignore reference counts");

    return finish("dtype_errors");
}
