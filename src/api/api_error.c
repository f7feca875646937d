/* Error reporting: error handlers (predefined and user), Error_string/Error_class. */
#include "api_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERRH_MAGIC 0x45525248u

typedef struct user_errh {
    uint32_t magic;
    MPI_Comm_errhandler_function *fn; /* or a session's or a file's, cast: the kind says which */
    int refcount;
    int kind;
} user_errh_t;

enum { ERRH_COMM, ERRH_SESSION, ERRH_FILE, ERRH_WIN };

/* User handlers handed out: a handle is looked up before it is read. */
static rmpi_addrset_t errh_live = RMPI_ADDRSET_INIT;
static user_errh_t *errh_user(MPI_Errhandler eh)
{
    if ((uintptr_t)eh < 4096 || !rmpi_addrset_has(&errh_live, eh, rmpi_thread_multiple))
        return NULL;
    user_errh_t *u = (user_errh_t *)eh;
    return u->magic == ERRH_MAGIC ? u : NULL;
}

static const char *const err_names[] = {
#define E(x) [x] = #x
    E(MPI_SUCCESS),
    E(MPI_ERR_BUFFER),
    E(MPI_ERR_COUNT),
    E(MPI_ERR_TYPE),
    E(MPI_ERR_TAG),
    E(MPI_ERR_COMM),
    E(MPI_ERR_RANK),
    E(MPI_ERR_REQUEST),
    E(MPI_ERR_ROOT),
    E(MPI_ERR_GROUP),
    E(MPI_ERR_OP),
    E(MPI_ERR_TOPOLOGY),
    E(MPI_ERR_DIMS),
    E(MPI_ERR_ARG),
    E(MPI_ERR_UNKNOWN),
    E(MPI_ERR_TRUNCATE),
    E(MPI_ERR_OTHER),
    E(MPI_ERR_INTERN),
    E(MPI_ERR_PENDING),
    E(MPI_ERR_IN_STATUS),
    E(MPI_ERR_ACCESS),
    E(MPI_ERR_AMODE),
    E(MPI_ERR_ASSERT),
    E(MPI_ERR_BAD_FILE),
    E(MPI_ERR_BASE),
    E(MPI_ERR_CONVERSION),
    E(MPI_ERR_DISP),
    E(MPI_ERR_DUP_DATAREP),
    E(MPI_ERR_FILE_EXISTS),
    E(MPI_ERR_FILE_IN_USE),
    E(MPI_ERR_FILE),
    E(MPI_ERR_INFO_KEY),
    E(MPI_ERR_INFO_NOKEY),
    E(MPI_ERR_INFO_VALUE),
    E(MPI_ERR_INFO),
    E(MPI_ERR_IO),
    E(MPI_ERR_KEYVAL),
    E(MPI_ERR_LOCKTYPE),
    E(MPI_ERR_NAME),
    E(MPI_ERR_NO_MEM),
    E(MPI_ERR_NOT_SAME),
    E(MPI_ERR_NO_SPACE),
    E(MPI_ERR_NO_SUCH_FILE),
    E(MPI_ERR_PORT),
    E(MPI_ERR_PROC_ABORTED),
    E(MPI_ERR_QUOTA),
    E(MPI_ERR_READ_ONLY),
    E(MPI_ERR_RMA_ATTACH),
    E(MPI_ERR_RMA_CONFLICT),
    E(MPI_ERR_RMA_RANGE),
    E(MPI_ERR_RMA_SHARED),
    E(MPI_ERR_RMA_SYNC),
    E(MPI_ERR_RMA_FLAVOR),
    E(MPI_ERR_SERVICE),
    E(MPI_ERR_SESSION),
    E(MPI_ERR_SIZE),
    E(MPI_ERR_SPAWN),
    E(MPI_ERR_UNSUPPORTED_DATAREP),
    E(MPI_ERR_UNSUPPORTED_OPERATION),
    E(MPI_ERR_VALUE_TOO_LARGE),
    E(MPI_ERR_WIN),
    E(MPI_ERR_ERRHANDLER),
    E(MPI_ERR_ABI),
    /* what the MPI_T calls return (api_mpit.c), so a tool can print them */
    E(MPI_T_ERR_CANNOT_INIT),
    E(MPI_T_ERR_NOT_ACCESSIBLE),
    E(MPI_T_ERR_NOT_INITIALIZED),
    E(MPI_T_ERR_NOT_SUPPORTED),
    E(MPI_T_ERR_MEMORY),
    E(MPI_T_ERR_INVALID),
    E(MPI_T_ERR_INVALID_INDEX),
    E(MPI_T_ERR_INVALID_ITEM),
    E(MPI_T_ERR_INVALID_SESSION),
    E(MPI_T_ERR_INVALID_HANDLE),
    E(MPI_T_ERR_INVALID_NAME),
    E(MPI_T_ERR_OUT_OF_HANDLES),
    E(MPI_T_ERR_OUT_OF_SESSIONS),
    E(MPI_T_ERR_CVAR_SET_NOT_NOW),
    E(MPI_T_ERR_CVAR_SET_NEVER),
    E(MPI_T_ERR_PVAR_NO_WRITE),
    E(MPI_T_ERR_PVAR_NO_STARTSTOP),
    E(MPI_T_ERR_PVAR_NO_ATOMIC),
#undef E
};

