/* Attributes: predefined attributes of WORLD; user keyvals with copy/delete callbacks
 * counted on dup, set-over, delete and free (in the standard's order); NULL_COPY and
 * DUP_FN; freeing a keyval still in use; the MPI-1 spellings; datatype attributes through
 * Type_dup/Type_free; delete callbacks of MPI_COMM_SELF run inside MPI_Finalize; bad
 * keyvals give MPI_ERR_KEYVAL. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int copies, deletes, order[16], norder, self_deleted;
static int extra_seen;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval;
    copies++;
    extra_seen = *(int *)extra;
    *(void **)out = (char *)in + 1; /* the copy is the value plus one */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    deletes++;
    if (norder < 16)
        order[norder++] = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra, (void)in, (void)out, (void)flag;
    return MPI_ERR_OTHER;
}

static int freeing_key, freeing_rc = -1;
static int freeing_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    int k = freeing_key;
    freeing_rc = MPI_Comm_free_keyval(&k);
    return MPI_SUCCESS;
}

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval, (void)val, (void)extra;
    int fin = 1;
    MPI_Finalized(&fin);
    self_deleted = comm == MPI_COMM_SELF && !fin ? 1 : -1; /* MPI must still be usable */
    return MPI_SUCCESS;
}

static int tcopies, tdeletes;
static int type_copy(MPI_Datatype t, int k, void *e, void *in, void *out, int *flag)
{
    (void)t, (void)k, (void)e;
    tcopies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int type_delete(MPI_Datatype t, int k, void *v, void *e)
{
    (void)t, (void)k, (void)v, (void)e;
    tdeletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int *v, flag;

    /* predefined attributes */
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MTEST_CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, flag ? *v : 0);
    int tag_ub = *v;
    MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, mtest_rank, tag_ub, MPI_COMM_WORLD));
    MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, mtest_rank, tag_ub, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    MTEST_CHECK(flag && *v == MPI_PROC_NULL, "MPI_HOST: %d", *v);
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    MTEST_CHECK(flag && (*v == MPI_ANY_SOURCE || *v == mtest_rank), "MPI_IO: %d", *v);
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    MTEST_CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL: %d", *v);
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    MTEST_CHECK(flag && *v >= mtest_size, "MPI_UNIVERSE_SIZE: %d", *v);
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    MTEST_CHECK(flag && *v == 0, "MPI_APPNUM: %d", *v);
    MTEST_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MTEST_CHECK(flag && *v == tag_ub, "Attr_get(MPI_TAG_UB): %d", *v);

    /* user keyvals: copy on dup, delete on free and on set-over */
    int extra = 42, k1, k2, k3;
    MTEST_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &k1, &extra));
    MTEST_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k2, NULL));
    MTEST_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL));
    MPI_Comm d, dd;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MTEST_OK(MPI_Comm_set_attr(d, k1, (void *)(intptr_t)100));
    MTEST_OK(MPI_Comm_set_attr(d, k2, (void *)(intptr_t)200));
    MTEST_OK(MPI_Comm_set_attr(d, k3, (void *)(intptr_t)300));
    MTEST_OK(MPI_Comm_set_attr(d, k2, (void *)(intptr_t)201)); /* deletes 200 first */
    MTEST_CHECK(deletes == 1 && order[0] == 200, "set-over: %d deletes, first %d", deletes, order[0]);
    void *got;
    MTEST_OK(MPI_Comm_get_attr(d, k2, &got, &flag));
    MTEST_CHECK(flag && (intptr_t)got == 201, "get k2: flag %d value %ld", flag, (long)(intptr_t)got);
    MTEST_OK(MPI_Comm_dup(d, &dd));
    MTEST_CHECK(copies == 1 && extra_seen == 42, "dup: %d copies, extra %d", copies, extra_seen);
    MTEST_OK(MPI_Comm_get_attr(dd, k1, &got, &flag));
    MTEST_CHECK(flag && (intptr_t)got == 101, "dup k1: flag %d value %ld", flag, (long)(intptr_t)got);
    MTEST_OK(MPI_Comm_get_attr(dd, k2, &got, &flag));
    MTEST_CHECK(!flag, "NULL_COPY_FN attribute was copied");
    MTEST_OK(MPI_Comm_get_attr(dd, k3, &got, &flag));
    MTEST_CHECK(flag && (intptr_t)got == 300, "DUP_FN k3: flag %d value %ld", flag, (long)(intptr_t)got);
    /* free: delete callbacks, last set first (k3 has none, so k2 (201) then k1 (100)) */
    norder = 0;
    deletes = 0;
    MTEST_OK(MPI_Comm_free(&d));
    MTEST_CHECK(deletes == 2 && order[0] == 201 && order[1] == 100, "free: %d deletes, order %d %d", deletes, order[0],
                order[1]);
    /* a freed keyval keeps working for attributes already set */
    MTEST_OK(MPI_Comm_free_keyval(&k1));
    MTEST_CHECK(k1 == MPI_KEYVAL_INVALID, "free_keyval did not reset the key");
    deletes = 0;
    norder = 0;
    MTEST_OK(MPI_Comm_delete_attr(dd, k3));
    MTEST_OK(MPI_Comm_get_attr(dd, k3, &got, &flag));
    MTEST_CHECK(!flag, "attribute still there after delete_attr");
    MTEST_OK(MPI_Comm_free(&dd));
    MTEST_CHECK(deletes == 1 && order[0] == 101, "free after keyval freed: %d deletes (value %d)", deletes, order[0]);

    /* Reference-counted keyvals: a second free through a copy of the handle while an
     * attribute still uses it is accepted, and so is a free from the keyval's own delete
     * callback; the attribute stays usable until it goes. */
    int kr, kr_copy;
    MTEST_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, freeing_delete, &kr, NULL));
    kr_copy = kr;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MTEST_OK(MPI_Comm_set_attr(d, kr, (void *)(intptr_t)5));
    MTEST_OK(MPI_Comm_free_keyval(&kr));
    MTEST_OK(MPI_Comm_get_attr(d, kr_copy, &got, &flag));
    MTEST_CHECK(flag && (intptr_t)got == 5, "attribute of a freed keyval: flag %d", flag);
    freeing_key = kr_copy;
    MTEST_OK(MPI_Comm_free(&d)); /* its delete callback frees the keyval again */
    MTEST_CHECK(freeing_rc == MPI_SUCCESS, "free_keyval inside the delete callback: %d", freeing_rc);
    MTEST_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kr, NULL));
    kr_copy = kr;
    int kr_use = kr;
    MTEST_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kr, NULL));
    MTEST_OK(MPI_Comm_free_keyval(&kr));
    MTEST_OK(MPI_Comm_free_keyval(&kr_copy)); /* a copy of the handle, still in use */
    MTEST_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kr_use));

    /* a failing copy callback fails the dup */
    int kf;
    MTEST_OK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kf, NULL));
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MTEST_OK(MPI_Comm_set_attr(d, kf, NULL));
    MTEST_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    MTEST_CHECK(MPI_Comm_dup(d, &dd) != MPI_SUCCESS, "dup with a failing copy callback succeeded");
    MTEST_OK(MPI_Comm_free(&d));
    MTEST_OK(MPI_Comm_free_keyval(&kf));

    /* MPI-1 spellings */
    int ko;
    MTEST_OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &ko, NULL));
    MTEST_OK(MPI_Attr_put(MPI_COMM_WORLD, ko, (void *)(intptr_t)7));
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MTEST_OK(MPI_Attr_get(d, ko, &got, &flag));
    MTEST_CHECK(flag && (intptr_t)got == 7, "Attr_get after dup: flag %d value %ld", flag, (long)(intptr_t)got);
    MTEST_OK(MPI_Attr_delete(d, ko));
    MTEST_OK(MPI_Comm_free(&d));
    MTEST_OK(MPI_Attr_delete(MPI_COMM_WORLD, ko));
    MTEST_OK(MPI_Keyval_free(&ko));

    /* datatype attributes */
    int kt;
    MPI_Datatype t, t2;
    MTEST_OK(MPI_Type_create_keyval(type_copy, type_delete, &kt, NULL));
    MTEST_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MTEST_OK(MPI_Type_set_attr(t, kt, (void *)(intptr_t)9));
    MTEST_OK(MPI_Type_dup(t, &t2));
    MTEST_OK(MPI_Type_get_attr(t2, kt, &got, &flag));
    MTEST_CHECK(tcopies == 1 && flag && (intptr_t)got == 9, "Type_dup: %d copies, flag %d", tcopies, flag);
    MTEST_OK(MPI_Type_free(&t));
    MTEST_OK(MPI_Type_free(&t2));
    MTEST_CHECK(tdeletes == 2, "Type_free: %d deletes", tdeletes);
    MTEST_OK(MPI_Type_set_attr(MPI_INT, kt, (void *)(intptr_t)1));
    MTEST_OK(MPI_Type_delete_attr(MPI_INT, kt));
    MTEST_CHECK(tdeletes == 3, "Type_delete_attr on MPI_INT: %d deletes", tdeletes);

    /* bad keyvals */
    mtest_errors_return(MPI_COMM_WORLD);
    MTEST_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, kt, NULL), MPI_ERR_KEYVAL); /* a type keyval */
    MTEST_ERR(MPI_Type_set_attr(MPI_INT, k2 + 1000, NULL), MPI_ERR_KEYVAL);
    MTEST_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
    MTEST_ERR(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
    int pre = MPI_TAG_UB;
    MTEST_ERR(MPI_Comm_free_keyval(&pre), MPI_ERR_KEYVAL);
    MTEST_ERR(MPI_Comm_get_attr(MPI_COMM_NULL, k2, &got, &flag), MPI_ERR_COMM);
    MTEST_OK(MPI_Comm_free_keyval(&k2));
    MTEST_ERR(MPI_Comm_free_keyval(&k2), MPI_ERR_KEYVAL);
    MTEST_OK(MPI_Comm_free_keyval(&k3));
    MTEST_OK(MPI_Type_free_keyval(&kt));

    /* MPI_COMM_SELF's delete callbacks run at the start of MPI_Finalize */
    int ks;
    MTEST_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &ks, NULL));
    MTEST_OK(MPI_Comm_set_attr(MPI_COMM_SELF, ks, NULL));
    int rc = mtest_finalize();
    if (self_deleted != 1) {
        fprintf(stderr, "[rank %d] MPI_COMM_SELF's delete callback: %s\n", mtest_rank,
                self_deleted ? "ran after MPI was finalized" : "never ran");
        return 1;
    }
    return rc;
}
