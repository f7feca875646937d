/* Attribute caching for communicators, datatypes and windows: one keyval table and a
 * per-object list kept in the order attributes were set. User callbacks run here, so
 * callers must not hold the library lock; the table has its own small lock. */
#include "comm.h"

#include <pthread.h>
#include <stdlib.h>

#define KEYVAL_BASE 1000 /* above the predefined keys (MPI_TAG_UB.., MPI_WIN_BASE..) */

typedef struct keyval {
    int kind;
    int live; /* not yet freed by the user */
    int refs; /* the user's handle + attributes still using it */
    rmpi_attr_copy_fn copy;
    rmpi_attr_delete_fn del;
    void *extra;
} keyval_t;

typedef struct attr {
    struct attr *next;
    int keyval;
    void *val;
} attr_t;

static keyval_t *kvs;
static int nkv, capkv;
static pthread_mutex_t kv_lock = PTHREAD_MUTEX_INITIALIZER;

static keyval_t *kv_find(int kind, int keyval, int need_live)
{
    int i = keyval - KEYVAL_BASE;
    if (i < 0 || i >= nkv || kvs[i].kind != kind || kvs[i].refs == 0 || (need_live && !kvs[i].live))
        return NULL;
    return &kvs[i];
}

int rmpi_keyval_create(int kind, rmpi_attr_copy_fn copy, rmpi_attr_delete_fn del, void *extra)
{
    pthread_mutex_lock(&kv_lock);
    if (nkv == capkv) {
        capkv = capkv ? 2 * capkv : 16;
        kvs = rmpi_xrealloc(kvs, (size_t)capkv * sizeof *kvs);
    }
    kvs[nkv] = (keyval_t){kind, 1, 1, copy, del, extra};
    int id = KEYVAL_BASE + nkv++;
    pthread_mutex_unlock(&kv_lock);
    return id;
}

static void kv_unref(keyval_t *k)
{
    pthread_mutex_lock(&kv_lock);
    k->refs--;
    pthread_mutex_unlock(&kv_lock);
}

/* The user's handle gives up its reference once; a keyval that attributes still use stays
 * valid for them, and freeing it again (through a copy of the handle, or from one of its
 * own delete callbacks) is accepted as a no-op while it exists, as MPICH and Open MPI do. */
int rmpi_keyval_free(int kind, int keyval)
{
    pthread_mutex_lock(&kv_lock);
    keyval_t *k = kv_find(kind, keyval, 0);
    if (k && k->live) {
        k->live = 0;
        k->refs--;
    }
    pthread_mutex_unlock(&kv_lock);
    return k ? MPI_SUCCESS : MPI_ERR_KEYVAL;
}

int rmpi_keyval_valid(int kind, int keyval)
{
    pthread_mutex_lock(&kv_lock);
    int ok = kv_find(kind, keyval, 0) != NULL;
    pthread_mutex_unlock(&kv_lock);
    return ok;
}

/* The standard's predefined copy/delete functions are the values 0 and 1. */
static int call_delete(const keyval_t *k, void *handle, int keyval, void *val)
{
    if ((uintptr_t)k->del <= 1)
        return MPI_SUCCESS;
    switch (k->kind) {
    case RMPI_ATTR_COMM:
        return ((MPI_Comm_delete_attr_function *)(void (*)(void))k->del)((MPI_Comm)handle, keyval, val, k->extra);
    case RMPI_ATTR_TYPE:
        return ((MPI_Type_delete_attr_function *)(void (*)(void))k->del)((MPI_Datatype)handle, keyval, val, k->extra);
    default: return ((MPI_Win_delete_attr_function *)(void (*)(void))k->del)((MPI_Win)handle, keyval, val, k->extra);
    }
}

