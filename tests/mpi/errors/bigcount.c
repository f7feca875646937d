/* Counts whose bytes do not fit in 64 bits (2^24 elements of a 2^40-byte type: 2^64, which
 * wraps to 0) or in an MPI_Aint (2^23 of them: 2^63) give MPI_ERR_COUNT from every call
 * that multiplies a count by a type size: point-to-point, collectives, pack, reduce_local,
 * one-sided, file access, and type constructors refuse such a type. A count that fits
 * (2^22 elements: 2^62 bytes) is still accepted where nothing is touched (Pack_size_c). */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WRAP (1 << 24) /* 2^64 bytes */
#define HALF (1 << 23) /* 2^63 bytes */

static MPI_Datatype big; /* 2^40 bytes of MPI_BYTE */
static char buf[64];

static void pt2pt(int n)
{
    MPI_Request r;
    MTEST_ERR(MPI_Send(buf, n, big, 0, 1, MPI_COMM_SELF), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Isend(buf, n, big, 0, 1, MPI_COMM_SELF, &r), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Send_init(buf, n, big, 0, 1, MPI_COMM_SELF, &r), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Recv(buf, n, big, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Irecv(buf, n, big, 0, 1, MPI_COMM_SELF, &r), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Sendrecv(buf, n, big, 0, 1, buf, 1, MPI_BYTE, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Sendrecv_replace(buf, n, big, 0, 1, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Bsend(buf, n, big, 0, 1, MPI_COMM_SELF), MPI_ERR_COUNT);
}

static void coll(int n)
{
    int counts[64], displs[64];
    MPI_Datatype types[64];
    for (int i = 0; i < mtest_size; i++)
        counts[i] = n, displs[i] = 0, types[i] = big;
    MTEST_ERR(MPI_Bcast(buf, n, big, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Allreduce(buf, buf + 32, n, big, MPI_BOR, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Reduce(buf, buf + 32, n, big, MPI_BOR, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Scan(buf, buf + 32, n, big, MPI_BOR, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Reduce_scatter(buf, buf + 32, counts, big, MPI_BOR, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Gather(buf, n, big, buf + 32, n, big, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Allgather(buf, n, big, buf + 32, n, big, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Alltoall(buf, n, big, buf + 32, n, big, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Allgatherv(buf, 1, MPI_BYTE, buf + 32, counts, displs, big, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Alltoallw(buf, counts, displs, types, buf + 32, counts, displs, types, MPI_COMM_WORLD),
              MPI_ERR_COUNT);
    MTEST_ERR(MPI_Reduce_local(buf, buf + 32, n, big, MPI_BOR), MPI_ERR_COUNT);
}

static void pack(int n)
{
    int pos = 0, isize;
    MPI_Count csize;
    MPI_Aint asize;
    MTEST_ERR(MPI_Pack_size(n, big, MPI_COMM_WORLD, &isize), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Pack_size_c(n, big, MPI_COMM_WORLD, &csize), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Pack(buf, n, big, buf + 32, 32, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Unpack(buf, 32, &pos, buf + 32, n, big, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Pack_external_size("external32", n, big, &asize), MPI_ERR_COUNT);
}

static void rma(MPI_Win w, int n)
{
    MTEST_OK(MPI_Win_fence(0, w));
    MTEST_ERR(MPI_Put(buf, n, big, 0, 0, n, big, w), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Get(buf, n, big, 0, 0, n, big, w), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Accumulate(buf, n, big, 0, 0, n, big, MPI_BOR, w), MPI_ERR_COUNT);
    MTEST_OK(MPI_Win_fence(0, w));
}

static void io(MPI_File f, int n)
{
    MTEST_ERR(MPI_File_write_at(f, 0, buf, n, big, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MTEST_ERR(MPI_File_read_at(f, 0, buf, n, big, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MTEST_ERR(MPI_File_write(f, buf, n, big, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MTEST_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MTEST_CHECK(mtest_size <= 64, "at most 64 ranks");
    MPI_Datatype mib;
    MTEST_OK(MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib));
    MTEST_OK(MPI_Type_contiguous(1 << 20, mib, &big));
    MTEST_OK(MPI_Type_commit(&big));
    MPI_Count sz;
    MTEST_OK(MPI_Type_size_c(big, &sz));
    MTEST_CHECK(sz == (MPI_Count)1 << 40, "the big type has %lld bytes", (long long)sz);
    int bsize = 1 << 16;
    char *bbuf = malloc((size_t)bsize);
    MTEST_OK(MPI_Buffer_attach(bbuf, bsize));

    MPI_Win w;
    MTEST_OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MTEST_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    char path[] = "/tmp/rmpi_bigcountXXXXXX";
    if (mtest_rank == 0) {
        int fd = mkstemp(path);
        MTEST_CHECK(fd >= 0, "mkstemp");
        close(fd);
    }
    MTEST_OK(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_File f;
    MTEST_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &f));

    const int ns[] = {WRAP, HALF};
    for (int k = 0; k < 2; k++) {
        pt2pt(ns[k]);
        coll(ns[k]);
        pack(ns[k]);
        rma(w, ns[k]);
        io(f, ns[k]);
    }

    /* what fits is accepted */
    MPI_Count csize = 0;
    MTEST_OK(MPI_Pack_size_c(1 << 22, big, MPI_COMM_WORLD, &csize));
    MTEST_CHECK(csize == (MPI_Count)1 << 62, "Pack_size_c of 2^22 elements: %lld", (long long)csize);

    /* a type whose own size would overflow is refused */
    MPI_Datatype huge = MPI_DATATYPE_NULL;
    int rc = MPI_Type_contiguous(WRAP, big, &huge);
    MTEST_CHECK(rc != MPI_SUCCESS, "a type of 2^64 bytes was created");
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&huge);

    /* nothing was sent: the next messages match as usual */
    int v = mtest_rank + 1, sum = 0;
    MTEST_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_CHECK(sum == mtest_size * (mtest_size + 1) / 2, "allreduce after the errors: %d", sum);
    int got = -1;
    v = 42;
    MTEST_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 9, &got, 1, MPI_INT, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    MTEST_CHECK(got == 42, "a message to itself after the errors: %d", got);

    MTEST_OK(MPI_File_close(&f));
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank == 0)
        unlink(path);
    MTEST_OK(MPI_Win_free(&w));
    void *addr;
    MTEST_OK(MPI_Buffer_detach(&addr, &bsize));
    free(bbuf);
    MTEST_OK(MPI_Type_free(&big));
    MTEST_OK(MPI_Type_free(&mib));
    return mtest_finalize();
}
