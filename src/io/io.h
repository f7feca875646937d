/*
 * io: MPI-IO (MPI-4.1 chapter 14) on POSIX files.
 *
 * A file is one descriptor per process (pread/pwrite, never the descriptor's own offset),
 * a private duplicate of the communicator it was opened on (the agreement and ordering
 * messages of this layer travel there, on its collective context, tags RMPI_IO_TAG_*),
 * and a view: displacement (bytes), etype and filetype (references held), datarep
 * "native". Offsets and file pointers are in etypes of the current view; a view position
 * p is byte p * etype size of the view's data stream, which the filetype, tiled from the
 * displacement at its extent, maps to file bytes (the datatype layer's segment iterator
 * lists the pieces). Memory buffers are listed the same way: each transfer is a preadv or
 * pwritev per contiguous file piece, gathering the memory pieces that land in it.
 *
 * Collective calls: open, close, set_view, set_size, preallocate, sync, set_info,
 * set_atomicity, seek_shared and the ordered accesses synchronise (open and set_view
 * agree on one error for every rank); the *_all accesses do independent I/O, which the
 * standard allows. Shared file pointer: an 8-byte lock file beside the data file
 * (".NAME.rmpi-shfp.PID.SEQ", made on the first shared access, removed at close), read
 * and advanced under an fcntl write lock, so it works wherever the file system honours
 * POSIX locks. Atomic mode takes an fcntl lock over the whole file for every access.
 *
 * Errors: functions return 0 or an MPI error class (errno mapped by rmpi_io_errno).
 * Who calls: api (src/api/api_file.c). Threading: caller holds the library lock; the
 * calls block in system calls and, for the collective ones, in the core.
 */
#ifndef RMPI_IO_H
#define RMPI_IO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"

#define RMPI_FILE_MAGIC 0x46494c45u /* "FILE" */
/* Tags on the private communicator's collective context: below the comm layer's 0x7ff0
 * and the schedules' bit 24. */
enum { RMPI_IO_TAG_GATHER = 0x7e00 };

typedef struct rmpi_file {
    uint32_t magic;
    int fd;
    int amode;
    int atomic;
    char *path;
    rmpi_comm_t *comm;   /* private duplicate of the communicator of MPI_File_open */
    rmpi_info_t *info;   /* hints as set by the user (never NULL) */
    MPI_Errhandler errh; /* owned by the api layer */
    /* view */
    MPI_Offset disp;
    rmpi_dtype_t *etype, *ftype;
    char datarep[MPI_MAX_DATAREP_STRING]; /* name given to set_view (the layout is native) */
    MPI_Offset fp;                        /* individual file pointer, etypes */
    /* shared file pointer: lock file, made on first use */
    char *shfp_path;
    int shfp_fd;          /* -1 until this rank first needs it */
    MPI_Offset shfp_init; /* value of an empty shared-pointer file (end of file with APPEND) */
    /* split collective in progress (MPI_File_*_begin): its result, for *_end */
    int split_active;
    int split_rc;
    size_t split_bytes;
    const void *split_buf;
} rmpi_file_t;

/* Files handed out (util.h): a handle is looked up before it is read. */
extern rmpi_addrset_t rmpi_file_live;
static inline rmpi_file_t *rmpi_file_get(MPI_File h)
{
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&rmpi_file_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_file_t *f = (rmpi_file_t *)h;
    return f->magic == RMPI_FILE_MAGIC ? f : NULL;
}

/* errno -> MPI error class (ENOENT: MPI_ERR_NO_SUCH_FILE, EEXIST: MPI_ERR_FILE_EXISTS,
 * EACCES: MPI_ERR_ACCESS, EROFS: MPI_ERR_READ_ONLY, ENOSPC: MPI_ERR_NO_SPACE, EDQUOT:
 * MPI_ERR_QUOTA, EISDIR/ENAMETOOLONG/ENOTDIR: MPI_ERR_BAD_FILE, others MPI_ERR_IO). */
int rmpi_io_errno(int e);
/* 0 or MPI_ERR_AMODE: exactly one of RDONLY/WRONLY/RDWR, no CREATE or EXCL with RDONLY,
 * no SEQUENTIAL with RDWR, no unknown bits. */
int rmpi_io_check_amode(int amode);

/* Collective over c: every rank opens, and all return the same code (the first failing
 * rank's class; MPI_ERR_NOT_SAME when the amodes differ). Rank 0 opens first, so
 * MPI_MODE_CREATE | MPI_MODE_EXCL creates the file once. info is copied. */
int rmpi_io_open(rmpi_comm_t *c, const char *path, int amode, const rmpi_info_t *info, rmpi_file_t **out);
/* Collective: closes, removes the shared-pointer file and, with DELETE_ON_CLOSE, the
 * file (rank 0, after every rank closed); frees f. */
int rmpi_io_close(rmpi_file_t *f);
int rmpi_io_delete(const char *path);

int rmpi_io_get_size(rmpi_file_t *f, MPI_Offset *size);
/* Collective; set_size truncates or extends, preallocate only extends. */
int rmpi_io_set_size(rmpi_file_t *f, MPI_Offset size, int preallocate);
int rmpi_io_sync(rmpi_file_t *f);
int rmpi_io_barrier(rmpi_file_t *f);

/* Collective: a new view (references taken on etype and filetype, dropped on the old
 * ones); both file pointers go to 0. MPI_ERR_UNSUPPORTED_DATAREP for any datarep but
 * "native"; MPI_ERR_TYPE when the filetype is not made of whole etypes, has no data or
 * has negative displacements. disp MPI_DISPLACEMENT_CURRENT (SEQUENTIAL files): the
 * shared pointer's byte position. Every rank returns the same code. */
int rmpi_io_set_view(rmpi_file_t *f, MPI_Offset disp, rmpi_dtype_t *etype, rmpi_dtype_t *ftype, const char *datarep);

/* View position (etypes) <-> absolute byte offset. */
MPI_Offset rmpi_io_byte_offset(const rmpi_file_t *f, MPI_Offset pos);
/* The view position of the end of the file (etypes of view data before it). */
int rmpi_io_end_position(rmpi_file_t *f, MPI_Offset *pos);

/* Where an access starts. */
enum { RMPI_IO_AT, RMPI_IO_INDIV, RMPI_IO_SHARED, RMPI_IO_ORDERED };
/* One access of `count` elements of dt at buf: at view position `off` (AT), the
 * individual pointer (INDIV, advanced), the shared pointer (SHARED, advanced atomically)
 * or in rank order from the shared pointer (ORDERED: collective). *bytes: bytes moved
 * (fewer than asked only when a read meets the end of the file). */
int rmpi_io_access(rmpi_file_t *f, int write, int where, MPI_Offset off, void *buf, size_t count,
                   const rmpi_dtype_t *dt, size_t *bytes);

/* MPI_File_seek (shared = 0) and MPI_File_seek_shared (shared = 1: collective, every
 * rank passes the same arguments): whence MPI_SEEK_SET/CUR/END; MPI_ERR_ARG when the
 * position would be negative. */
int rmpi_io_seek(rmpi_file_t *f, MPI_Offset off, int whence, int shared);
/* The shared file pointer (etypes). */
int rmpi_io_shared_get(rmpi_file_t *f, MPI_Offset *pos);

#endif
