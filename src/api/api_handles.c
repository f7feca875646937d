/* Handle <-> integer conversions of the standard ABI (MPI_Comm_toint ... MPI_Win_fromint),
 * which Fortran bindings and mpi4py's py2f/f2py use, and the status accessors.
 *
 * Predefined handles are small constants (below 4096) and convert to themselves. A user
 * handle is the object's address; the first conversion gives it the next index of one
 * table shared by every handle kind (addresses are unique across kinds), as 4096 + index,
 * and the same handle always converts to the same integer. Entries are never removed: an
 * integer of a freed object converts back to its old address, which the bindings reject as
 * they reject any stale handle. A live request converts to REQ_INT + its slot instead
 * (core.h: request handles change with every reuse of a slot, and a table entry per
 * request would grow without end); the integer converts back to the handle of the request
 * now in that slot, as Fortran request integers are reused in other MPIs. Callable at any
 * time (before MPI_Init too), from any thread. */
#include "api_impl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PREDEF_LIMIT 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *table; /* index -> address */
static size_t ntable, captable;
static uint32_t *hash; /* open addressing: address -> index + 1 */
static size_t caphash;

static size_t slot(uintptr_t a) { return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull) & (caphash - 1); }

static void rehash(void)
{
    free(hash);
    caphash = caphash ? 2 * caphash : 256;
    hash = rmpi_xcalloc(caphash, sizeof *hash);
    for (size_t i = 0; i < ntable; i++) {
        size_t k = slot(table[i]);
        while (hash[k])
            k = (k + 1) & (caphash - 1);
        hash[k] = (uint32_t)(i + 1);
    }
}

static int toint(uintptr_t a)
{
    if (a < PREDEF_LIMIT)
        return (int)a;
    pthread_mutex_lock(&lock);
    if (2 * (ntable + 1) > caphash)
        rehash();
    size_t k = slot(a);
    while (hash[k] && table[hash[k] - 1] != a)
        k = (k + 1) & (caphash - 1);
    if (!hash[k]) {
        if (ntable == captable) {
            captable = captable ? 2 * captable : 256;
            table = rmpi_xrealloc(table, captable * sizeof *table);
        }
        table[ntable] = a;
        hash[k] = (uint32_t)++ntable;
    }
    int v = (int)(PREDEF_LIMIT + hash[k] - 1);
    pthread_mutex_unlock(&lock);
    return v;
}

/* 0 (every kind's null handle is nonzero, so 0 is invalid) for an integer never handed out. */
static uintptr_t fromint(int v)
{
    if (v >= 0 && v < PREDEF_LIMIT)
        return (uintptr_t)v;
    pthread_mutex_lock(&lock);
    uintptr_t a = v > 0 && (size_t)(v - PREDEF_LIMIT) < ntable ? table[v - PREDEF_LIMIT] : 0;
    pthread_mutex_unlock(&lock);
    return a;
}

#define REQ_INT 0x40000000

int MPI_Request_toint(MPI_Request h)
{
    rmpi_req_t *r = rmpi_req_handle((uintptr_t)h);
    return r ? REQ_INT + (int)r->slot : toint((uintptr_t)h);
}

MPI_Request MPI_Request_fromint(int v)
{
    if (v < REQ_INT)
        return (MPI_Request)fromint(v);
    uint32_t slot = (uint32_t)(v - REQ_INT);
    if ((slot >> RMPI_REQ_CHUNK_BITS) >= __atomic_load_n(&rmpi_req_nchunks, __ATOMIC_ACQUIRE))
        return (MPI_Request)0;
    return (MPI_Request)rmpi_req_chunks[slot >> RMPI_REQ_CHUNK_BITS][slot & (RMPI_REQ_CHUNK - 1)].handle;
}

#define CONVERT(Kind, Type)                                        \
    int MPI_##Kind##_toint(Type h) { return toint((uintptr_t)h); } \
    Type MPI_##Kind##_fromint(int v) { return (Type)fromint(v); }
CONVERT(Comm, MPI_Comm)
CONVERT(Errhandler, MPI_Errhandler)
CONVERT(File, MPI_File)
CONVERT(Group, MPI_Group)
CONVERT(Info, MPI_Info)
CONVERT(Message, MPI_Message)
CONVERT(Op, MPI_Op)
CONVERT(Session, MPI_Session)
CONVERT(Type, MPI_Datatype)
CONVERT(Win, MPI_Win)

#define STATUS_FIELD(name, field)                                                                        \
    int MPI_Status_get_##name(const MPI_Status *status, int *name)                                       \
    {                                                                                                    \
        if (!status || status == MPI_STATUS_IGNORE || !name)                                             \
            return rmpi_api_error(NULL, MPI_ERR_ARG, __func__, "status and " #name " must not be NULL"); \
        *name = status->field;                                                                           \
        return MPI_SUCCESS;                                                                              \
    }                                                                                                    \
    int MPI_Status_set_##name(MPI_Status *status, int name)                                              \
    {                                                                                                    \
        if (!status || status == MPI_STATUS_IGNORE)                                                      \
            return rmpi_api_error(NULL, MPI_ERR_ARG, __func__, "status must not be NULL");               \
        status->field = name;                                                                            \
        return MPI_SUCCESS;                                                                              \
    }
STATUS_FIELD(source, MPI_SOURCE)
STATUS_FIELD(tag, MPI_TAG)
STATUS_FIELD(error, MPI_ERROR)

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "a Fortran status array must hold an MPI_Status exactly");

/* A copy: C, Fortran array and mpi_f08 statuses share one layout (count included). */
static int status_copy(const char *func, const void *from, void *to)
{
    if (!from || !to)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "both statuses must not be NULL (or MPI_STATUS_IGNORE)");
    memmove(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int MPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    return status_copy(__func__, c_status, f08_status);
}

int MPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    return status_copy(__func__, f08_status, c_status);
}

int MPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    return status_copy(__func__, f_status, f08_status);
}

int MPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    return status_copy(__func__, f08_status, f_status);
}
