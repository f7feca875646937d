/* MPI-IO bindings (MPI_File_*) over src/io. Errors go to the file's error handler; those
 * of calls without a valid file (MPI_File_open, MPI_File_delete, a bad handle) to the
 * handler of MPI_FILE_NULL, MPI_ERRORS_RETURN until the application sets another: the
 * standard's default for files, which every new file takes. Non-blocking accesses and
 * split collectives do their I/O inside the call (the request is complete when returned;
 * *_end hands out the status kept by *_begin). */
#include "api_pt2pt.h"

#include <stdio.h>
#include <string.h>

#include "../io/io.h"

static MPI_Errhandler null_errh = MPI_ERRORS_RETURN;

static MPI_Errhandler errh_of(const rmpi_file_t *f) { return f ? f->errh : null_errh; }

/* Through the file's handler, or MPI_FILE_NULL's when there is no file. */
#define file_error(f, code, func, ...) \
    rmpi_api_file_error(errh_of(f), (f) ? (MPI_File)(f) : MPI_FILE_NULL, (code), (func), __VA_ARGS__)

#define FILE_CHECK(cond, f, code, ...)                             \
    do {                                                           \
        if (RMPI_UNLIKELY(!(cond)))                                \
            return file_error((f), (code), __func__, __VA_ARGS__); \
    } while (0)
#define GET_FILE(f, h)                 \
    RMPI_API_INIT_CHECK();             \
    rmpi_file_t *f = rmpi_file_get(h); \
    FILE_CHECK(f, NULL, MPI_ERR_FILE, "invalid file handle %p", (void *)(h))

/* The result of a call that took the lock: an error through the handler, else success. */
#define FILE_RESULT(rc, f, ...) ((rc) ? file_error((f), (rc), __func__, __VA_ARGS__) : MPI_SUCCESS)

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c = rmpi_comm_get(comm);
    FILE_CHECK(c && !c->inter, NULL, MPI_ERR_COMM, "invalid communicator %p (or an intercommunicator)", (void *)comm);
    FILE_CHECK(filename && fh, NULL, MPI_ERR_ARG, "filename and fh must not be NULL");
    FILE_CHECK(!rmpi_io_check_amode(amode), NULL, MPI_ERR_AMODE,
               "amode 0x%x is invalid: exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR; "
               "no MPI_MODE_CREATE or MPI_MODE_EXCL with MPI_MODE_RDONLY; no MPI_MODE_SEQUENTIAL with "
               "MPI_MODE_RDWR",
               (unsigned)amode);
    rmpi_info_t *i = NULL;
    FILE_CHECK(info == MPI_INFO_NULL || (i = rmpi_info_get(info)), NULL, MPI_ERR_INFO, "invalid info object");
    if (!strncmp(filename, "ufs:", 4)) /* ROMIO's file-system prefix for POSIX files */
        filename += 4;
    rmpi_file_t *f = NULL;
    RMPI_LOCK();
    int rc = rmpi_io_open(c, filename, amode, i, &f);
    if (!rc) {
        f->errh = null_errh;
        rmpi_api_errh_retain(f->errh);
    }
    RMPI_UNLOCK();
    if (rc)
        return file_error(NULL, rc, __func__, "could not open '%s' on every rank of the communicator", filename);
    *fh = (MPI_File)f;
    return MPI_SUCCESS;
}

int MPI_File_close(MPI_File *fh)
{
    RMPI_API_INIT_CHECK();
    FILE_CHECK(fh, NULL, MPI_ERR_ARG, "fh must not be NULL");
    GET_FILE(f, *fh);
    MPI_Errhandler eh = f->errh;
    RMPI_LOCK();
    int rc = rmpi_io_close(f);
    RMPI_UNLOCK();
    *fh = MPI_FILE_NULL;
    if (rc) /* the file is gone: its handler is told with MPI_FILE_NULL */
        rmpi_api_file_error(eh, MPI_FILE_NULL, rc, __func__, "closing (or deleting on close) the file failed");
    rmpi_api_errh_release(eh);
    return rc;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
    RMPI_API_INIT_CHECK();
    FILE_CHECK(filename, NULL, MPI_ERR_ARG, "filename must not be NULL");
    FILE_CHECK(info == MPI_INFO_NULL || rmpi_info_get(info), NULL, MPI_ERR_INFO, "invalid info object");
    if (!strncmp(filename, "ufs:", 4))
        filename += 4;
    int rc = rmpi_io_delete(filename);
    return FILE_RESULT(rc, NULL, "could not delete '%s'", filename);
}

