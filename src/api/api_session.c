/* Sessions: a session is an error handler and info hints over the process's runtime, which
 * the first session (or MPI_Init) starts and the last user ends (api_init.c). Psets are
 * mpi://WORLD and mpi://SELF; their groups feed MPI_Comm_create_from_group. */
#include "api_pt2pt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_MAGIC 0x53455353u

typedef struct rmpi_session {
    uint32_t magic;
    MPI_Errhandler errh;
    rmpi_info_t *info;
    rmpi_bpool_t *bsend; /* MPI_Session_attach_buffer */
} rmpi_session_t;

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};

/* Sessions handed out: a handle is looked up before it is read. */
static rmpi_addrset_t session_live = RMPI_ADDRSET_INIT;

static rmpi_session_t *session_get(MPI_Session h)
{
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&session_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_session_t *s = (rmpi_session_t *)h;
    return s->magic == SESSION_MAGIC ? s : NULL;
}

/* Report through the session's handler (MPI_COMM_WORLD's when there is no session). */
static int session_error(rmpi_session_t *s, int code, const char *func, const char *what)
{
    if (!s)
        return rmpi_api_error(NULL, code, func, "%s", what);
    char msg[MPI_MAX_ERROR_STRING];
    snprintf(msg, sizeof msg, "%s: %s", func, what);
    return rmpi_api_errh_call_session(s->errh, (MPI_Session)s, code, msg);
}

#define GET_SESSION(s, h)               \
    RMPI_API_INIT_CHECK();              \
    rmpi_session_t *s = session_get(h); \
    if (!s)                             \
    return session_error(NULL, MPI_ERR_SESSION, __func__, "invalid session")

/* The thread level a session asks for (info key "thread_level", MPI-4.1 11.3.1). */
static int wanted_thread_level(rmpi_info_t *i)
{
    const char *v = i ? rmpi_info_lookup(i, "thread_level") : NULL;
    if (!v)
        return MPI_THREAD_SINGLE;
    return !strcmp(v, "MPI_THREAD_MULTIPLE")     ? MPI_THREAD_MULTIPLE
           : !strcmp(v, "MPI_THREAD_SERIALIZED") ? MPI_THREAD_SERIALIZED
           : !strcmp(v, "MPI_THREAD_FUNNELED")   ? MPI_THREAD_FUNNELED
                                                 : MPI_THREAD_SINGLE;
}

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    rmpi_info_t *i = NULL;
    if (!session || (info != MPI_INFO_NULL && !(i = rmpi_info_get(info))) ||
        (errhandler != MPI_ERRHANDLER_NULL && errhandler != MPI_ERRORS_RETURN && errhandler != MPI_ERRORS_ARE_FATAL &&
         errhandler != MPI_ERRORS_ABORT && (rmpi_api_state != RMPI_STATE_INIT || !rmpi_api_errh_valid(errhandler)))) {
        /* no session and maybe no runtime yet: the error goes back as it is */
        fprintf(stderr, "[rmpi] MPI_Session_init: session is NULL, or the info or error handler is invalid.\n");
        return !session ? MPI_ERR_ARG : info != MPI_INFO_NULL && !i ? MPI_ERR_INFO : MPI_ERR_ARG;
    }
    int rc = rmpi_api_runtime_acquire(wanted_thread_level(i));
    if (rc)
        return rc;
    rmpi_session_t *s = rmpi_xcalloc(1, sizeof *s);
    s->magic = SESSION_MAGIC;
    rmpi_addrset_add(&session_live, s);
    s->errh = errhandler == MPI_ERRHANDLER_NULL ? MPI_ERRORS_ARE_FATAL : errhandler;
    rmpi_api_errh_retain(s->errh);
    s->info = rmpi_info_dup(i);
    int provided;
    MPI_Query_thread(&provided);
    rmpi_info_set(s->info, "thread_level",
                  provided == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                  : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                  : provided == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                                      : "MPI_THREAD_SINGLE");
    *session = (MPI_Session)s;
    return MPI_SUCCESS;
}

int MPI_Session_finalize(MPI_Session *session)
{
    RMPI_API_INIT_CHECK();
    if (!session)
        return session_error(NULL, MPI_ERR_ARG, __func__, "session must not be NULL");
    GET_SESSION(s, *session);
    if (s->bsend) { /* the buffer goes with the session, once its messages are sent */
        void *addr;
        MPI_Count n;
        const char *why;
        rmpi_api_bpool_detach(&s->bsend, &addr, &n, &why);
    }
    rmpi_api_errh_release(s->errh);
    rmpi_info_free(s->info);
    s->magic = 0;
    rmpi_addrset_del(&session_live, s);
    free(s);
    *session = MPI_SESSION_NULL;
    rmpi_api_runtime_release();
    return MPI_SUCCESS;
}

int MPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    GET_SESSION(s, session);
    if (!info_used)
        return session_error(s, MPI_ERR_ARG, __func__, "info_used must not be NULL");
    *info_used = (MPI_Info)rmpi_info_dup(s->info);
    return MPI_SUCCESS;
}

int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    GET_SESSION(s, session);
    (void)info;
    if (!npset_names)
        return session_error(s, MPI_ERR_ARG, __func__, "npset_names must not be NULL");
    *npset_names = (int)RMPI_ARRAY_LEN(psets);
    return MPI_SUCCESS;
}

int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    GET_SESSION(s, session);
    (void)info;
    if (n < 0 || n >= (int)RMPI_ARRAY_LEN(psets) || !pset_len)
        return session_error(s, MPI_ERR_ARG, __func__, "n is not a pset index or pset_len is NULL");
    int need = (int)strlen(psets[n]) + 1;
    if (*pset_len > 0 && pset_name)
        snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    *pset_len = need; /* with the terminating zero, as the standard counts it */
    return MPI_SUCCESS;
}

static int pset_index(const char *name)
{
    for (int i = 0; name && i < (int)RMPI_ARRAY_LEN(psets); i++)
        if (strcmp(name, psets[i]) == 0)
            return i;
    return -1;
}

int MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    GET_SESSION(s, session);
    int k = pset_index(pset_name);
    if (k < 0 || !info)
        return session_error(s, MPI_ERR_ARG, __func__, "unknown pset name (mpi://WORLD, mpi://SELF) or NULL info");
    char size[16];
    snprintf(size, sizeof size, "%d", k == 0 ? rmpi_core_size : 1);
    rmpi_info_t *i = rmpi_info_new();
    rmpi_info_set(i, "mpi_size", size);
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}

int MPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    GET_SESSION(s, session);
    int k = pset_index(pset_name);
    if (k < 0 || !newgroup)
        return session_error(s, MPI_ERR_ARG, __func__, "unknown pset name (mpi://WORLD, mpi://SELF) or NULL group");
    return MPI_Comm_group(k == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF, newgroup);
}

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    GET_SESSION(s, session);
    if (!rmpi_api_errh_valid(errhandler))
        return session_error(s, MPI_ERR_ARG, __func__, "invalid error handler");
    rmpi_api_errh_replace(&s->errh, errhandler);
    return MPI_SUCCESS;
}

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    GET_SESSION(s, session);
    if (!errhandler)
        return session_error(s, MPI_ERR_ARG, __func__, "errhandler must not be NULL");
    rmpi_api_errh_retain(s->errh);
    *errhandler = s->errh;
    return MPI_SUCCESS;
}

int MPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    GET_SESSION(s, session);
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Session_call_errhandler: error code %d raised by the application", errorcode);
    rmpi_api_errh_call_session(s->errh, session, errorcode, msg);
    return MPI_SUCCESS;
}

/* Buffers attached to a session (MPI-4.1). Communicators do not record the session they
 * came from, so Bsend uses a communicator's own buffer or the process's, never a session's:
 * attach, detach and flush work, and a session's buffer carries no messages. The int and
 * _c forms of attach and detach come from src/api/forms.txt (the end of this file). */
static int session_attach_buffer(const char *func, MPI_Session session, void *buffer, MPI_Count size)
{
    rmpi_session_t *s = session_get(session);
    if (!s)
        return session_error(NULL, MPI_ERR_SESSION, func, "invalid session");
    if (size < 0)
        return session_error(s, MPI_ERR_ARG, func, "size is negative");
    const char *why = NULL;
    int rc = rmpi_api_bpool_attach(&s->bsend, buffer, (size_t)size, &why);
    return rc ? session_error(s, rc, func, why) : MPI_SUCCESS;
}

static int session_detach_buffer(const char *func, MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    rmpi_session_t *s = session_get(session);
    if (!s)
        return session_error(NULL, MPI_ERR_SESSION, func, "invalid session");
    if (!buffer_addr || !size)
        return session_error(s, MPI_ERR_ARG, func, "buffer_addr and size must not be NULL");
    const char *why = NULL;
    int rc = rmpi_api_bpool_detach(&s->bsend, buffer_addr, size, &why);
    return rc ? session_error(s, rc, func, why) : MPI_SUCCESS;
}

int MPI_Session_flush_buffer(MPI_Session session)
{
    GET_SESSION(s, session);
    rmpi_api_bpool_flush(s->bsend);
    return MPI_SUCCESS;
}

int MPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    GET_SESSION(s, session);
    if (!request)
        return session_error(s, MPI_ERR_ARG, __func__, "request must not be NULL");
    *request = rmpi_api_bpool_iflush(s->bsend, NULL);
    return MPI_SUCCESS;
}

#include "api/api_session.forms.h"
