/* Views, file pointers and data access: a view position is a byte of the view's data
 * stream, which the filetype (tiled from the displacement at its extent) maps to file
 * bytes; memory is (buf, count, type). Both are walked with the datatype layer's segment
 * iterator, and each contiguous file piece is one preadv/pwritev of the memory pieces
 * that fill it. */
#include "io_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define IOV_BATCH 64

/* The contiguous pieces of a stream range, one at a time. A filetype is walked with
 * buf = NULL, so a piece's address is its byte offset from the view's origin. */
typedef struct cursor {
    rmpi_dtype_iter_t it;
    struct iovec v[IOV_BATCH];
    int n, i;
    char *p; /* current piece: next byte and bytes left */
    size_t left;
} cursor_t;

static void cur_init(cursor_t *c, const void *buf, size_t count, const rmpi_dtype_t *dt, size_t off, size_t len)
{
    rmpi_dtype_iter_init(&c->it, buf, count, dt, off, len);
    c->n = c->i = 0;
    c->left = 0;
}

/* 1 while a piece is current. */
static int cur_fill(cursor_t *c)
{
    while (!c->left) {
        if (c->i == c->n) {
            c->n = rmpi_dtype_iter_next(&c->it, c->v, IOV_BATCH);
            c->i = 0;
            if (!c->n)
                return 0;
        }
        c->p = c->v[c->i].iov_base;
        c->left = c->v[c->i++].iov_len;
    }
    return 1;
}

static void cur_take(cursor_t *c, size_t n)
{
    c->p += n;
    c->left -= n;
}

/* Filetype elements that hold view stream bytes [0, end). */
static size_t tiles(const rmpi_file_t *f, size_t end) { return (end + f->ftype->size - 1) / f->ftype->size; }

static void lock_file(rmpi_file_t *f, short type)
{
    /* atomic mode: failures (special files) leave the access unlocked, as on file
     * systems without locks */
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (f->atomic)
        while (fcntl(f->fd, F_SETLKW, &l) < 0 && errno == EINTR)
            ;
}

/* Move `count` elements of dt at buf to/from view stream bytes from `pos` on. */
static int transfer(rmpi_file_t *f, int write, size_t pos, char *buf, size_t count, const rmpi_dtype_t *dt,
                    size_t *done)
{
    size_t total = count * dt->size;
    *done = 0;
    if (!total)
        return 0;
    cursor_t mem, file;
    cur_init(&mem, buf, count, dt, 0, total);
    cur_init(&file, NULL, tiles(f, pos + total), f->ftype, pos, total);
    int rc = 0;
    lock_file(f, write ? F_WRLCK : F_RDLCK);
    while (*done < total && cur_fill(&file)) {
        struct iovec iov[IOV_BATCH];
        int n = 0;
        size_t want = 0;
        while (want < file.left && n < IOV_BATCH && cur_fill(&mem)) {
            size_t k = RMPI_MIN(mem.left, file.left - want);
            iov[n++] = (struct iovec){mem.p, k};
            cur_take(&mem, k);
            want += k;
        }
        off_t at = (off_t)(f->disp + (MPI_Offset)(uintptr_t)file.p);
        ssize_t r = write ? pwritev(f->fd, iov, n, at) : preadv(f->fd, iov, n, at);
        if (r < 0 && errno == EINTR)
            r = 0;
        else if (r < 0) {
            rc = rmpi_io_errno(errno);
            break;
        } else if (r == 0 && !write)
            break; /* end of file */
        *done += (size_t)r;
        cur_take(&file, (size_t)r);
        if ((size_t)r < want) {
            if (!write)
                break; /* a short read is the end of the file */
            cur_init(&mem, buf, count, dt, *done, total - *done);
        }
    }
    lock_file(f, F_UNLCK);
    return rc;
}

/* File byte of view stream byte pos. */
static MPI_Offset stream_to_file(const rmpi_file_t *f, size_t pos)
{
    const rmpi_dtype_t *ft = f->ftype;
    rmpi_dtype_iter_t it;
    struct iovec v = {0};
    rmpi_dtype_iter_init(&it, NULL, 1, ft, pos % ft->size, 1);
    rmpi_dtype_iter_next(&it, &v, 1);
    return f->disp + (MPI_Offset)(pos / ft->size) * ft->extent + (MPI_Offset)(uintptr_t)v.iov_base;
}

MPI_Offset rmpi_io_byte_offset(const rmpi_file_t *f, MPI_Offset pos)
{
    return stream_to_file(f, (size_t)pos * f->etype->size);
}

int rmpi_io_end_position(rmpi_file_t *f, MPI_Offset *pos)
{
    MPI_Offset size;
    int rc = rmpi_io_get_size(f, &size);
    if (rc)
        return rc;
    *pos = 0;
    MPI_Offset rel = size - f->disp;
    if (rel <= 0)
        return 0;
    /* whole filetype elements, then the data of the last one that lies before the end */
    const rmpi_dtype_t *ft = f->ftype;
    MPI_Offset k = rel / ft->extent, rem = rel - k * ft->extent;
    size_t bytes = (size_t)k * ft->size;
    cursor_t c;
    cur_init(&c, NULL, 1, ft, 0, ft->size);
    while (cur_fill(&c) && (MPI_Offset)(uintptr_t)c.p < rem) {
        size_t n = RMPI_MIN(c.left, (size_t)(rem - (MPI_Offset)(uintptr_t)c.p));
        bytes += n;
        cur_take(&c, c.left);
    }
    *pos = (MPI_Offset)(bytes / f->etype->size);
    return 0;
}