static int resize(const char *func, MPI_File fh, MPI_Offset size, int preallocate)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(fh);
    if (!f)
        return file_error(NULL, MPI_ERR_FILE, func, "invalid file handle %p", (void *)fh);
    if (size < 0)
        return file_error(f, MPI_ERR_ARG, func, "size %lld is negative", (long long)size);
    if (f->amode & MPI_MODE_RDONLY)
        return file_error(f, MPI_ERR_READ_ONLY, func, "the file was opened with MPI_MODE_RDONLY");
    RMPI_LOCK();
    int rc = rmpi_io_set_size(f, size, preallocate);
    RMPI_UNLOCK();
    return rc ? file_error(f, rc, func, "could not resize '%s' to %lld bytes", f->path, (long long)size) : 0;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) { return resize(__func__, fh, size, 0); }
int MPI_File_preallocate(MPI_File fh, MPI_Offset size) { return resize(__func__, fh, size, 1); }

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    GET_FILE(f, fh);
    FILE_CHECK(size, f, MPI_ERR_ARG, "size must not be NULL");
    int rc = rmpi_io_get_size(f, size);
    return FILE_RESULT(rc, f, "could not read the size of '%s'", f->path);
}

int MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    GET_FILE(f, fh);
    FILE_CHECK(group, f, MPI_ERR_ARG, "group must not be NULL");
    RMPI_LOCK();
    *group = rmpi_group_handle(rmpi_group_of_comm(f->comm, 0));
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_File_get_amode(MPI_File fh, int *amode)
{
    GET_FILE(f, fh);
    FILE_CHECK(amode, f, MPI_ERR_ARG, "amode must not be NULL");
    *amode = f->amode;
    return MPI_SUCCESS;
}

int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    GET_FILE(f, fh);
    rmpi_info_t *i = NULL;
    FILE_CHECK(info == MPI_INFO_NULL || (i = rmpi_info_get(info)), f, MPI_ERR_INFO, "invalid info object");
    RMPI_LOCK();
    rmpi_info_free(f->info);
    f->info = rmpi_info_dup(i);
    int rc = rmpi_io_barrier(f);
    RMPI_UNLOCK();
    return FILE_RESULT(rc, f, "the ranks of the file did not all set the info");
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    GET_FILE(f, fh);
    FILE_CHECK(info_used, f, MPI_ERR_ARG, "info_used must not be NULL");
    RMPI_LOCK();
    *info_used = (MPI_Info)rmpi_info_dup(f->info);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

/* Data representations registered by the application (names, never removed). One whose
 * conversion functions are both MPI_CONVERSION_FN_NULL keeps the native layout, so views
 * may use it; views refuse the others with MPI_ERR_UNSUPPORTED_DATAREP (no conversion
 * and no extent function is ever called). */
typedef struct datarep {
    char name[MPI_MAX_DATAREP_STRING];
    int native;
} datarep_t;
static datarep_t *datareps;
static int ndatareps;

static const datarep_t *find_datarep(const char *name)
{
    for (int i = 0; i < ndatareps; i++)
        if (!strcmp(datareps[i].name, name))
            return &datareps[i];
    return NULL;
}

static int register_datarep(const char *func, const char *name, int native)
{
    RMPI_API_INIT_CHECK();
    if (!name || !name[0] || strlen(name) >= MPI_MAX_DATAREP_STRING)
        return file_error(NULL, MPI_ERR_ARG, func, "datarep is NULL, empty or longer than MPI_MAX_DATAREP_STRING - 1");
    RMPI_LOCK();
    int dup = !strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") || find_datarep(name);
    if (!dup) {
        datareps = rmpi_xrealloc(datareps, (size_t)(ndatareps + 1) * sizeof *datareps);
        datareps[ndatareps] = (datarep_t){.native = native};
        strcpy(datareps[ndatareps++].name, name);
    }
    RMPI_UNLOCK();
    return dup ? file_error(NULL, MPI_ERR_DUP_DATAREP, func, "data representation '%s' is already defined", name) : 0;
}

int MPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                         MPI_Datarep_conversion_function *write_conversion_fn,
                         MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_datarep(__func__, datarep, !read_conversion_fn && !write_conversion_fn);
}

int MPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                           MPI_Datarep_conversion_function_c *write_conversion_fn,
                           MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_datarep(__func__, datarep, !read_conversion_fn && !write_conversion_fn);
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                      MPI_Info info)
{
    GET_FILE(f, fh);
    rmpi_dtype_t *et = rmpi_dtype_get(etype), *ft = rmpi_dtype_get(filetype);
    FILE_CHECK(et && ft, f, MPI_ERR_TYPE, "invalid %s", et ? "filetype" : "etype");
    FILE_CHECK(datarep, f, MPI_ERR_ARG, "datarep must not be NULL");
    FILE_CHECK(disp >= 0 || disp == MPI_DISPLACEMENT_CURRENT, f, MPI_ERR_ARG, "displacement %lld is negative",
               (long long)disp);
    FILE_CHECK(disp != MPI_DISPLACEMENT_CURRENT || (f->amode & MPI_MODE_SEQUENTIAL), f, MPI_ERR_ARG,
               "MPI_DISPLACEMENT_CURRENT is only for files opened with MPI_MODE_SEQUENTIAL");
    FILE_CHECK(info == MPI_INFO_NULL || rmpi_info_get(info), f, MPI_ERR_INFO, "invalid info object");
    RMPI_LOCK();
    const datarep_t *d = find_datarep(datarep);
    int rc = rmpi_io_set_view(f, disp, et, ft, d && d->native ? "native" : datarep);
    if (!rc)
        snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    RMPI_UNLOCK();
    if (rc == MPI_ERR_UNSUPPORTED_DATAREP)
        return file_error(f, rc, __func__,
                          "data representation '%s' is not supported: only \"native\" and registered ones "
                          "without conversion functions",
                          datarep);
    return FILE_RESULT(rc, f,
                       "the view was not set: the filetype must be made of whole etypes, hold data and have "
                       "non-negative displacements, on every rank");
}

/* Get_view hands out new handles for derived types (the user frees them). */
static MPI_Datatype view_type(rmpi_dtype_t *t)
{
    if (t->predefined)
        return rmpi_dtype_handle(t);
    rmpi_dtype_t *n;
    return rmpi_dtype_clone(t, &n) ? MPI_DATATYPE_NULL : rmpi_dtype_handle(n);
}

int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    GET_FILE(f, fh);
    FILE_CHECK(disp && etype && filetype && datarep, f, MPI_ERR_ARG, "no argument may be NULL");
    *disp = f->disp;
    RMPI_LOCK();
    *etype = view_type(f->etype);
    *filetype = view_type(f->ftype);
    RMPI_UNLOCK();
    strcpy(datarep, f->datarep);
    return MPI_SUCCESS;
}

static int get_type_extent(const char *func, MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(fh);
    if (!f)
        return file_error(NULL, MPI_ERR_FILE, func, "invalid file handle %p", (void *)fh);
    rmpi_dtype_t *dt = rmpi_dtype_get(datatype);
    if (!dt || !extent)
        return file_error(f, dt ? MPI_ERR_ARG : MPI_ERR_TYPE, func, "invalid datatype or NULL extent");
    *extent = dt->extent; /* "native": the file holds the memory layout */
    return MPI_SUCCESS;
}

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    return get_type_extent(__func__, fh, datatype, extent);
}

int MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    MPI_Aint e = 0;
    int rc = get_type_extent(__func__, fh, datatype, extent ? &e : NULL);
    if (!rc)
        *extent = e;
    return rc;
}

int MPI_File_set_atomicity(MPI_File fh, int flag)
{
    GET_FILE(f, fh);
    RMPI_LOCK();
    f->atomic = !!flag;
    int rc = rmpi_io_barrier(f);
    RMPI_UNLOCK();
    return FILE_RESULT(rc, f, "the ranks of the file did not all set the atomicity");
}

int MPI_File_get_atomicity(MPI_File fh, int *flag)
{
    GET_FILE(f, fh);
    FILE_CHECK(flag, f, MPI_ERR_ARG, "flag must not be NULL");
    *flag = f->atomic;
    return MPI_SUCCESS;
}

int MPI_File_sync(MPI_File fh)
{
    GET_FILE(f, fh);
    RMPI_LOCK();
    int rc = rmpi_io_sync(f);
    RMPI_UNLOCK();
    return FILE_RESULT(rc, f, "could not flush '%s' to storage", f->path);
}

/* ---- file pointers ---- */

