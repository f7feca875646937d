/* io: the arithmetic of file views, without a communicator: the access mode rules of
 * MPI_File_open (every combination of the nine mode bits against the standard's rules,
 * MPI-4.1 section 14.2.1), the errno-to-class map, and for views whose filetype is a
 * vector with gaps (resized, with a lower bound) at several displacements: the file byte
 * of each view position (MPI_File_get_byte_offset) and the view position of the end of a
 * file of every size (what seek END and get_size-based positions use), both against a
 * byte map of the view built here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../unit_check.h"
#include "io/io.h"

static int model_amode(int m)
{
    const int known = MPI_MODE_APPEND | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_EXCL | MPI_MODE_RDONLY |
                      MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_UNIQUE_OPEN | MPI_MODE_WRONLY;
    if (m & ~known)
        return 0;
    int rd = !!(m & MPI_MODE_RDONLY), rw = !!(m & MPI_MODE_RDWR), wr = !!(m & MPI_MODE_WRONLY);
    if (rd + rw + wr != 1) /* exactly one access mode */
        return 0;
    if (rd && (m & (MPI_MODE_CREATE | MPI_MODE_EXCL))) /* "erroneous to specify CREATE or EXCL with RDONLY" */
        return 0;
    if (rw && (m & MPI_MODE_SEQUENTIAL)) /* "erroneous to specify SEQUENTIAL with RDWR" */
        return 0;
    return 1;
}

static void amodes(void)
{
    static const int bits[] = {MPI_MODE_APPEND,     MPI_MODE_CREATE,      MPI_MODE_DELETE_ON_CLOSE,
                               MPI_MODE_EXCL,       MPI_MODE_RDONLY,      MPI_MODE_RDWR,
                               MPI_MODE_SEQUENTIAL, MPI_MODE_UNIQUE_OPEN, MPI_MODE_WRONLY};
    int nbits = (int)(sizeof bits / sizeof *bits), nvalid = 0;
    for (int set = 0; set < 1 << nbits; set++) {
        int m = 0;
        for (int b = 0; b < nbits; b++)
            if (set >> b & 1)
                m |= bits[b];
        int want = model_amode(m) ? 0 : MPI_ERR_AMODE, got = rmpi_io_check_amode(m);
        nvalid += !want;
        CHECK(got == want, "amode %#x: %d, expected %d", m, got, want);
        CHECK_BAIL();
    }
    /* 3 access modes x 2^6 others, minus RDONLY with CREATE or EXCL (3/4 of 64) and RDWR with SEQUENTIAL (32) */
    CHECK(nvalid == 3 * 64 - 48 - 32, "%d valid amodes, expected %d", nvalid, 3 * 64 - 48 - 32);
    int unknown = 1;
    while (unknown &&
           (unknown & (MPI_MODE_APPEND | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_EXCL | MPI_MODE_RDONLY |
                       MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_UNIQUE_OPEN | MPI_MODE_WRONLY)))
        unknown <<= 1;
    CHECK(unknown && rmpi_io_check_amode(MPI_MODE_RDWR | unknown) == MPI_ERR_AMODE, "an unknown bit %#x accepted",
          unknown);
}

static void errnos(void)
{
    static const struct {
        int e, cls;
    } m[] = {{ENOENT, MPI_ERR_NO_SUCH_FILE},
             {EEXIST, MPI_ERR_FILE_EXISTS},
             {EACCES, MPI_ERR_ACCESS},
             {EPERM, MPI_ERR_ACCESS},
             {EROFS, MPI_ERR_READ_ONLY},
             {ENOSPC, MPI_ERR_NO_SPACE},
             {EFBIG, MPI_ERR_NO_SPACE},
             {EDQUOT, MPI_ERR_QUOTA},
             {EISDIR, MPI_ERR_BAD_FILE},
             {ENOTDIR, MPI_ERR_BAD_FILE},
             {ENAMETOOLONG, MPI_ERR_BAD_FILE},
             {ETXTBSY, MPI_ERR_FILE_IN_USE},
             {ENOMEM, MPI_ERR_NO_MEM},
             {EIO, MPI_ERR_IO},
             {EINVAL, MPI_ERR_IO}};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
        CHECK(rmpi_io_errno(m[i].e) == m[i].cls, "errno %d: class %d, expected %d", m[i].e, rmpi_io_errno(m[i].e),
              m[i].cls);
}

