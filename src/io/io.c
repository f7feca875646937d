/* Files: open/close/delete, sizes, sync, agreement among the ranks, the shared-pointer
 * file. Views and data access are in io_access.c. */
#include "io_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

rmpi_addrset_t rmpi_file_live = RMPI_ADDRSET_INIT;

int rmpi_io_errno(int e)
{
    switch (e) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EISDIR:
    case ENAMETOOLONG:
    case ENOTDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ETXTBSY: return MPI_ERR_FILE_IN_USE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
    }
}

int rmpi_io_check_amode(int amode)
{
    const int known = MPI_MODE_APPEND | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_EXCL | MPI_MODE_RDONLY |
                      MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_UNIQUE_OPEN | MPI_MODE_WRONLY;
    int access = amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY);
    if ((amode & ~known) || !access || (access & (access - 1)))
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return MPI_ERR_AMODE;
    return 0;
}

void rmpi_io_allgather(rmpi_comm_t *c, const void *mine, size_t len, void *all)
{
    memcpy((char *)all + (size_t)c->rank * len, mine, len);
    if (c->size == 1)
        return;
    if (c->rank == 0)
        for (int r = 1; r < c->size; r++)
            rmpi_comm_coll_recv(c, (char *)all + (size_t)r * len, len, r, RMPI_IO_TAG_GATHER);
    else
        rmpi_comm_coll_send(c, mine, len, 0, RMPI_IO_TAG_GATHER);
    rmpi_comm_bcast_small(c, all, (size_t)c->size * len, 0);
}

int rmpi_io_agree(rmpi_comm_t *c, int rc)
{
    if (c->size == 1)
        return rc;
    int *all = rmpi_xmalloc((size_t)c->size * sizeof *all);
    rmpi_io_allgather(c, &rc, sizeof rc, all);
    rc = 0;
    for (int r = 0; r < c->size && !rc; r++)
        rc = all[r];
    free(all);
    return rc;
}

/* The shared-pointer file: ".NAME.rmpi-shfp.PID.SEQ" beside the file, PID and SEQ those of
 * rank 0's open, so two opens of one file never share a pointer. */
static char *shfp_name(const char *path, long pid, long seq)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    size_t n = strlen(path) + 64;
    char *s = rmpi_xmalloc(n);
    snprintf(s, n, "%.*s.%s.rmpi-shfp.%ld.%ld", dirlen, path, path + dirlen, pid, seq);
    return s;
}

int rmpi_io_open(rmpi_comm_t *c, const char *path, int amode, const rmpi_info_t *info, rmpi_file_t **out)
{
    static long seq;
    rmpi_comm_t *pc;
    int rc = rmpi_comm_dup(c, &pc);
    if (rc)
        return rc;
    int flags = O_CLOEXEC | ((amode & MPI_MODE_RDONLY) ? O_RDONLY : (amode & MPI_MODE_WRONLY) ? O_WRONLY : O_RDWR);
    if (amode & MPI_MODE_CREATE)
        flags |= O_CREAT;
    if (amode & MPI_MODE_EXCL)
        flags |= O_EXCL;
    /* rank 0 opens (creates) first; the others open the existing file with its amode */
    long first[4] = {amode, 0, (long)getpid(), seq++};
    int fd = -1, err = 0;
    if (pc->rank == 0) {
        fd = open(path, flags, 0666);
        first[1] = fd < 0 ? rmpi_io_errno(errno) : 0;
    }
    rmpi_comm_bcast_small(pc, first, sizeof first, 0);
    if (pc->rank != 0) {
        if (first[0] != amode)
            err = MPI_ERR_NOT_SAME;
        else if (!first[1] && (fd = open(path, flags & ~(O_CREAT | O_EXCL))) < 0)
            err = rmpi_io_errno(errno);
    }
    struct stat st = {0};
    if (fd >= 0 && fstat(fd, &st) < 0)
        err = rmpi_io_errno(errno);
    rc = rmpi_io_agree(pc, first[1] ? (int)first[1] : err);
    if (rc) {
        if (fd >= 0)
            close(fd);
        rmpi_comm_release(pc);
        return rc;
    }
    rmpi_file_t *f = rmpi_xcalloc(1, sizeof *f);
    f->magic = RMPI_FILE_MAGIC;
    rmpi_addrset_add(&rmpi_file_live, f);
    f->fd = fd;
    f->amode = amode;
    f->path = rmpi_xstrdup(path);
    f->comm = pc;
    f->info = rmpi_info_dup(info);
    f->etype = f->ftype = rmpi_dtype_get(MPI_BYTE);
    strcpy(f->datarep, "native");
    f->shfp_fd = -1;
    f->shfp_path = shfp_name(path, first[2], first[3]);
    if (amode & MPI_MODE_APPEND) /* every file pointer starts at the end */
        f->fp = f->shfp_init = (MPI_Offset)st.st_size;
    *out = f;
    return 0;
}