static const char *const err_texts[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated on receive",
    [MPI_ERR_OTHER] = "known error not in this list",
    [MPI_ERR_INTERN] = "internal MPI error",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_PROC_ABORTED] = "a process aborted",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported by RailMPI yet",
    [MPI_ERR_ERRHANDLER] = "invalid error handler",
    [MPI_ERR_ABI] = "the application and the library disagree on the ABI",
    [MPI_T_ERR_NOT_INITIALIZED] = "MPI_T is not initialized (MPI_T_init_thread)",
    [MPI_T_ERR_INVALID] = "invalid argument to an MPI_T call",
    [MPI_T_ERR_INVALID_INDEX] = "invalid MPI_T variable or category index",
    [MPI_T_ERR_INVALID_ITEM] = "invalid MPI_T enumeration item",
    [MPI_T_ERR_INVALID_SESSION] = "invalid MPI_T performance variable session",
    [MPI_T_ERR_INVALID_HANDLE] = "invalid MPI_T handle",
    [MPI_T_ERR_INVALID_NAME] = "no MPI_T variable or category of that name",
    [MPI_T_ERR_CVAR_SET_NEVER] = "this control variable is read once at initialization and cannot be set",
    [MPI_T_ERR_PVAR_NO_WRITE] = "this performance variable cannot be written or reset",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "this performance variable is continuous: it cannot be started or stopped",
};

/* Error classes and codes added by the application: values above MPI_ERR_LASTCODE, each
 * with its class (a class is its own) and an optional string. */
typedef struct user_code {
    int live; /* 0: slot free (removed); values are not handed out again */
    int cls;  /* MPI_SUCCESS is a class too: codes may be added to it */
    int is_class;
    char *str;
} user_code_t;
static user_code_t *ucodes; /* index: code - MPI_ERR_LASTCODE - 1 */
static int nucodes;

static user_code_t *user_code(int code)
{
    int i = code - MPI_ERR_LASTCODE - 1;
    return i >= 0 && i < nucodes && ucodes[i].live ? &ucodes[i] : NULL;
}

int rmpi_api_last_used_code(void)
{
    int last = MPI_ERR_LASTCODE;
    for (int i = 0; i < nucodes; i++)
        if (ucodes[i].live)
            last = MPI_ERR_LASTCODE + 1 + i;
    return last;
}

static int add_code(int cls, int is_class)
{
    ucodes = rmpi_xrealloc(ucodes, (size_t)(nucodes + 1) * sizeof *ucodes);
    int code = MPI_ERR_LASTCODE + 1 + nucodes;
    ucodes[nucodes++] = (user_code_t){1, is_class ? code : cls, is_class, NULL};
    return code;
}

const char *rmpi_api_err_name(int code)
{
    if (code >= 0 && (size_t)code < RMPI_ARRAY_LEN(err_names) && err_names[code])
        return err_names[code];
    user_code_t *u = user_code(code);
    if (u && u->str)
        return u->str;
    if (u)
        return u->is_class ? "an error class added by the application" : "an error code added by the application";
    return "MPI_ERR_UNKNOWN";
}