static int seek(const char *func, MPI_File fh, MPI_Offset offset, int whence, int shared)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(fh);
    if (!f)
        return file_error(NULL, MPI_ERR_FILE, func, "invalid file handle %p", (void *)fh);
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        return file_error(f, MPI_ERR_ARG, func, "whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", whence);
    if (!shared && (f->amode & MPI_MODE_SEQUENTIAL))
        return file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, func,
                          "the file was opened with MPI_MODE_SEQUENTIAL: it has no individual file pointer");
    RMPI_LOCK();
    int rc = rmpi_io_seek(f, offset, whence, shared);
    RMPI_UNLOCK();
    return rc ? file_error(f, rc, func, "could not move the file pointer (a negative position is erroneous)") : 0;
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) { return seek(__func__, fh, offset, whence, 0); }
int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) { return seek(__func__, fh, offset, whence, 1); }

int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    GET_FILE(f, fh);
    FILE_CHECK(offset, f, MPI_ERR_ARG, "offset must not be NULL");
    *offset = f->fp;
    return MPI_SUCCESS;
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    GET_FILE(f, fh);
    FILE_CHECK(offset, f, MPI_ERR_ARG, "offset must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_io_shared_get(f, offset);
    RMPI_UNLOCK();
    return FILE_RESULT(rc, f, "could not read the shared file pointer");
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    GET_FILE(f, fh);
    FILE_CHECK(disp && offset >= 0, f, MPI_ERR_ARG, "offset %lld is negative or disp is NULL", (long long)offset);
    *disp = rmpi_io_byte_offset(f, offset);
    return MPI_SUCCESS;
}

/* ---- error handlers ---- */

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(file);
    FILE_CHECK(f || file == MPI_FILE_NULL, NULL, MPI_ERR_FILE, "invalid file handle %p", (void *)file);
    FILE_CHECK(rmpi_api_errh_valid(errhandler), f, MPI_ERR_ARG, "invalid error handler");
    MPI_Errhandler *slot = f ? &f->errh : &null_errh;
    rmpi_api_errh_replace(slot, errhandler);
    return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(file);
    FILE_CHECK(f || file == MPI_FILE_NULL, NULL, MPI_ERR_FILE, "invalid file handle %p", (void *)file);
    FILE_CHECK(errhandler, f, MPI_ERR_ARG, "errhandler must not be NULL");
    *errhandler = f ? f->errh : null_errh;
    rmpi_api_errh_retain(*errhandler);
    return MPI_SUCCESS;
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(fh);
    FILE_CHECK(f || fh == MPI_FILE_NULL, NULL, MPI_ERR_FILE, "invalid file handle %p", (void *)fh);
    file_error(f, errorcode, __func__, "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}

/* ---- data access ---- */

/* Every read and write: checks, the access, then the status (blocking), a complete
 * request (req) or the split collective's saved result (begin). */
static int access_file(const char *func, MPI_File fh, int write, int where, MPI_Offset off, const void *buf,
                       MPI_Count count, MPI_Datatype type, MPI_Status *st, MPI_Request *req, int begin)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(fh);
    if (!f)
        return file_error(NULL, MPI_ERR_FILE, func, "invalid file handle %p", (void *)fh);
    const char *why = NULL;
    int code = 0;
    rmpi_dtype_t *dt = rmpi_dtype_get(type);
#define REJECT(cond, cls, text) \
    if (!code && (cond))        \
    code = (cls), why = (text)
    REJECT(count < 0, MPI_ERR_COUNT, "count is negative");
    REJECT(!dt || !dt->committed, MPI_ERR_TYPE, "invalid or uncommitted datatype");
    REJECT(!rmpi_dtype_count_ok(dt, count), MPI_ERR_COUNT,
           "count times the datatype's size (or extent) does not fit in the address space");
    REJECT(!buf && count > 0 && dt->size > 0 && !(dt->true_lb > 0), MPI_ERR_BUFFER, "buffer is NULL");
    REJECT(write && (f->amode & MPI_MODE_RDONLY), MPI_ERR_READ_ONLY, "the file was opened with MPI_MODE_RDONLY");
    REJECT(!write && (f->amode & MPI_MODE_WRONLY), MPI_ERR_ACCESS, "the file was opened with MPI_MODE_WRONLY");
    REJECT((f->amode & MPI_MODE_SEQUENTIAL) && (where == RMPI_IO_AT || where == RMPI_IO_INDIV),
           MPI_ERR_UNSUPPORTED_OPERATION,
           "the file was opened with MPI_MODE_SEQUENTIAL: only shared file pointer accesses are allowed");
    REJECT(where == RMPI_IO_AT && off < 0, MPI_ERR_ARG, "the offset is negative");
    REJECT(dt->size % f->etype->size, MPI_ERR_TYPE, "the datatype is not a whole number of etypes of the view");
    REJECT(begin && f->split_active, MPI_ERR_OTHER, "a split collective is already active on the file");
#undef REJECT
    if (code)
        return file_error(f, code, func, "%s", why);
    size_t bytes = 0;
    RMPI_LOCK();
    int rc = rmpi_io_access(f, write, where, off, (void *)(uintptr_t)buf, (size_t)count, dt, &bytes);
    RMPI_UNLOCK();
    if (rc)
        return file_error(f, rc, func, "%s '%s' failed after %zu bytes", write ? "writing" : "reading", f->path, bytes);
    if (begin) {
        f->split_active = 1;
        f->split_bytes = bytes;
    } else if (req) {
        *req = rmpi_api_done_req(NULL);
        rmpi_api_req(*req)->st_bytes = bytes;
    } else if (st != MPI_STATUS_IGNORE) {
        rmpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, bytes, 0);
    }
    return MPI_SUCCESS;
}

