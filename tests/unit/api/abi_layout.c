/*
 * Pins include/mpi.h to the standard ABI: struct layout, integer widths, and
 * a sample of handle and constant values copied from the reference header
 * (mpiwg-abi/header_and_stub_library include/mpi.h, commit 1283b9e).
 * A failure here means binaries built against the reference would misbehave.
 */
#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

_Static_assert(sizeof(MPI_Status) == 32, "MPI_Status is 8 ints");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == 0, "MPI_SOURCE first");
_Static_assert(offsetof(MPI_Status, MPI_TAG) == 4, "MPI_TAG second");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == 8, "MPI_ERROR third");
_Static_assert(offsetof(MPI_Status, internal) == 12, "hidden fields follow");
_Static_assert(sizeof(((MPI_Status *)0)->internal) == 5 * sizeof(int), "five hidden ints");
_Static_assert(sizeof(MPI_Aint) == sizeof(void *), "MPI_Aint is pointer sized");
_Static_assert(sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8, "64-bit offset and count");
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is int");
_Static_assert(sizeof(MPI_Comm) == sizeof(void *), "handles are pointers");
_Static_assert(MPI_F_STATUS_SIZE * sizeof(MPI_Fint) == sizeof(MPI_Status),
               "Fortran status has the C status size");
_Static_assert(MPI_ERR_TRUNCATE == 15, "error class value");
_Static_assert(MPI_ERR_UNSUPPORTED_OPERATION == 58, "error class value");

static int failures;

static void check_long(const char *what, long got, long want)
{
    if (got != want) {
        printf("FAIL %s: got %ld (0x%lx), want %ld (0x%lx)\n", what, got,
               (unsigned long)got, want, (unsigned long)want);
        failures++;
    }
}

/* Handles are compared through their integer value, as the ABI defines them. */
#define CHECK_HANDLE(h, v) check_long(#h, (long)(intptr_t)(h), (long)(v))
#define CHECK_INT(c, v)    check_long(#c, (long)(c), (long)(v))

int main(void)
{
    MPI_Status st;

    check_long("offsetof(MPI_Status, MPI_TAG)", (long)((char *)&st.MPI_TAG - (char *)&st), 4);
    check_long("offsetof(MPI_Status, MPI_ERROR)", (long)((char *)&st.MPI_ERROR - (char *)&st), 8);
    check_long("offsetof(MPI_Status, internal)", (long)((char *)st.internal - (char *)&st), 12);
    CHECK_INT(sizeof(MPI_Status), 32);
    CHECK_INT(sizeof(MPI_Aint), sizeof(void *));

    CHECK_HANDLE(MPI_OP_NULL, 0x20);
    CHECK_HANDLE(MPI_SUM, 0x21);
    CHECK_HANDLE(MPI_MAXLOC, 0x39);
    CHECK_HANDLE(MPI_NO_OP, 0x3d);
    CHECK_HANDLE(MPI_COMM_NULL, 0x100);
    CHECK_HANDLE(MPI_COMM_WORLD, 0x101);
    CHECK_HANDLE(MPI_COMM_SELF, 0x102);
    CHECK_HANDLE(MPI_GROUP_EMPTY, 0x109);
    CHECK_HANDLE(MPI_WIN_NULL, 0x110);
    CHECK_HANDLE(MPI_FILE_NULL, 0x118);
    CHECK_HANDLE(MPI_SESSION_NULL, 0x120);
    CHECK_HANDLE(MPI_MESSAGE_NO_PROC, 0x129);
    CHECK_HANDLE(MPI_INFO_ENV, 0x131);
    CHECK_HANDLE(MPI_ERRORS_ARE_FATAL, 0x141);
    CHECK_HANDLE(MPI_ERRORS_RETURN, 0x142);
    CHECK_HANDLE(MPI_ERRORS_ABORT, 0x143);
    CHECK_HANDLE(MPI_REQUEST_NULL, 0x180);
    CHECK_HANDLE(MPI_DATATYPE_NULL, 0x200);
    CHECK_HANDLE(MPI_INT, 0x209);
    CHECK_HANDLE(MPI_DOUBLE, 0x214);
    CHECK_HANDLE(MPI_CHAR, 0x243);
    CHECK_HANDLE(MPI_BYTE, 0x247);
    CHECK_HANDLE(MPI_INT64_T, 0x258);
    CHECK_HANDLE(MPI_2INT, 0x22b);
    CHECK_HANDLE(MPI_LONG_LONG_INT, 0x20b);
    CHECK_HANDLE(MPI_COMPLEX32, 0x2eb);

    CHECK_INT(MPI_SUCCESS, 0);
    CHECK_INT(MPI_ERR_TRUNCATE, 15);
    CHECK_INT(MPI_ERR_OTHER, 16);
    CHECK_INT(MPI_ERR_IN_STATUS, 19);
    CHECK_INT(MPI_ERR_UNSUPPORTED_OPERATION, 58);
    CHECK_INT(MPI_ERR_ERRHANDLER, 61);
    CHECK_INT(MPI_T_ERR_PVAR_NO_ATOMIC, 1017);
    CHECK_INT(MPI_ERR_LASTCODE, 0x3fff);

    CHECK_INT(MPI_ANY_SOURCE, -1);
    CHECK_INT(MPI_PROC_NULL, -2);
    CHECK_INT(MPI_ROOT, -3);
    CHECK_INT(MPI_ANY_TAG, -31);
    CHECK_INT(MPI_KEYVAL_INVALID, -127);
    CHECK_INT(MPI_UNDEFINED, -32766);

    CHECK_INT(MPI_THREAD_SINGLE, 0);
    CHECK_INT(MPI_THREAD_MULTIPLE, 7);
    CHECK_INT(MPI_MODE_NOCHECK, 1024);
    CHECK_INT(MPI_COMBINER_VALUE_INDEX, 317);
    CHECK_INT(MPI_SEEK_SET, 603);
    CHECK_INT(MPI_TAG_UB, 10001);
    CHECK_INT(MPI_WIN_MODEL, 20005);
    CHECK_INT(MPI_MAX_PROCESSOR_NAME, 256);
    CHECK_INT(MPI_BSEND_OVERHEAD, 512);
    CHECK_HANDLE(MPI_IN_PLACE, 1);
    CHECK_HANDLE(MPI_UNWEIGHTED, 4);

    if (failures) {
        printf("abi_layout: %d check(s) failed\n", failures);
        return 1;
    }
    printf("abi_layout: all checks passed\n");
    return 0;
}