static void invoke(rmpi_comm_t *c, int code, const char *msg)
{
    MPI_Errhandler eh = c ? c->errh : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return;
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || (uintptr_t)eh < 4096) {
        fprintf(stderr, "[rmpi rank %d] %s (%s). The error handler of %s is %s: ending the job.\n", rmpi_core_rank, msg,
                rmpi_api_err_name(code), c ? c->name[0] ? c->name : "a communicator" : "MPI_COMM_WORLD",
                eh == MPI_ERRORS_ABORT ? "MPI_ERRORS_ABORT" : "MPI_ERRORS_ARE_FATAL");
        fflush(stderr);
        rmpi_pmi_abort(code, NULL);
    }
    user_errh_t *u = (user_errh_t *)eh;
    MPI_Comm h = c->handle;
    int e = code;
    u->fn(&h, &e, msg);
}

/* "func: text" in msg (MPI_MAX_ERROR_STRING bytes). */
static void format_msg(char *msg, const char *func, const char *fmt, va_list ap)
{
    char body[MPI_MAX_ERROR_STRING - 64];
    vsnprintf(body, sizeof body, fmt, ap);
    snprintf(msg, MPI_MAX_ERROR_STRING, "%s: %s", func, body);
}

int rmpi_api_error(rmpi_comm_t *comm, int code, const char *func, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    format_msg(msg, func, fmt, ap);
    va_end(ap);
    if (!comm && rmpi_api_state == RMPI_STATE_INIT)
        comm = &rmpi_comm_world;
    invoke(comm, code, msg);
    return code;
}

int rmpi_api_not_initialized(const char *func)
{
    fprintf(stderr,
            "[rmpi] %s was called %s; MPI calls are only allowed between MPI_Init and MPI_Finalize, or "
            "while an MPI session is open.\n",
            func, rmpi_api_state == RMPI_STATE_FINALIZED ? "after MPI_Finalize" : "before MPI_Init");
    fflush(stderr);
    abort();
}

int rmpi_api_unsupported(const char *fname)
{
    if (rmpi_api_state != RMPI_STATE_INIT)
        return rmpi_api_not_initialized(fname);
    return rmpi_api_error(NULL, MPI_ERR_UNSUPPORTED_OPERATION, fname, "RailMPI does not implement this function yet");
}

int MPI_Error_class(int errorcode, int *errorclass)
{
    user_code_t *u = user_code(errorcode);
    RMPI_CHECK((errorcode >= 0 && errorcode <= MPI_ERR_LASTCODE) || u, NULL, MPI_ERR_ARG, "%d is not an error code",
               errorcode);
    RMPI_CHECK(errorclass, NULL, MPI_ERR_ARG, "errorclass must not be NULL");
    *errorclass = u ? u->cls : errorcode;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    RMPI_CHECK(string && resultlen, NULL, MPI_ERR_ARG, "string and resultlen must not be NULL");
    user_code_t *u = user_code(errorcode);
    if (u) { /* the application's string, or empty when it set none */
        int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", u->str ? u->str : "");
        *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
        return MPI_SUCCESS;
    }
    const char *t = errorcode >= 0 && (size_t)errorcode < RMPI_ARRAY_LEN(err_texts) ? err_texts[errorcode] : NULL;
    int n = t ? snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", rmpi_api_err_name(errorcode), t)
              : snprintf(string, MPI_MAX_ERROR_STRING, "%s (code %d)", rmpi_api_err_name(errorcode), errorcode);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

void rmpi_api_errh_retain(MPI_Errhandler eh)
{
    if ((uintptr_t)eh >= 4096)
        ((user_errh_t *)eh)->refcount++;
}

void rmpi_api_errh_release(MPI_Errhandler eh)
{
    if ((uintptr_t)eh >= 4096 && --((user_errh_t *)eh)->refcount == 0) {
        ((user_errh_t *)eh)->magic = 0;
        rmpi_addrset_del(&errh_live, eh);
        free((void *)eh);
    }
}

void rmpi_api_errh_replace(MPI_Errhandler *slot, MPI_Errhandler eh)
{
    rmpi_api_errh_retain(eh); /* first: eh may be the handler the slot holds */
    rmpi_api_errh_release(*slot);
    *slot = eh;
}

int rmpi_api_errh_valid(MPI_Errhandler eh)
{
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT)
        return 1;
    return errh_user(eh) != NULL;
}