static int call_copy(const keyval_t *k, void *handle, int keyval, void *in, void **out, int *flag)
{
    *flag = 0;
    if ((uintptr_t)k->copy == 0)
        return MPI_SUCCESS;
    if ((uintptr_t)k->copy == 1) {
        *out = in;
        *flag = 1;
        return MPI_SUCCESS;
    }
    switch (k->kind) {
    case RMPI_ATTR_COMM:
        return ((MPI_Comm_copy_attr_function *)(void (*)(void))k->copy)((MPI_Comm)handle, keyval, k->extra, in, out,
                                                                        flag);
    case RMPI_ATTR_TYPE:
        return ((MPI_Type_copy_attr_function *)(void (*)(void))k->copy)((MPI_Datatype)handle, keyval, k->extra, in, out,
                                                                        flag);
    default:
        return ((MPI_Win_copy_attr_function *)(void (*)(void))k->copy)((MPI_Win)handle, keyval, k->extra, in, out,
                                                                       flag);
    }
}

static attr_t **attr_slot(void **attrs, int keyval)
{
    attr_t **p = (attr_t **)attrs;
    while (*p && (*p)->keyval != keyval)
        p = &(*p)->next;
    return p;
}

static void attr_append(void **attrs, int keyval, void *val)
{
    attr_t **p = attr_slot(attrs, -1), *a = rmpi_xmalloc(sizeof *a);
    *a = (attr_t){NULL, keyval, val};
    *p = a;
}

int rmpi_attr_set(void **attrs, int kind, void *handle, int keyval, void *val)
{
    keyval_t *k = kv_find(kind, keyval, 1);
    if (!k)
        return MPI_ERR_KEYVAL;
    attr_t **p = attr_slot(attrs, keyval);
    if (*p) {
        int rc = call_delete(k, handle, keyval, (*p)->val);
        if (rc)
            return rc;
        (*p)->val = val;
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&kv_lock);
    k->refs++;
    pthread_mutex_unlock(&kv_lock);
    attr_append(attrs, keyval, val);
    return MPI_SUCCESS;
}

int rmpi_attr_get(void *attrs, int keyval, void **val)
{
    attr_t **p = attr_slot(&attrs, keyval);
    if (!*p)
        return 0;
    *val = (*p)->val;
    return 1;
}

static int attr_remove(attr_t **p, int kind, void *handle)
{
    attr_t *a = *p;
    keyval_t *k = kv_find(kind, a->keyval, 0);
    int rc = k ? call_delete(k, handle, a->keyval, a->val) : MPI_SUCCESS;
    if (rc)
        return rc;
    *p = a->next;
    if (k)
        kv_unref(k);
    free(a);
    return MPI_SUCCESS;
}

int rmpi_attr_delete(void **attrs, int kind, void *handle, int keyval)
{
    if (!kv_find(kind, keyval, 0))
        return MPI_ERR_KEYVAL;
    attr_t **p = attr_slot(attrs, keyval);
    return *p ? attr_remove(p, kind, handle) : MPI_ERR_KEYVAL;
}

int rmpi_attr_copy(void *attrs, int kind, void *old_handle, void **new_attrs)
{
    for (attr_t *a = attrs; a; a = a->next) {
        keyval_t *k = kv_find(kind, a->keyval, 0);
        void *out = NULL;
        int flag = 0, rc = k ? call_copy(k, old_handle, a->keyval, a->val, &out, &flag) : MPI_SUCCESS;
        if (rc)
            return rc;
        if (flag) {
            pthread_mutex_lock(&kv_lock);
            k->refs++;
            pthread_mutex_unlock(&kv_lock);
            attr_append(new_attrs, a->keyval, out);
        }
    }
    return MPI_SUCCESS;
}

int rmpi_attr_delete_all(void **attrs, int kind, void *handle)
{
    /* the last attribute set goes first: walk to the tail each time (lists are short) */
    while (*attrs) {
        attr_t **p = (attr_t **)attrs;
        while ((*p)->next)
            p = &(*p)->next;
        int rc = attr_remove(p, kind, handle);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