int rmpi_io_set_view(rmpi_file_t *f, MPI_Offset disp, rmpi_dtype_t *etype, rmpi_dtype_t *ftype, const char *datarep)
{
    int rc = 0;
    if (strcmp(datarep, "native") != 0)
        rc = MPI_ERR_UNSUPPORTED_DATAREP;
    else if (!etype->size || !ftype->size || ftype->size % etype->size || ftype->extent <= 0 || ftype->true_lb < 0)
        rc = MPI_ERR_TYPE;
    MPI_Offset shared = 0;
    if (!rc && disp == MPI_DISPLACEMENT_CURRENT) {
        rc = rmpi_io_shared_get(f, &shared);
        disp = rmpi_io_byte_offset(f, shared);
    }
    /* also: every rank's earlier shared accesses are done before the pointer is reset */
    rc = rmpi_io_agree(f->comm, rc);
    if (rc)
        return rc;
    rmpi_dtype_retain(etype);
    rmpi_dtype_retain(ftype);
    rmpi_dtype_release(f->etype);
    rmpi_dtype_release(f->ftype);
    f->etype = etype;
    f->ftype = ftype;
    f->disp = disp;
    f->fp = 0;
    /* the shared pointer goes to 0 too: an empty shared-pointer file reads as 0 */
    f->shfp_init = 0;
    if (f->comm->rank == 0) {
        int fd = f->shfp_fd >= 0 ? f->shfp_fd : open(f->shfp_path, O_RDWR | O_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, 0) < 0)
            rc = rmpi_io_errno(errno);
        if (fd >= 0 && fd != f->shfp_fd)
            close(fd);
    }
    return rmpi_io_agree(f->comm, rc);
}

int rmpi_io_shared_get(rmpi_file_t *f, MPI_Offset *pos) { return rmpi_io_shfp_update(f, 0, 0, pos); }

int rmpi_io_seek(rmpi_file_t *f, MPI_Offset off, int whence, int shared)
{
    /* shared: every rank's earlier shared accesses are done before rank 0 reads and
     * moves the pointer */
    int rc = shared ? rmpi_io_barrier(f) : 0;
    MPI_Offset base = 0;
    if (rc)
        return rc;
    if (whence == MPI_SEEK_CUR && shared)
        rc = f->comm->rank == 0 ? rmpi_io_shared_get(f, &base) : 0;
    else if (whence == MPI_SEEK_CUR)
        base = f->fp;
    else if (whence == MPI_SEEK_END)
        rc = rmpi_io_end_position(f, &base);
    if (!rc && base + off < 0)
        rc = MPI_ERR_ARG;
    if (!shared) {
        if (!rc)
            f->fp = base + off;
        return rc;
    }
    if (!rc && f->comm->rank == 0)
        rc = rmpi_io_shfp_update(f, base + off, 1, NULL);
    return rmpi_io_agree(f->comm, rc);
}

/* Ordered access: each rank's place is the shared pointer plus the etypes of the ranks
 * before it; rank 0 advances the pointer by everyone's. */
static int ordered_position(rmpi_file_t *f, MPI_Offset n, MPI_Offset *pos)
{
    rmpi_comm_t *c = f->comm;
    MPI_Offset *all = rmpi_xmalloc((size_t)c->size * sizeof *all), total = 0, base[2] = {0, 0};
    rmpi_io_allgather(c, &n, sizeof n, all);
    for (int r = 0; r < c->size; r++)
        total += all[r];
    if (c->rank == 0)
        base[1] = rmpi_io_shfp_update(f, total, 0, &base[0]);
    if (c->size > 1)
        rmpi_comm_bcast_small(c, base, sizeof base, 0);
    *pos = base[0];
    for (int r = 0; r < c->rank; r++)
        *pos += all[r];
    free(all);
    return (int)base[1];
}

int rmpi_io_access(rmpi_file_t *f, int write, int where, MPI_Offset off, void *buf, size_t count,
                   const rmpi_dtype_t *dt, size_t *bytes)
{
    size_t esz = f->etype->size;
    MPI_Offset n = (MPI_Offset)((count * dt->size + esz - 1) / esz), pos = off;
    int rc = 0;
    *bytes = 0;
    if (where == RMPI_IO_INDIV)
        pos = f->fp;
    else if (where == RMPI_IO_SHARED)
        rc = rmpi_io_shfp_update(f, n, 0, &pos);
    else if (where == RMPI_IO_ORDERED)
        rc = ordered_position(f, n, &pos);
    if (rc)
        return rc;
    rc = transfer(f, write, (size_t)pos * esz, buf, count, dt, bytes);
    if (where == RMPI_IO_INDIV)
        f->fp = pos + (MPI_Offset)((*bytes + esz - 1) / esz);
    return rc;
}