static int create_errh(const char *func, void (*fn)(void), int kind, MPI_Errhandler *errhandler);

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    RMPI_API_INIT_CHECK();
    return create_errh(__func__, (void (*)(void))fn, ERRH_COMM, errhandler);
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c = rmpi_comm_get_or_pending(comm);
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator");
    RMPI_CHECK(rmpi_api_errh_valid(errhandler), c, MPI_ERR_ARG, "invalid error handler");
    rmpi_api_errh_replace(&c->errh, errhandler);
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c = rmpi_comm_get_or_pending(comm);
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator");
    RMPI_CHECK(errhandler, c, MPI_ERR_ARG, "errhandler must not be NULL");
    rmpi_api_errh_retain(c->errh);
    *errhandler = c->errh;
    return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(errhandler && rmpi_api_errh_valid(*errhandler), NULL, MPI_ERR_ARG, "invalid error handler");
    rmpi_api_errh_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c = rmpi_comm_get(comm);
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator");
    if (errorcode == MPI_SUCCESS && (uintptr_t)c->errh < 4096)
        return MPI_SUCCESS; /* nothing to report: only a user handler is called with it */
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Comm_call_errhandler: error code %d raised by the application", errorcode);
    invoke(c, errorcode, msg);
    return MPI_SUCCESS;
}

