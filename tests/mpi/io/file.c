/* MPI-IO data access: every rank writes its blocks through a view whose filetype is a
 * vector (the ranks' blocks interleave in the file), reads them back independently and
 * collectively, with explicit offsets, individual and shared file pointers, ordered,
 * non-blocking and split collective accesses, non-contiguous memory; checks the file's
 * bytes through a plain view, statuses (Get_count), sizes, positions and byte offsets.
 * Files live in a mkdtemp directory under /tmp that is removed at the end. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define B 3 /* ints per block */
#define N 4 /* blocks per rank */

static char dir[64];

static void make_dir(void)
{
    if (mtest_rank == 0) {
        strcpy(dir, "/tmp/rmpi-io-XXXXXX");
        MTEST_CHECK(mkdtemp(dir), "mkdtemp failed");
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static void path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static int value(int rank, int j) { return rank * 100000 + j; }

static int count_of(MPI_Status *st, MPI_Datatype t)
{
    int n = -1;
    MPI_Get_count(st, t, &n);
    return n;
}

/* The whole file as ints, through a plain view (every rank reads it all). */
static int *read_whole(MPI_File fh, int n)
{
    int *all = mtest_malloc((size_t)n * sizeof *all);
    MPI_Status st;
    MTEST_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MTEST_OK(MPI_File_read_at_all(fh, 0, all, n, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == n, "read %d ints of the whole file, expected %d", count_of(&st, MPI_INT), n);
    return all;
}

/* The interleaved file: block b of rank r at int (b * P + r) * B. */
static void check_interleaved(MPI_File fh, int salt, const char *what)
{
    int P = mtest_size, n = N * B * P;
    int *all = read_whole(fh, n);
    for (int i = 0; i < n; i++) {
        int blk = i / B, r = blk % P, j = (blk / P) * B + i % B;
        if (all[i] != value(r, j) + salt) {
            mtest_error(__FILE__, __LINE__, "%s: int %d is %d, expected %d", what, i, all[i], value(r, j) + salt);
            break;
        }
    }
    free(all);
}

static void set_vector_view(MPI_File fh, MPI_Datatype vec)
{
    MTEST_OK(MPI_File_set_view(fh, (MPI_Offset)mtest_rank * B * sizeof(int), MPI_INT, vec, "native", MPI_INFO_NULL));
}

static void views(MPI_Datatype vec)
{
    char name[128];
    path(name, sizeof name, "views");
    MPI_File fh;
    MTEST_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int mine[N * B], back[N * B + 1];
    for (int j = 0; j < N * B; j++)
        mine[j] = value(mtest_rank, j);
    MPI_Status st;

    /* collective write through the view, read back independently and collectively */
    set_vector_view(fh, vec);
    MTEST_OK(MPI_File_write_all(fh, mine, N * B, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == N * B, "write_all count %d", count_of(&st, MPI_INT));
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    MTEST_CHECK(pos == N * B, "position after write_all %lld, expected %d", (long long)pos, N * B);
    MTEST_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_File_sync(fh));
    MPI_Offset size = 0;
    MPI_File_get_size(fh, &size);
    MTEST_CHECK(size == (MPI_Offset)(N * B * mtest_size * sizeof(int)), "size %lld", (long long)size);
    check_interleaved(fh, 0, "write_all through a vector view");

    set_vector_view(fh, vec);
    memset(back, -1, sizeof back);
    MTEST_OK(MPI_File_read_at(fh, 0, back, N * B, MPI_INT, &st));
    MTEST_CHECK(!memcmp(back, mine, sizeof mine) && back[N * B] == -1, "read_at through the view differs");
    memset(back, -1, sizeof back);
    MTEST_OK(MPI_File_read_all(fh, back, N * B, MPI_INT, &st));
    MTEST_CHECK(!memcmp(back, mine, sizeof mine) && back[N * B] == -1, "read_all through the view differs");

    /* positions and byte offsets: view int k is in block k / B, at P * B ints per block */
    MPI_Offset disp = -1;
    MPI_File_get_byte_offset(fh, 0, &disp);
    MTEST_CHECK(disp == (MPI_Offset)(mtest_rank * B * sizeof(int)), "byte offset of 0: %lld", (long long)disp);
    MPI_File_get_byte_offset(fh, B + 1, &disp);
    MTEST_CHECK(disp == (MPI_Offset)(((mtest_size + mtest_rank) * B + 1) * sizeof(int)), "byte offset of B+1: %lld",
                (long long)disp);
    MTEST_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_File_get_position(fh, &pos);
    MTEST_CHECK(pos == N * B, "end position %lld, expected %d", (long long)pos, N * B);
    MTEST_OK(MPI_File_seek(fh, B, MPI_SEEK_SET));
    MTEST_OK(MPI_File_seek(fh, 1, MPI_SEEK_CUR));
    int one = -1;
    MTEST_OK(MPI_File_read(fh, &one, 1, MPI_INT, &st));
    MTEST_CHECK(one == value(mtest_rank, B + 1), "read at position B+1: %d", one);
    MPI_File_get_position(fh, &pos);
    MTEST_CHECK(pos == B + 2, "position %lld, expected %d", (long long)pos, B + 2);

    /* non-contiguous memory: every other int of a buffer, written at explicit offsets */
    MPI_Datatype gaps;
    MPI_Type_vector(N * B, 1, 2, MPI_INT, &gaps);
    MPI_Type_commit(&gaps);
    int wide[2 * N * B], wback[2 * N * B];
    for (int j = 0; j < 2 * N * B; j++)
        wide[j] = j % 2 ? -7 : value(mtest_rank, j / 2) + 1;
    MTEST_OK(MPI_File_write_at(fh, 0, wide, 1, gaps, &st));
    MTEST_CHECK(count_of(&st, gaps) == 1, "write_at of a vector: count %d", count_of(&st, gaps));
    int elems = -1;
    MPI_Get_elements(&st, gaps, &elems);
    MTEST_CHECK(elems == N * B, "write_at of a vector: %d elements", elems);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    check_interleaved(fh, 1, "write_at of non-contiguous memory");
    set_vector_view(fh, vec);
    for (int j = 0; j < 2 * N * B; j++)
        wback[j] = -5;
    MTEST_OK(MPI_File_read_at_all(fh, 0, wback, 1, gaps, &st));
    for (int j = 0; j < 2 * N * B; j++)
        if (wback[j] != (j % 2 ? -5 : wide[j])) {
            mtest_error(__FILE__, __LINE__, "read into non-contiguous memory: int %d is %d", j, wback[j]);
            break;
        }

    /* non-blocking and split collective forms */
    MPI_Request req;
    for (int j = 0; j < N * B; j++)
        mine[j] = value(mtest_rank, j) + 2;
    MTEST_OK(MPI_File_iwrite_at(fh, 0, mine, N * B, MPI_INT, &req));
    MTEST_OK(MPI_Wait(&req, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == N * B, "iwrite_at count %d", count_of(&st, MPI_INT));
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    check_interleaved(fh, 2, "iwrite_at");
    set_vector_view(fh, vec);
    memset(back, -1, sizeof back);
    MTEST_OK(MPI_File_iread_all(fh, back, N * B, MPI_INT, &req));
    MTEST_OK(MPI_Wait(&req, &st));
    MTEST_CHECK(!memcmp(back, mine, sizeof mine) && count_of(&st, MPI_INT) == N * B, "iread_all differs");
    for (int j = 0; j < N * B; j++)
        mine[j] = value(mtest_rank, j) + 3;
    MTEST_OK(MPI_File_write_at_all_begin(fh, 0, mine, N * B, MPI_INT));
    MTEST_OK(MPI_File_write_at_all_end(fh, mine, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == N * B, "write_at_all_end count %d", count_of(&st, MPI_INT));
    MTEST_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, -1, sizeof back);
    MTEST_OK(MPI_File_read_all_begin(fh, back, N * B, MPI_INT));
    MTEST_OK(MPI_File_read_all_end(fh, back, &st));
    MTEST_CHECK(!memcmp(back, mine, sizeof mine) && count_of(&st, MPI_INT) == N * B, "read_all_begin/end differs");

    /* a read across the end of the file moves what is there: the next tile is past it */
    MTEST_OK(MPI_File_read_at(fh, N * B - 1, back, 4, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == 1, "read across the end of the file: count %d", count_of(&st, MPI_INT));

    /* get_view hands back the view */
    MPI_Offset vd;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MTEST_OK(MPI_File_get_view(fh, &vd, &et, &ft, rep));
    MPI_Aint lb, ext, vext;
    MPI_Type_get_extent(ft, &lb, &ext);
    MPI_Type_get_extent(vec, &lb, &vext);
    MTEST_CHECK(vd == (MPI_Offset)(mtest_rank * B * sizeof(int)) && et == MPI_INT && ext == vext &&
                    !strcmp(rep, "native"),
                "get_view: disp %lld, extent %ld, datarep %s", (long long)vd, (long)ext, rep);
    MPI_Type_free(&ft);
    MPI_Type_free(&gaps);
    MTEST_OK(MPI_File_close(&fh));
    MTEST_CHECK(fh == MPI_FILE_NULL, "close did not reset the handle");
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0)
        MTEST_OK(MPI_File_delete(name, MPI_INFO_NULL));
}

/* Shared file pointer: write_ordered puts the ranks' data in rank order; write_shared
 * gives each rank a whole, separate block. */
static void shared(void)
{
    char name[128];
    path(name, sizeof name, "shared");
    MPI_File fh;
    int P = mtest_size, r = mtest_rank;
    MTEST_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    MTEST_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int mine[16], back[16];
    for (int j = 0; j <= r; j++)
        mine[j] = value(r, j);
    MPI_Status st;
    MTEST_OK(MPI_File_write_ordered(fh, mine, r + 1, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == r + 1, "write_ordered count %d", count_of(&st, MPI_INT));
    MPI_Offset pos = -1;
    MTEST_OK(MPI_File_get_position_shared(fh, &pos));
    MTEST_CHECK(pos == P * (P + 1) / 2, "shared position %lld after write_ordered, expected %d", (long long)pos,
                P * (P + 1) / 2);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    int n = P * (P + 1) / 2, *all = read_whole(fh, n);
    for (int q = 0, i = 0; q < P; q++)
        for (int j = 0; j <= q; j++, i++)
            MTEST_CHECK(all[i] == value(q, j), "write_ordered: int %d is %d, expected %d", i, all[i], value(q, j));
    free(all);

    MTEST_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(back, -1, sizeof back);
    MTEST_OK(MPI_File_read_ordered(fh, back, r + 1, MPI_INT, &st));
    MTEST_CHECK(!memcmp(back, mine, (size_t)(r + 1) * sizeof(int)), "read_ordered differs");
    MTEST_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(back, -1, sizeof back);
    MTEST_OK(MPI_File_read_ordered_begin(fh, back, r + 1, MPI_INT));
    MTEST_OK(MPI_File_read_ordered_end(fh, back, &st));
    MTEST_CHECK(!memcmp(back, mine, (size_t)(r + 1) * sizeof(int)), "read_ordered_begin/end differs");

    /* write_shared: K ints of the rank's value each, blocks in some order, none torn */
    enum { K = 4 };
    MTEST_OK(MPI_File_set_size(fh, 0));
    MTEST_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (int j = 0; j < K; j++)
        mine[j] = r;
    MPI_Request req;
    if (r % 2)
        MTEST_OK(MPI_File_write_shared(fh, mine, K, MPI_INT, &st));
    else {
        MTEST_OK(MPI_File_iwrite_shared(fh, mine, K, MPI_INT, &req));
        MTEST_OK(MPI_Wait(&req, &st));
    }
    MTEST_CHECK(count_of(&st, MPI_INT) == K, "write_shared count %d", count_of(&st, MPI_INT));
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_File_get_position_shared(fh, &pos));
    MTEST_CHECK(pos == (MPI_Offset)K * P, "shared position %lld after write_shared, expected %d", (long long)pos,
                K * P);
    all = read_whole(fh, K * P);
    int seen = 0;
    for (int b = 0; b < P; b++) {
        for (int j = 1; j < K; j++)
            MTEST_CHECK(all[b * K + j] == all[b * K], "write_shared block %d is torn", b);
        if (all[b * K] >= 0 && all[b * K] < P)
            seen |= 1 << all[b * K];
    }
    MTEST_CHECK(seen == (1 << P) - 1, "write_shared: blocks of ranks 0x%x, expected 0x%x", seen, (1 << P) - 1);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MTEST_OK(MPI_File_read_shared(fh, back, K, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == K && back[0] == back[K - 1], "read_shared got a torn block");
    MTEST_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_CHECK(access(name, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left %s behind", name);
}

/* Sizes, amode, group, info, atomicity, APPEND. */
static void attributes(void)
{
    char name[128];
    path(name, sizeof name, "attrs");
    MPI_File fh;
    int amode = MPI_MODE_CREATE | MPI_MODE_WRONLY;
    MTEST_OK(MPI_File_open(MPI_COMM_WORLD, name, amode, MPI_INFO_NULL, &fh));
    MPI_Offset size = -1;
    MTEST_OK(MPI_File_preallocate(fh, 100));
    MTEST_OK(MPI_File_preallocate(fh, 10));
    MPI_File_get_size(fh, &size);
    MTEST_CHECK(size == 100, "size %lld after preallocate(100), preallocate(10)", (long long)size);
    MTEST_OK(MPI_File_set_size(fh, 40));
    MPI_File_get_size(fh, &size);
    MTEST_CHECK(size == 40, "size %lld after set_size(40)", (long long)size);
    int got = 0, flag = -1;
    MPI_File_get_amode(fh, &got);
    MTEST_CHECK(got == amode, "amode 0x%x, expected 0x%x", got, amode);
    MPI_Group g, wg;
    MPI_File_get_group(fh, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &got);
    MTEST_CHECK(got == MPI_IDENT, "the file's group is not MPI_COMM_WORLD's");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "access_style", "write_once");
    MTEST_OK(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    MTEST_OK(MPI_File_get_info(fh, &info));
    char v[64];
    MPI_Info_get(info, "access_style", sizeof v - 1, v, &flag);
    MTEST_CHECK(flag && !strcmp(v, "write_once"), "hint access_style not kept");
    MPI_Info_free(&info);
    MPI_File_get_atomicity(fh, &flag);
    MTEST_CHECK(!flag, "atomic mode is on by default");
    MTEST_OK(MPI_File_set_atomicity(fh, 1));
    MPI_File_get_atomicity(fh, &flag);
    MTEST_CHECK(flag, "atomic mode not set");
    int x = mtest_rank;
    MTEST_OK(MPI_File_write_at(fh, mtest_rank, &x, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_File_close(&fh));

    MTEST_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    MTEST_CHECK(pos == 40, "MPI_MODE_APPEND: position %lld, expected 40", (long long)pos);
    MPI_File_get_position_shared(fh, &pos);
    MTEST_CHECK(pos == 40, "MPI_MODE_APPEND: shared position %lld, expected 40", (long long)pos);
    MTEST_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0)
        MTEST_OK(MPI_File_delete(name, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    make_dir();
    /* the rank's N blocks, resized to tile the file at N blocks of every rank */
    MPI_Datatype v, vec;
    MPI_Type_vector(N, B, B * mtest_size, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(N * B * mtest_size * sizeof(int)), &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&v);
    views(vec);
    MPI_Type_free(&vec);
    shared();
    attributes();
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0)
        MTEST_CHECK(rmdir(dir) == 0, "%s is not empty at the end (a file or a shared-pointer file left)", dir);
    return mtest_finalize();
}
