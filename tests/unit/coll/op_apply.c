/* The reduction interface the collectives use (src/coll/coll.h): rmpi_coll_op_apply on
 * PACKED streams with predefined ops (pair types packed without padding, a vector of
 * ints) and user ops (contiguous types: the user function gets the buffers themselves;
 * non-contiguous: typed copies, the user's datatype handle, repacked after), in as the
 * left operand; op_check on types of one and of several basic types; refcounts (a held
 * op survives MPI_Op_free); commutativity flags; operands at odd addresses. */
#include <stdint.h>
#include <string.h>

#include "../unit_check.h"
#include "coll/coll.h"
#include "datatype/datatype.h"

static MPI_Datatype seen_type;
static const void *seen_in;
static void *seen_inout;
static int seen_len, calls;

/* Non-commutative on purpose: inout = 10 * in + inout, on every int of a vector(2,1,3)
 * element (ints 0 and 3 of each 4-int extent) or of a plain int. */
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    seen_type = *dt;
    seen_in = in;
    seen_inout = inout;
    seen_len = *len;
    calls++;
    int *a = in, *b = inout;
    if (*dt == MPI_INT) {
        for (int i = 0; i < *len; i++)
            b[i] = 10 * a[i] + b[i];
        return;
    }
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < 4; k += 3)
            b[4 * e + k] = 10 * a[4 * e + k] + b[4 * e + k];
}

static void copy_pairs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    struct {
        double v;
        int i;
    } *a = in, *b = inout;
    for (int k = 0; k < *len; k++)
        b[k] = a[k];
}

static void test_user(void)
{
    MPI_Op op;
    CHECK(rmpi_coll_op_create(user_fn, NULL, 0, &op) == MPI_SUCCESS, "create");
    CHECK(rmpi_coll_op_valid(op) && !rmpi_coll_op_predefined(op) && !rmpi_coll_op_commutative(op), "user op flags");

    int in[5] = {1, 2, 3, 4, 5}, io[5] = {10, 20, 30, 40, 50};
    CHECK(rmpi_coll_op_check(op, MPI_INT) == 0, "user op on MPI_INT");
    rmpi_coll_op_apply(op, MPI_INT, in, io, 5);
    CHECK(seen_in == in && seen_inout == io && seen_len == 5 && seen_type == MPI_INT,
          "contiguous: the user function must get the packed buffers themselves");
    CHECK(io[0] == 20 && io[4] == 100, "contiguous user op result %d %d", io[0], io[4]);

    rmpi_dtype_t *v = NULL;
    CHECK(rmpi_dtype_vector(2, 1, 3, MPI_INT, 0, &v) == MPI_SUCCESS, "vector");
    rmpi_dtype_commit(v);
    MPI_Datatype vh = rmpi_dtype_handle(v);
    int pin[6] = {1, 2, 3, 4, 5, 6}, pio[6] = {100, 200, 300, 400, 500, 600};
    rmpi_coll_op_apply(op, vh, pin, pio, 3);
    CHECK(seen_type == vh && seen_len == 3 && seen_in != pin, "non-contiguous: typed copies and the user's handle");
    for (int i = 0; i < 6; i++)
        CHECK(pio[i] == 10 * pin[i] + 100 * (i + 1), "non-contiguous user op: packed[%d] = %d", i, pio[i]);

    /* one MPI_DOUBLE_INT (12 packed bytes, 16 typed): the function copies whole structs,
     * which must land in a typed copy, not 4 bytes past the packed data */
    MPI_Op cp;
    CHECK(rmpi_coll_op_create(copy_pairs, NULL, 1, &cp) == MPI_SUCCESS, "create copy op");
    unsigned char pin2[16] = {0}, pio2[16];
    double dv = 2.5;
    int iv = 7;
    memcpy(pin2, &dv, 8);
    memcpy(pin2 + 8, &iv, 4);
    memset(pio2, 0xee, sizeof pio2);
    rmpi_coll_op_apply(cp, MPI_DOUBLE_INT, pin2, pio2, 1);
    CHECK(memcmp(pio2, pin2, 12) == 0 && pio2[12] == 0xee && pio2[15] == 0xee,
          "user op on one MPI_DOUBLE_INT: result or the bytes past the packed pair");
    rmpi_coll_op_free(cp);

    /* a holder keeps the op past MPI_Op_free */
    rmpi_coll_op_retain(op);
    CHECK(rmpi_coll_op_free(op) == MPI_SUCCESS, "free");
    CHECK(!rmpi_coll_op_valid(op) && rmpi_coll_op_check(op, MPI_INT) == MPI_ERR_OP, "freed handle is invalid");
    calls = 0;
    rmpi_coll_op_apply(op, MPI_INT, in, io, 1);
    CHECK(calls == 1, "a held op still applies after MPI_Op_free");
    rmpi_coll_op_release(op);
    rmpi_dtype_free(v);
}

