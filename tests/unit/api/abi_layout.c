/*
 * Pins include/mpi.h to the MPI-5.0 standard ABI: struct layout, integer
 * widths, and a sample of handle and constant values checked against the
 * MPI Forum's reference header (mpi-forum/mpi-abi-stubs mpi.h, commit 90d88b0).
 * A failure here means binaries built against the standard ABI would misbehave.
 */
#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

_Static_assert(sizeof(MPI_Status) == 32, "MPI_Status is 8 ints");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == 0, "MPI_SOURCE first");
_Static_assert(offsetof(MPI_Status, MPI_TAG) == 4, "MPI_TAG second");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == 8, "MPI_ERROR third");
_Static_assert(offsetof(MPI_Status, MPI_internal) == 12, "hidden fields follow");
_Static_assert(sizeof(((MPI_Status *)0)->MPI_internal) == 5 * sizeof(int), "five hidden ints");
_Static_assert(sizeof(MPI_Aint) == sizeof(void *), "MPI_Aint is pointer sized");
_Static_assert(sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8, "64-bit offset and count");
_Static_assert(sizeof(MPI_Comm) == sizeof(void *), "handles are pointers");
_Static_assert(MPI_F_STATUS_SIZE * sizeof(int) == sizeof(MPI_Status), "Fortran status has the C status size");
_Static_assert(MPI_VERSION == 5 && MPI_SUBVERSION == 0, "MPI-5.0");
_Static_assert(MPI_ABI_VERSION == 1 && MPI_ABI_SUBVERSION == 0, "standard ABI 1.0");
_Static_assert(RMPI_ABI_VERSION_MAJOR == MPI_ABI_VERSION && RMPI_ABI_VERSION_MINOR == MPI_ABI_SUBVERSION,
               "MPI_Abi_get_version reports the header's ABI version");
_Static_assert(MPI_ERR_TRUNCATE == 15, "error class value");
_Static_assert(MPI_ERR_UNSUPPORTED_OPERATION == 55, "error class value");
_Static_assert(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                   MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
               "thread levels are ordered");

static int failures;

static void check_long(const char *what, long got, long want)
{
    if (got != want) {
        printf("FAIL %s: got %ld (0x%lx), want %ld (0x%lx)\n", what, got, (unsigned long)got, want,
               (unsigned long)want);
        failures++;
    }
}

/* Handles are compared through their integer value, as the ABI defines them. */
#define CHECK_HANDLE(h, v) check_long(#h, (long)(intptr_t)(h), (long)(v))
#define CHECK_INT(c, v) check_long(#c, (long)(c), (long)(v))