/* ---- views ---- */

#define MAXB 4096
static MPI_Offset byte_at[MAXB]; /* file byte of view stream byte i */

/* Stream bytes of the filetype vector(count, bl ints, stride ints) placed from lb, tiled
 * at extent from disp: enumerated in typemap order, so independent of the iterator. */
static int build_map(MPI_Offset disp, int count, int bl, int stride, MPI_Aint extent, size_t nbytes)
{
    size_t n = 0;
    for (MPI_Offset tile = 0; n < nbytes; tile++)
        for (int b = 0; b < count && n < nbytes; b++)
            for (int j = 0; j < bl * 4 && n < nbytes; j++)
                byte_at[n++] = disp + tile * extent + (MPI_Offset)b * stride * 4 + j;
    return (int)n;
}

static void view(MPI_Offset disp, int count, int bl, int stride, MPI_Aint lb, MPI_Aint extent, int fd)
{
    rmpi_dtype_t *vec = NULL, *ft = NULL;
    CHECK(rmpi_dtype_vector(count, bl, stride, MPI_INT, 0, &vec) == MPI_SUCCESS, "vector");
    CHECK(rmpi_dtype_resized(rmpi_dtype_handle(vec), lb, extent, 0, &ft) == MPI_SUCCESS, "resized");
    if (!vec || !ft)
        return;
    rmpi_dtype_commit(ft);
    rmpi_file_t f;
    memset(&f, 0, sizeof f);
    f.fd = fd;
    f.disp = disp;
    f.etype = rmpi_dtype_get(MPI_INT);
    f.ftype = ft;
    int n = build_map(disp, count, bl, stride, extent, MAXB);
    char what[96];
    snprintf(what, sizeof what, "disp %lld, vector(%d, %d, %d) resized to [%ld, +%ld)", (long long)disp, count, bl,
             stride, (long)lb, (long)extent);
    for (int pos = 0; pos < n / 4; pos++) {
        MPI_Offset got = rmpi_io_byte_offset(&f, pos);
        CHECK(got == byte_at[4 * pos], "%s: etype %d at file byte %lld, expected %lld", what, pos, (long long)got,
              (long long)byte_at[4 * pos]);
        CHECK_BAIL();
    }
    /* the end of a file of every size from 0 to past a few tiles: whole etypes before it */
    MPI_Offset last = byte_at[n - 1];
    for (MPI_Offset size = 0; size <= last + 3; size += size < disp + 2 * extent ? 1 : 7) {
        CHECK(ftruncate(fd, (off_t)size) == 0, "ftruncate");
        int bytes = 0;
        while (bytes < n && byte_at[bytes] < size)
            bytes++;
        MPI_Offset want = bytes / 4, got = -1;
        CHECK(rmpi_io_end_position(&f, &got) == 0, "end_position");
        CHECK(got == want, "%s: a %lld-byte file ends at etype %lld, expected %lld", what, (long long)size,
              (long long)got, (long long)want);
        CHECK_BAIL();
    }
    rmpi_dtype_free(ft);
    rmpi_dtype_free(vec);
}

static void views(void)
{
    char path[] = "/tmp/rmpi_unit_io_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    unlink(path);
    /* contiguous: a plain int stream after disp */
    view(0, 1, 1, 1, 0, 4, fd);
    view(10, 1, 1, 1, 0, 4, fd);
    /* 3 blocks of 2 ints every 5 ints, tiled at 64 bytes: gaps inside and between tiles */
    view(0, 3, 2, 5, 0, 64, fd);
    view(12, 3, 2, 5, 0, 64, fd);
    /* the ranks' interleave of tests/mpi/io/file: one block per tile of 4 */
    view(4 * 3, 1, 2, 2, 0, 32, fd);
    /* blocks as long as the stride: contiguous data, tile gaps only */
    view(0, 4, 1, 1, 0, 24, fd);
    /* a lower bound below 0 does not move the data: offsets are the type's own */
    view(100, 2, 1, 3, -8, 40, fd);
    close(fd);
}

int main(void)
{
    amodes();
    errnos();
    views();
    return finish("io_view");
}