int rmpi_io_close(rmpi_file_t *f)
{
    int rc = close(f->fd) < 0 ? rmpi_io_errno(errno) : 0;
    if (f->shfp_fd >= 0)
        close(f->shfp_fd);
    rc = rmpi_io_agree(f->comm, rc); /* every rank is done with both files */
    if (f->comm->rank == 0) {
        unlink(f->shfp_path);
        if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(f->path) < 0 && !rc)
            rc = rmpi_io_errno(errno);
    }
    rmpi_dtype_release(f->etype);
    rmpi_dtype_release(f->ftype);
    rmpi_comm_release(f->comm);
    rmpi_info_free(f->info);
    free(f->path);
    free(f->shfp_path);
    f->magic = 0;
    rmpi_addrset_del(&rmpi_file_live, f);
    free(f);
    return rc;
}

int rmpi_io_delete(const char *path) { return unlink(path) < 0 ? rmpi_io_errno(errno) : 0; }

int rmpi_io_get_size(rmpi_file_t *f, MPI_Offset *size)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return rmpi_io_errno(errno);
    *size = (MPI_Offset)st.st_size;
    return 0;
}

int rmpi_io_set_size(rmpi_file_t *f, MPI_Offset size, int preallocate)
{
    /* every rank's earlier accesses are done before rank 0 cuts the file */
    int rc = rmpi_io_barrier(f);
    if (!rc && f->comm->rank == 0) {
        MPI_Offset cur;
        rc = rmpi_io_get_size(f, &cur);
        if (!rc && (!preallocate || size > cur)) {
            /* preallocate reserves blocks where the file system can, else extends */
            int e = preallocate ? posix_fallocate(f->fd, 0, (off_t)size) : EINVAL;
            if (e && ftruncate(f->fd, (off_t)size) < 0)
                rc = rmpi_io_errno(errno);
        }
    }
    return rmpi_io_agree(f->comm, rc);
}

int rmpi_io_sync(rmpi_file_t *f)
{
    /* special files (/dev/null) cannot be synced: nothing to do for them */
    int rc = fdatasync(f->fd) < 0 && errno != EINVAL && errno != EROFS ? rmpi_io_errno(errno) : 0;
    return rmpi_io_agree(f->comm, rc);
}

int rmpi_io_barrier(rmpi_file_t *f) { return rmpi_io_agree(f->comm, 0); }

static int shfp_lock(int fd, short type)
{
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    while (fcntl(fd, F_SETLKW, &l) < 0)
        if (errno != EINTR)
            return rmpi_io_errno(errno);
    return 0;
}

int rmpi_io_shfp_update(rmpi_file_t *f, MPI_Offset v, int set, MPI_Offset *old)
{
    if (f->shfp_fd < 0 && (f->shfp_fd = open(f->shfp_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return rmpi_io_errno(errno);
    int rc = shfp_lock(f->shfp_fd, F_WRLCK);
    if (rc)
        return rc;
    int64_t cur = f->shfp_init, next;
    ssize_t n = pread(f->shfp_fd, &cur, sizeof cur, 0);
    if (n < 0)
        rc = rmpi_io_errno(errno);
    else if (n != (ssize_t)sizeof cur)
        cur = f->shfp_init;
    next = set ? v : cur + v;
    if (!rc && (set || v) && pwrite(f->shfp_fd, &next, sizeof next, 0) != (ssize_t)sizeof next)
        rc = MPI_ERR_IO;
    shfp_lock(f->shfp_fd, F_UNLCK);
    if (old)
        *old = cur;
    return rc;
}
