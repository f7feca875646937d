/* Standard-ABI handle conversions: predefined handles convert to their own values, user
 * handles to stable integers that convert back to the same handle, distinct objects to
 * distinct integers; the status field accessors. */
#include "mtest.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MTEST_CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == (int)(intptr_t)MPI_COMM_WORLD, "COMM_WORLD converts to itself");
    MTEST_CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_SELF)) == MPI_COMM_SELF, "COMM_SELF round trip");
    MTEST_CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE, "MPI_DOUBLE round trip");
    MTEST_CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM, "MPI_SUM round trip");
    MTEST_CHECK(MPI_Request_fromint(MPI_Request_toint(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "REQUEST_NULL");

    /* the standard ABI's info queries and the one window name there is */
    MPI_Info abi;
    char val[MPI_MAX_INFO_VAL + 1];
    int vlen = (int)sizeof val, flag = 0;
    MTEST_OK(MPI_Abi_get_info(&abi));
    MTEST_OK(MPI_Info_get_string(abi, "mpi_count_size", &vlen, val, &flag));
    MTEST_CHECK(flag && atoi(val) == (int)sizeof(MPI_Count), "mpi_count_size: flag %d, value '%s'", flag, val);
    MPI_Info_free(&abi);
    MTEST_OK(MPI_Abi_get_fortran_info(&abi));
    vlen = (int)sizeof val;
    MTEST_OK(MPI_Info_get_string(abi, "mpi_integer_size", &vlen, val, &flag));
    int isz = 0;
    MPI_Type_size(MPI_INTEGER, &isz);
    MTEST_CHECK(flag && atoi(val) == isz, "mpi_integer_size: flag %d, value '%s', MPI_INTEGER %d", flag, val, isz);
    MPI_Info_free(&abi);
    char wname[MPI_MAX_OBJECT_NAME];
    int wlen = 0;
    MTEST_OK(MPI_Win_get_name(MPI_WIN_NULL, wname, &wlen));
    MTEST_CHECK(wlen == 12 && !strcmp(wname, "MPI_WIN_NULL"), "MPI_WIN_NULL is named '%s'", wname);

    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    int ia = MPI_Comm_toint(a), ib = MPI_Comm_toint(b);
    MTEST_CHECK(ia != ib, "two communicators share the integer %d", ia);
    MTEST_CHECK(MPI_Comm_toint(a) == ia, "the same communicator converts to another integer");
    MTEST_CHECK(MPI_Comm_fromint(ia) == a && MPI_Comm_fromint(ib) == b, "communicator round trip");
    int size = -1;
    MPI_Comm_size(MPI_Comm_fromint(ib), &size);
    MTEST_CHECK(size == mtest_size, "a converted-back communicator works (size %d)", size);

    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    int iv = MPI_Type_toint(v);
    MTEST_CHECK(iv != ia && MPI_Type_fromint(iv) == v, "datatype round trip");
    MPI_Request r;
    int x = 0;
    MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
    MTEST_CHECK(MPI_Request_fromint(MPI_Request_toint(r)) == r, "request round trip");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    /* many requests, one after the other: their integers are the few slots they reuse */
    int imax = 0, imin = INT_MAX;
    for (int i = 0; i < 1000; i++) {
        MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
        int ir = MPI_Request_toint(r);
        MTEST_CHECK(MPI_Request_fromint(ir) == r, "request %d round trip", i);
        imax = ir > imax ? ir : imax, imin = ir < imin ? ir : imin;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MTEST_CHECK(imax - imin < 4, "1000 requests in turn took integers %d..%d", imin, imax);

    MPI_Status st;
    MPI_Status_set_source(&st, 3);
    MPI_Status_set_tag(&st, 77);
    MPI_Status_set_error(&st, MPI_ERR_TAG);
    int s = 0, t = 0, e = 0;
    MPI_Status_get_source(&st, &s);
    MPI_Status_get_tag(&st, &t);
    MPI_Status_get_error(&st, &e);
    MTEST_CHECK(s == 3 && t == 77 && e == MPI_ERR_TAG, "status fields %d %d %d", s, t, e);
    MTEST_CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 77, "the accessors write the public fields");

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MTEST_CHECK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len) == MPI_SUCCESS && !strcmp(name, "MPI_DATATYPE_NULL") &&
                    len == 17,
                "Type_get_name(MPI_DATATYPE_NULL) gave '%s'", name);
    MTEST_CHECK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len) == MPI_SUCCESS && !strcmp(name, "MPI_COMM_NULL"),
                "Comm_get_name(MPI_COMM_NULL) gave '%s'", name);

    MPI_Type_free(&v);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    return mtest_finalize();
}