static void test_predefined(void)
{
    /* MPI_SHORT_INT packed: 6 bytes per pair (short, int), no padding */
    unsigned char in[18], io[18];
    short va[3] = {5, 2, 7}, vb[3] = {5, 3, 1};
    int ia[3] = {9, 4, 0}, ib[3] = {3, 8, 6};
    for (int k = 0; k < 3; k++) {
        memcpy(in + 6 * k, &va[k], 2);
        memcpy(in + 6 * k + 2, &ia[k], 4);
        memcpy(io + 6 * k, &vb[k], 2);
        memcpy(io + 6 * k + 2, &ib[k], 4);
    }
    CHECK(rmpi_coll_op_check(MPI_MINLOC, MPI_SHORT_INT) == 0, "MINLOC on SHORT_INT");
    rmpi_coll_op_apply(MPI_MINLOC, MPI_SHORT_INT, in, io, 3);
    short want_v[3] = {5, 2, 1};
    int want_i[3] = {3, 4, 6};
    for (int k = 0; k < 3; k++) {
        short v;
        int i;
        memcpy(&v, io + 6 * k, 2);
        memcpy(&i, io + 6 * k + 2, 4);
        CHECK(v == want_v[k] && i == want_i[k], "MINLOC pair %d: (%d, %d), expected (%d, %d)", k, v, i, want_v[k],
              want_i[k]);
    }

    /* a vector of doubles: the packed stream is plain doubles */
    rmpi_dtype_t *v = NULL;
    CHECK(rmpi_dtype_vector(2, 2, 5, MPI_DOUBLE, 0, &v) == MPI_SUCCESS, "vector of double");
    MPI_Datatype vh = rmpi_dtype_handle(v);
    double a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    CHECK(rmpi_coll_op_check(MPI_PROD, vh) == 0 && rmpi_coll_op_check(MPI_BAND, vh) == MPI_ERR_OP,
          "PROD allowed, BAND not, on a vector of double");
    rmpi_coll_op_apply(MPI_PROD, vh, a, b, 2);
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == (i + 1) * (8 - i), "PROD on packed vector: [%d] = %g", i, b[i]);
    rmpi_coll_op_apply(MPI_REPLACE, vh, a, b, 2);
    CHECK(memcmp(a, b, sizeof a) == 0, "REPLACE copies in to inout");
    rmpi_coll_op_apply(MPI_NO_OP, vh, b, a, 2);
    CHECK(a[7] == 8, "NO_OP leaves inout");

    /* several basic types: no predefined op but REPLACE/NO_OP; user ops take anything */
    MPI_Count bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    rmpi_dtype_t *s = NULL;
    CHECK(rmpi_dtype_struct(2, bl, d, ty, 0, &s) == MPI_SUCCESS, "struct");
    CHECK(rmpi_coll_op_check(MPI_SUM, rmpi_dtype_handle(s)) == MPI_ERR_OP, "SUM on {int, double}");
    CHECK(rmpi_coll_op_check(MPI_REPLACE, rmpi_dtype_handle(s)) == 0, "REPLACE on {int, double}");
    CHECK(rmpi_coll_op_check(MPI_SUM, MPI_DATATYPE_NULL) == MPI_ERR_TYPE, "SUM on DATATYPE_NULL");
    CHECK(rmpi_coll_op_check(MPI_OP_NULL, MPI_INT) == MPI_ERR_OP, "OP_NULL");
    CHECK(rmpi_coll_op_check((MPI_Op)(uintptr_t)0x25, MPI_INT) == MPI_ERR_OP, "unassigned predefined slot");
    CHECK(rmpi_coll_op_commutative(MPI_SUM) && rmpi_coll_op_commutative(MPI_MAXLOC) &&
              !rmpi_coll_op_commutative(MPI_REPLACE),
          "predefined commutativity");
    CHECK(rmpi_coll_op_free(MPI_SUM) == MPI_ERR_OP, "freeing MPI_SUM");
    rmpi_dtype_free(s);
    rmpi_dtype_free(v);
}

/* Operands at odd addresses (a stream inside a network frame): the kernels load unaligned,
 * over a length longer than the old 4 KiB bounce chunks. */
static void test_misaligned(void)
{
    enum { N = 1300 };
    static unsigned char ia[N * 8 + 8], ib[N * 8 + 8];
    double x, y;
    for (int i = 0; i < N; i++) {
        x = i;
        y = 2.5 * i;
        memcpy(ia + 1 + 8 * i, &x, 8);
        memcpy(ib + 3 + 8 * i, &y, 8);
    }
    rmpi_coll_op_apply(MPI_SUM, MPI_DOUBLE, ia + 1, ib + 3, N);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        memcpy(&y, ib + 3 + 8 * i, 8);
        bad += y != 3.5 * i;
    }
    CHECK(!bad, "misaligned SUM on MPI_DOUBLE: %d wrong", bad);
    static unsigned char ca[64 * 32 + 1], cb[64 * 32 + 1];
    long double c[2] = {1, 2}, d[2] = {3, -1}, r[2];
    for (int i = 0; i < 64; i++) {
        memcpy(ca + 1 + 32 * i, c, 32);
        memcpy(cb + 1 + 32 * i, d, 32);
    }
    rmpi_coll_op_apply(MPI_PROD, MPI_C_LONG_DOUBLE_COMPLEX, ca + 1, cb + 1, 64);
    memcpy(r, cb + 1 + 32 * 63, 32);
    CHECK(r[0] == 5 && r[1] == 5, "misaligned PROD on long double complex: (%Lg, %Lg)", r[0], r[1]);
}

int main(void)
{
    test_misaligned();
    test_user();
    test_predefined();
    return finish("op_apply");
}