static int split_end(const char *func, MPI_File fh, MPI_Status *st)
{
    RMPI_API_INIT_CHECK();
    rmpi_file_t *f = rmpi_file_get(fh);
    if (!f)
        return file_error(NULL, MPI_ERR_FILE, func, "invalid file handle %p", (void *)fh);
    if (!f->split_active)
        return file_error(f, MPI_ERR_OTHER, func, "no split collective was begun on the file");
    f->split_active = 0;
    if (st != MPI_STATUS_IGNORE)
        rmpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, f->split_bytes, 0);
    return MPI_SUCCESS;
}

/* Each access comes as an int and an _c binding; the shapes: explicit offset or a file
 * pointer, then a status, a request or neither (split begin). CONST: const for writes. */
#define AT_ST(name, W, CONST)                                                                                        \
    int MPI_File_##name(MPI_File fh, MPI_Offset offset, CONST void *buf, int count, MPI_Datatype datatype,           \
                        MPI_Status *status)                                                                          \
    {                                                                                                                \
        return access_file(__func__, fh, W, RMPI_IO_AT, offset, buf, count, datatype, status, NULL, 0);              \
    }                                                                                                                \
    int MPI_File_##name##_c(MPI_File fh, MPI_Offset offset, CONST void *buf, MPI_Count count, MPI_Datatype datatype, \
                            MPI_Status *status)                                                                      \
    {                                                                                                                \
        return access_file(__func__, fh, W, RMPI_IO_AT, offset, buf, count, datatype, status, NULL, 0);              \
    }
#define PTR_ST(name, W, WHERE, CONST)                                                                                 \
    int MPI_File_##name(MPI_File fh, CONST void *buf, int count, MPI_Datatype datatype, MPI_Status *status)           \
    {                                                                                                                 \
        return access_file(__func__, fh, W, WHERE, 0, buf, count, datatype, status, NULL, 0);                         \
    }                                                                                                                 \
    int MPI_File_##name##_c(MPI_File fh, CONST void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) \
    {                                                                                                                 \
        return access_file(__func__, fh, W, WHERE, 0, buf, count, datatype, status, NULL, 0);                         \
    }
#define AT_REQ(name, W, CONST)                                                                                       \
    int MPI_File_##name(MPI_File fh, MPI_Offset offset, CONST void *buf, int count, MPI_Datatype datatype,           \
                        MPI_Request *request)                                                                        \
    {                                                                                                                \
        return request ? access_file(__func__, fh, W, RMPI_IO_AT, offset, buf, count, datatype, NULL, request, 0)    \
                       : file_error(rmpi_file_get(fh), MPI_ERR_ARG, __func__, "request must not be NULL");           \
    }                                                                                                                \
    int MPI_File_##name##_c(MPI_File fh, MPI_Offset offset, CONST void *buf, MPI_Count count, MPI_Datatype datatype, \
                            MPI_Request *request)                                                                    \
    {                                                                                                                \
        return request ? access_file(__func__, fh, W, RMPI_IO_AT, offset, buf, count, datatype, NULL, request, 0)    \
                       : file_error(rmpi_file_get(fh), MPI_ERR_ARG, __func__, "request must not be NULL");           \
    }
