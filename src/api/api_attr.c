/* Attribute bindings: keyvals and cached attributes of communicators and datatypes, the
 * predefined attributes of communicators, the MPI-1 spellings (Keyval_*, Attr_*). */
#include "api_pt2pt.h"

#include "../rma/rma.h"

static int appnum;
static int attr_values[8]; /* indexed by key - MPI_TAG_UB */

void rmpi_api_attr_init(int app) { appnum = app; }

/* Predefined keys: the same value on every communicator (the standard caches them on
 * MPI_COMM_WORLD; answering on all is what applications expect). */
static int *predefined(int key)
{
    if (key < MPI_TAG_UB || key > MPI_LASTUSEDCODE)
        return NULL;
    int v = 0;
    switch (key) {
    case MPI_TAG_UB: v = RMPI_TAG_UB; break;
    case MPI_IO: v = MPI_ANY_SOURCE; break;  /* every process can do I/O */
    case MPI_HOST: v = MPI_PROC_NULL; break; /* no host process */
    case MPI_WTIME_IS_GLOBAL: v = 0; break;  /* clocks are per node */
    case MPI_UNIVERSE_SIZE: v = rmpi_core_size; break;
    case MPI_APPNUM: v = appnum; break;
    case MPI_LASTUSEDCODE: v = rmpi_api_last_used_code(); break;
    }
    attr_values[key - MPI_TAG_UB] = v;
    return &attr_values[key - MPI_TAG_UB];
}

#define GET_COMM(c, comm)                 \
    RMPI_API_INIT_CHECK();                \
    rmpi_comm_t *c = rmpi_comm_get(comm); \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)(comm))

/* Callbacks are stored with a generic type and called back with their own (attr.c). */
static int create_keyval(const char *func, int kind, void (*copy_fn)(void), void (*delete_fn)(void), int *keyval,
                         void *extra_state)
{
    if (!keyval)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "keyval must not be NULL");
    *keyval = rmpi_keyval_create(kind, (rmpi_attr_copy_fn)copy_fn, (rmpi_attr_delete_fn)delete_fn, extra_state);
    return MPI_SUCCESS;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                           void *extra_state)
{
    RMPI_API_INIT_CHECK();
    return create_keyval(__func__, RMPI_ATTR_COMM, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                         extra_state);
}

static int free_keyval(const char *func, int kind, int *keyval)
{
    if (!keyval)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "keyval must not be NULL");
    if (rmpi_keyval_free(kind, *keyval))
        return rmpi_api_error(NULL, MPI_ERR_KEYVAL, func,
                              "%d is not a keyval of this object kind that can be freed "
                              "(predefined, already freed or never created)",
                              *keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int MPI_Comm_free_keyval(int *keyval)
{
    RMPI_API_INIT_CHECK();
    return free_keyval(__func__, RMPI_ATTR_COMM, keyval);
}

static int set_attr(const char *func, rmpi_comm_t *err_comm, void **attrs, int kind, void *handle, int keyval,
                    void *val)
{
    if (predefined(keyval) || !rmpi_keyval_valid(kind, keyval))
        return rmpi_api_error(err_comm, MPI_ERR_KEYVAL, func,
                              "keyval %d is predefined, freed or of another object "
                              "kind",
                              keyval);
    int rc = rmpi_attr_set(attrs, kind, handle, keyval, val);
    return rc ? rmpi_api_error(err_comm, rc, func, "the delete callback of keyval %d returned error %d", keyval, rc)
              : MPI_SUCCESS;
}

static int get_attr(const char *func, rmpi_comm_t *err_comm, void *attrs, int kind, int keyval, void *val, int *flag)
{
    if (!val || !flag)
        return rmpi_api_error(err_comm, MPI_ERR_ARG, func, "attribute_val and flag must not be NULL");
    int *p = kind == RMPI_ATTR_COMM ? predefined(keyval) : NULL;
    if (p) {
        *(int **)val = p;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!rmpi_keyval_valid(kind, keyval))
        return rmpi_api_error(err_comm, MPI_ERR_KEYVAL, func, "keyval %d is invalid for this object kind", keyval);
    void *v = NULL;
    *flag = rmpi_attr_get(attrs, keyval, &v);
    if (*flag)
        *(void **)val = v;
    return MPI_SUCCESS;
}

static int delete_attr(const char *func, rmpi_comm_t *err_comm, void **attrs, int kind, void *handle, int keyval)
{
    if (predefined(keyval) || !rmpi_keyval_valid(kind, keyval))
        return rmpi_api_error(err_comm, MPI_ERR_KEYVAL, func, "keyval %d is predefined or invalid", keyval);
    int rc = rmpi_attr_delete(attrs, kind, handle, keyval);
    return rc ? rmpi_api_error(err_comm, rc, func, "could not delete the attribute of keyval %d (error %d)", keyval, rc)
              : MPI_SUCCESS;
}

int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    GET_COMM(c, comm);
    return set_attr(__func__, c, &c->attrs, RMPI_ATTR_COMM, c->handle, keyval, attribute_val);
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    GET_COMM(c, comm);
    return get_attr(__func__, c, c->attrs, RMPI_ATTR_COMM, keyval, attribute_val, flag);
}

int MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    GET_COMM(c, comm);
    return delete_attr(__func__, c, &c->attrs, RMPI_ATTR_COMM, c->handle, keyval);
}

/* MPI-1 spellings: the same functions (the copy/delete signatures are the comm ones). */
int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
    return MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