int main(void)
{
    MPI_Status st;

    check_long("offsetof(MPI_Status, MPI_TAG)", (long)((char *)&st.MPI_TAG - (char *)&st), 4);
    check_long("offsetof(MPI_Status, MPI_ERROR)", (long)((char *)&st.MPI_ERROR - (char *)&st), 8);
    check_long("offsetof(MPI_Status, MPI_internal)", (long)((char *)st.MPI_internal - (char *)&st), 12);
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
    CHECK_HANDLE(MPI_LOGICAL, 0x218);
    CHECK_HANDLE(MPI_INTEGER, 0x219);
    CHECK_HANDLE(MPI_CHARACTER, 0x21e);
    CHECK_HANDLE(MPI_LOGICAL1, 0x2c0);
    CHECK_HANDLE(MPI_INTEGER1, 0x2c1);
    CHECK_HANDLE(MPI_INTEGER4, 0x2d1);
    CHECK_HANDLE(MPI_REAL8, 0x2da);
    CHECK_HANDLE(MPI_INTEGER16, 0x2e1);

    CHECK_INT(MPI_SUCCESS, 0);
    CHECK_INT(MPI_ERR_TRUNCATE, 15);
    CHECK_INT(MPI_ERR_OTHER, 16);
    CHECK_INT(MPI_ERR_IN_STATUS, 19);
    CHECK_INT(MPI_ERR_QUOTA, 44);
    CHECK_INT(MPI_ERR_UNSUPPORTED_OPERATION, 55);
    CHECK_INT(MPI_ERR_WIN, 56);
    CHECK_INT(MPI_ERR_PROC_ABORTED, 58);
    CHECK_INT(MPI_ERR_SESSION, 60);
    CHECK_INT(MPI_ERR_ERRHANDLER, 61);
    CHECK_INT(MPI_ERR_ABI, 62);
    CHECK_INT(MPI_T_ERR_CANNOT_INIT, 1001);
    CHECK_INT(MPI_T_ERR_PVAR_NO_ATOMIC, 1018);
    CHECK_INT(MPI_ERR_LASTCODE, 0x3fff);

    CHECK_INT(MPI_ANY_SOURCE, -1);
    CHECK_INT(MPI_ANY_TAG, -2);
    CHECK_INT(MPI_PROC_NULL, -3);
    CHECK_INT(MPI_ROOT, -4);
    CHECK_INT(MPI_UNDEFINED, -32766);
    CHECK_INT(MPI_KEYVAL_INVALID, 0);
    CHECK_INT(MPI_DISPLACEMENT_CURRENT, -1);
    CHECK_INT(sizeof(MPI_DISPLACEMENT_CURRENT), sizeof(MPI_Offset));

    CHECK_INT(MPI_THREAD_SINGLE, 0);
    CHECK_INT(MPI_THREAD_FUNNELED, 1024);
    CHECK_INT(MPI_THREAD_SERIALIZED, 2048);
    CHECK_INT(MPI_THREAD_MULTIPLE, 4096);
    CHECK_INT(MPI_MODE_NOCHECK, 1024);
    CHECK_INT(MPI_COMBINER_NAMED, 101);
    CHECK_INT(MPI_COMBINER_F90_INTEGER, 113);
    CHECK_INT(MPI_COMBINER_VALUE_INDEX, 117);
    CHECK_INT(MPI_TYPECLASS_INTEGER, 192);
    CHECK_INT(MPI_TYPECLASS_COMPLEX, 194);
    CHECK_INT(MPI_IDENT, 201);
    CHECK_INT(MPI_CART, 211);
    CHECK_INT(MPI_COMM_TYPE_SHARED, 221);
    CHECK_INT(MPI_LOCK_EXCLUSIVE, 301);
    CHECK_INT(MPI_LOCK_SHARED, 302);
    CHECK_INT(MPI_WIN_FLAVOR_CREATE, 311);
    CHECK_INT(MPI_WIN_UNIFIED, 321);
    CHECK_INT(MPI_SEEK_SET, 401);
    CHECK_INT(MPI_SEEK_END, 403);
    CHECK_INT(MPI_TAG_UB, 501);
    CHECK_INT(MPI_LASTUSEDCODE, 507);
    CHECK_INT(MPI_WIN_BASE, 601);
    CHECK_INT(MPI_WIN_MODEL, 605);
    CHECK_INT(MPI_T_BIND_MPI_SESSION, 12);
    CHECK_INT(MPI_T_VERBOSITY_USER_BASIC, 0x09);
    CHECK_INT(MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, 0x3f);
    CHECK_INT(MPI_MAX_PROCESSOR_NAME, 256);
    CHECK_INT(MPI_MAX_PSET_NAME_LEN, 1024);
    CHECK_INT(MPI_BSEND_OVERHEAD, 512);
    CHECK_INT(MPI_VERSION, 5);
    CHECK_INT(MPI_SUBVERSION, 0);
    CHECK_INT(MPI_ABI_VERSION, 1);
    CHECK_INT(MPI_ABI_SUBVERSION, 0);
    CHECK_HANDLE(MPI_IN_PLACE, 1);
    CHECK_HANDLE(MPI_UNWEIGHTED, 10);
    CHECK_HANDLE(MPI_WEIGHTS_EMPTY, 11);

    if (failures) {
        printf("abi_layout: %d check(s) failed\n", failures);
        return 1;
    }
    printf("abi_layout: all checks passed\n");
    return 0;
}