#define PTR_REQ(name, W, WHERE, CONST)                                                                        \
    int MPI_File_##name(MPI_File fh, CONST void *buf, int count, MPI_Datatype datatype, MPI_Request *request) \
    {                                                                                                         \
        return request ? access_file(__func__, fh, W, WHERE, 0, buf, count, datatype, NULL, request, 0)       \
                       : file_error(rmpi_file_get(fh), MPI_ERR_ARG, __func__, "request must not be NULL");    \
    }                                                                                                         \
    int MPI_File_##name##_c(MPI_File fh, CONST void *buf, MPI_Count count, MPI_Datatype datatype,             \
                            MPI_Request *request)                                                             \
    {                                                                                                         \
        return request ? access_file(__func__, fh, W, WHERE, 0, buf, count, datatype, NULL, request, 0)       \
                       : file_error(rmpi_file_get(fh), MPI_ERR_ARG, __func__, "request must not be NULL");    \
    }
#define AT_BEGIN(name, W, CONST)                                                                                   \
    int MPI_File_##name##_begin(MPI_File fh, MPI_Offset offset, CONST void *buf, int count, MPI_Datatype datatype) \
    {                                                                                                              \
        return access_file(__func__, fh, W, RMPI_IO_AT, offset, buf, count, datatype, NULL, NULL, 1);              \
    }                                                                                                              \
    int MPI_File_##name##_begin_c(MPI_File fh, MPI_Offset offset, CONST void *buf, MPI_Count count,                \
                                  MPI_Datatype datatype)                                                           \
    {                                                                                                              \
        return access_file(__func__, fh, W, RMPI_IO_AT, offset, buf, count, datatype, NULL, NULL, 1);              \
    }                                                                                                              \
    int MPI_File_##name##_end(MPI_File fh, CONST void *buf, MPI_Status *status)                                    \
    {                                                                                                              \
        return split_end(__func__, fh, status);                                                                    \
    }
#define PTR_BEGIN(name, W, WHERE, CONST)                                                                \
    int MPI_File_##name##_begin(MPI_File fh, CONST void *buf, int count, MPI_Datatype datatype)         \
    {                                                                                                   \
        return access_file(__func__, fh, W, WHERE, 0, buf, count, datatype, NULL, NULL, 1);             \
    }                                                                                                   \
    int MPI_File_##name##_begin_c(MPI_File fh, CONST void *buf, MPI_Count count, MPI_Datatype datatype) \
    {                                                                                                   \
        return access_file(__func__, fh, W, WHERE, 0, buf, count, datatype, NULL, NULL, 1);             \
    }                                                                                                   \
    int MPI_File_##name##_end(MPI_File fh, CONST void *buf, MPI_Status *status)                         \
    {                                                                                                   \
        return split_end(__func__, fh, status);                                                         \
    }

AT_ST(read_at, 0, )
AT_ST(read_at_all, 0, )
AT_ST(write_at, 1, const)
AT_ST(write_at_all, 1, const)
PTR_ST(read, 0, RMPI_IO_INDIV, )
PTR_ST(read_all, 0, RMPI_IO_INDIV, )
PTR_ST(write, 1, RMPI_IO_INDIV, const)
PTR_ST(write_all, 1, RMPI_IO_INDIV, const)
PTR_ST(read_shared, 0, RMPI_IO_SHARED, )
PTR_ST(write_shared, 1, RMPI_IO_SHARED, const)
PTR_ST(read_ordered, 0, RMPI_IO_ORDERED, )
PTR_ST(write_ordered, 1, RMPI_IO_ORDERED, const)
AT_REQ(iread_at, 0, )
AT_REQ(iread_at_all, 0, )
AT_REQ(iwrite_at, 1, const)
AT_REQ(iwrite_at_all, 1, const)
PTR_REQ(iread, 0, RMPI_IO_INDIV, )
PTR_REQ(iread_all, 0, RMPI_IO_INDIV, )
PTR_REQ(iwrite, 1, RMPI_IO_INDIV, const)
PTR_REQ(iwrite_all, 1, RMPI_IO_INDIV, const)
PTR_REQ(iread_shared, 0, RMPI_IO_SHARED, )
PTR_REQ(iwrite_shared, 1, RMPI_IO_SHARED, const)
AT_BEGIN(read_at_all, 0, )
AT_BEGIN(write_at_all, 1, const)
PTR_BEGIN(read_all, 0, RMPI_IO_INDIV, )
PTR_BEGIN(write_all, 1, RMPI_IO_INDIV, const)
PTR_BEGIN(read_ordered, 0, RMPI_IO_ORDERED, )
PTR_BEGIN(write_ordered, 1, RMPI_IO_ORDERED, const)