int MPI_Keyval_free(int *keyval) { return MPI_Comm_free_keyval(keyval); }
int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return MPI_Comm_set_attr(comm, keyval, attribute_val);
}
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
int MPI_Attr_delete(MPI_Comm comm, int keyval) { return MPI_Comm_delete_attr(comm, keyval); }

/* ---- datatypes ---- */

#define GET_TYPE(dt, h)                   \
    RMPI_API_INIT_CHECK();                \
    rmpi_dtype_t *dt = rmpi_dtype_get(h); \
    RMPI_CHECK(dt, NULL, MPI_ERR_TYPE, "invalid datatype %p", (void *)(h))

int MPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn, MPI_Type_delete_attr_function *delete_fn, int *keyval,
                           void *extra_state)
{
    RMPI_API_INIT_CHECK();
    return create_keyval(__func__, RMPI_ATTR_TYPE, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                         extra_state);
}

int MPI_Type_free_keyval(int *keyval)
{
    RMPI_API_INIT_CHECK();
    return free_keyval(__func__, RMPI_ATTR_TYPE, keyval);
}

int MPI_Type_set_attr(MPI_Datatype type, int keyval, void *attribute_val)
{
    GET_TYPE(dt, type);
    return set_attr(__func__, NULL, &dt->attrs, RMPI_ATTR_TYPE, (void *)type, keyval, attribute_val);
}

int MPI_Type_get_attr(MPI_Datatype type, int keyval, void *attribute_val, int *flag)
{
    GET_TYPE(dt, type);
    return get_attr(__func__, NULL, dt->attrs, RMPI_ATTR_TYPE, keyval, attribute_val, flag);
}

int MPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
    GET_TYPE(dt, type);
    return delete_attr(__func__, NULL, &dt->attrs, RMPI_ATTR_TYPE, (void *)type, keyval);
}

int rmpi_api_type_attr_dup(MPI_Datatype oldtype, MPI_Datatype newtype)
{
    rmpi_dtype_t *o = rmpi_dtype_get(oldtype), *n = rmpi_dtype_get(newtype);
    if (!o || !n || !o->attrs)
        return MPI_SUCCESS;
    int rc = rmpi_attr_copy(o->attrs, RMPI_ATTR_TYPE, (void *)oldtype, &n->attrs);
    if (rc)
        rmpi_attr_delete_all(&n->attrs, RMPI_ATTR_TYPE, (void *)newtype);
    return rc;
}

int rmpi_api_type_attr_free(MPI_Datatype type)
{
    rmpi_dtype_t *dt = rmpi_dtype_get(type);
    return dt && dt->attrs ? rmpi_attr_delete_all(&dt->attrs, RMPI_ATTR_TYPE, (void *)type) : MPI_SUCCESS;
}

/* ---- windows ---- */

#define GET_WIN(w, h)                \
    RMPI_API_INIT_CHECK();           \
    rmpi_win_t *w = rmpi_win_get(h); \
    RMPI_CHECK(w, NULL, MPI_ERR_WIN, "invalid window %p", (void *)(h))

int MPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn, MPI_Win_delete_attr_function *delete_fn, int *keyval,
                          void *extra_state)
{
    RMPI_API_INIT_CHECK();
    return create_keyval(__func__, RMPI_ATTR_WIN, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                         extra_state);
}

int MPI_Win_free_keyval(int *keyval)
{
    RMPI_API_INIT_CHECK();
    return free_keyval(__func__, RMPI_ATTR_WIN, keyval);
}

int MPI_Win_set_attr(MPI_Win win, int keyval, void *attribute_val)
{
    GET_WIN(w, win);
    return set_attr(__func__, NULL, &w->attrs, RMPI_ATTR_WIN, (void *)win, keyval, attribute_val);
}

/* Predefined window attributes: MPI_WIN_BASE is the address itself, the others point to
 * values kept in the window. */
int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    GET_WIN(w, win);
    RMPI_CHECK(attribute_val && flag, NULL, MPI_ERR_ARG, "attribute_val and flag must not be NULL");
    void *v = NULL;
    switch (keyval) {
    case MPI_WIN_BASE: v = w->base; break;
    case MPI_WIN_SIZE: v = &w->attr_size; break;
    case MPI_WIN_DISP_UNIT: v = &w->attr_disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = &w->attr_flavor; break;
    case MPI_WIN_MODEL: v = &w->attr_model; break;
    default: return get_attr(__func__, NULL, w->attrs, RMPI_ATTR_WIN, keyval, attribute_val, flag);
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_Win_delete_attr(MPI_Win win, int keyval)
{
    GET_WIN(w, win);
    return delete_attr(__func__, NULL, &w->attrs, RMPI_ATTR_WIN, (void *)win, keyval);
}

int rmpi_api_win_attr_free(MPI_Win win)
{
    rmpi_win_t *w = rmpi_win_get(win);
    return w && w->attrs ? rmpi_attr_delete_all(&w->attrs, RMPI_ATTR_WIN, (void *)win) : MPI_SUCCESS;
}

/* MPI_Finalize begins by freeing MPI_COMM_SELF's attributes (last set first), so
 * libraries can hook their clean-up there; then MPI_COMM_WORLD's. */
int rmpi_api_attr_finalize(void)
{
    int rc = rmpi_attr_delete_all(&rmpi_comm_self.attrs, RMPI_ATTR_COMM, MPI_COMM_SELF);
    int rc2 = rmpi_attr_delete_all(&rmpi_comm_world.attrs, RMPI_ATTR_COMM, MPI_COMM_WORLD);
    return rc ? rc : rc2;
}