int MPI_Add_error_class(int *errorclass)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(errorclass, NULL, MPI_ERR_ARG, "errorclass must not be NULL");
    RMPI_LOCK();
    *errorclass = add_code(0, 1);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
    RMPI_API_INIT_CHECK();
    user_code_t *u = user_code(errorclass);
    RMPI_CHECK((errorclass >= 0 && errorclass < (int)RMPI_ARRAY_LEN(err_names)) || (u && u->is_class), NULL,
               MPI_ERR_ARG, "%d is not an error class", errorclass);
    RMPI_CHECK(errorcode, NULL, MPI_ERR_ARG, "errorcode must not be NULL");
    RMPI_LOCK();
    *errorcode = add_code(errorclass, 0);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char *string)
{
    RMPI_API_INIT_CHECK();
    user_code_t *u = user_code(errorcode);
    RMPI_CHECK(u, NULL, MPI_ERR_ARG, "%d is not an error code or class added by the application", errorcode);
    RMPI_CHECK(string && strlen(string) < MPI_MAX_ERROR_STRING, NULL, MPI_ERR_ARG,
               "the string is NULL or longer than MPI_MAX_ERROR_STRING - 1 characters");
    RMPI_LOCK();
    free(u->str);
    u->str = rmpi_xstrdup(string);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Remove_error_string(int errorcode)
{
    RMPI_API_INIT_CHECK();
    user_code_t *u = user_code(errorcode);
    RMPI_CHECK(u && u->str, NULL, MPI_ERR_ARG, "%d has no string added by the application", errorcode);
    RMPI_LOCK();
    free(u->str);
    u->str = NULL;
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Remove_error_code(int errorcode)
{
    RMPI_API_INIT_CHECK();
    user_code_t *u = user_code(errorcode);
    RMPI_CHECK(u && !u->is_class, NULL, MPI_ERR_ARG, "%d is not an error code added by the application", errorcode);
    RMPI_CHECK(!u->str, NULL, MPI_ERR_ARG, "error code %d still has a string (MPI_Remove_error_string first)",
               errorcode);
    RMPI_LOCK();
    *u = (user_code_t){0, 0, 0, NULL};
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Remove_error_class(int errorclass)
{
    RMPI_API_INIT_CHECK();
    user_code_t *u = user_code(errorclass);
    RMPI_CHECK(u && u->is_class, NULL, MPI_ERR_ARG, "%d is not an error class added by the application", errorclass);
    RMPI_CHECK(!u->str, NULL, MPI_ERR_ARG, "error class %d still has a string (MPI_Remove_error_string first)",
               errorclass);
    for (int i = 0; i < nucodes; i++)
        RMPI_CHECK(!ucodes[i].live || ucodes[i].is_class || ucodes[i].cls != errorclass, NULL, MPI_ERR_ARG,
                   "error class %d still has error code %d (MPI_Remove_error_code first)", errorclass,
                   MPI_ERR_LASTCODE + 1 + i);
    RMPI_LOCK();
    *u = (user_code_t){0, 0, 0, NULL};
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

static int create_errh(const char *func, void (*fn)(void), int kind, MPI_Errhandler *errhandler)
{
    if (!fn || !errhandler)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "the function and the errhandler pointer must not be NULL");
    user_errh_t *u = rmpi_xmalloc(sizeof *u);
    *u = (user_errh_t){ERRH_MAGIC, (MPI_Comm_errhandler_function *)fn, 1, kind};
    rmpi_addrset_add(&errh_live, u);
    *errhandler = (MPI_Errhandler)u;
    return MPI_SUCCESS;
}

int MPI_Session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    RMPI_API_INIT_CHECK();
    return create_errh(__func__, (void (*)(void))fn, ERRH_SESSION, errhandler);
}

int MPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    RMPI_API_INIT_CHECK();
    return create_errh(__func__, (void (*)(void))fn, ERRH_FILE, errhandler);
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    RMPI_API_INIT_CHECK();
    return create_errh(__func__, (void (*)(void))fn, ERRH_WIN, errhandler);
}

/* A session's or a file's handler: `what` names the object in the fatal message. Every
 * handle kind is a pointer, so a handler of another kind is called all the same, with
 * this object's handle. */
static int call_object(MPI_Errhandler eh, const char *what, void *handle, int code, const char *msg)
{
    if (eh == MPI_ERRORS_RETURN || code == MPI_SUCCESS)
        return code;
    if ((uintptr_t)eh < 4096) {
        fprintf(stderr, "[rmpi rank %d] %s (%s). The error handler of the %s is %s: ending the job.\n", rmpi_core_rank,
                msg, rmpi_api_err_name(code), what,
                eh == MPI_ERRORS_ABORT ? "MPI_ERRORS_ABORT" : "MPI_ERRORS_ARE_FATAL");
        fflush(stderr);
        rmpi_pmi_abort(code, NULL);
    }
    user_errh_t *u = (user_errh_t *)eh;
    void *h = handle;
    int e = code;
    if (u->kind == ERRH_SESSION)
        ((MPI_Session_errhandler_function *)(void (*)(void))u->fn)((MPI_Session *)&h, &e, msg);
    else if (u->kind == ERRH_FILE)
        ((MPI_File_errhandler_function *)(void (*)(void))u->fn)((MPI_File *)&h, &e, msg);
    else if (u->kind == ERRH_WIN)
        ((MPI_Win_errhandler_function *)(void (*)(void))u->fn)((MPI_Win *)&h, &e, msg);
    else
        u->fn((MPI_Comm *)&h, &e, msg);
    return code;
}

int rmpi_api_errh_call_session(MPI_Errhandler eh, MPI_Session s, int code, const char *msg)
{
    return call_object(eh, "session", (void *)s, code, msg);
}

static int object_error(MPI_Errhandler eh, const char *what, void *handle, int code, const char *func, const char *fmt,
                        va_list ap)
{
    char msg[MPI_MAX_ERROR_STRING];
    format_msg(msg, func, fmt, ap);
    return call_object(eh, what, handle, code, msg);
}

int rmpi_api_file_error(MPI_Errhandler eh, MPI_File f, int code, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = object_error(eh, "file", (void *)f, code, func, fmt, ap);
    va_end(ap);
    return rc;
}

int rmpi_api_win_error(MPI_Errhandler eh, MPI_Win w, int code, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = object_error(eh, "window", (void *)w, code, func, fmt, ap);
    va_end(ap);
    return rc;
}

int rmpi_api_win_call_errhandler(MPI_Errhandler eh, MPI_Win w, int code)
{
    if (code == MPI_SUCCESS && (uintptr_t)eh < 4096)
        return MPI_SUCCESS;
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Win_call_errhandler: error code %d raised by the application", code);
    if ((uintptr_t)eh >= 4096) { /* a user handler is called even with MPI_SUCCESS */
        user_errh_t *u = (user_errh_t *)eh;
        void *h = (void *)w;
        int e = code;
        ((MPI_Win_errhandler_function *)(void (*)(void))u->fn)((MPI_Win *)&h, &e, msg);
        return MPI_SUCCESS;
    }
    call_object(eh, "window", (void *)w, code, msg);
    return MPI_SUCCESS;
}
