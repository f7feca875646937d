/* A Bcast whose counts differ between the ranks (an erroneous call) on 2 ranks: every pair
 * of sizes across the Bcast's paths (line frames, cells, the deep ring, the message,
 * single copy, the step buffers), both roots, under MPI_ERRORS_RETURN. The reader of fewer
 * bytes than the root sends must get MPI_ERR_TRUNCATE (as a receive would; MPICH and Open
 * MPI report it too), a reader of more gets the root's bytes, the root succeeds, and no
 * pair may hang (the watchdog ends a stuck run); after each pair a correct Bcast must
 * still deliver every byte. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static const int sizes[] = {8, 40, 300, 4000, 16000, 20000, 40000, 65536, 200000, 1 << 20};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank;
    if (mtest_size != 2) {
        MTEST_CHECK(0, "bcastbad runs on 2 ranks, not %d", mtest_size);
        return mtest_finalize();
    }
    mtest_errors_return(MPI_COMM_WORLD);
    size_t maxb = (size_t)sizes[NSIZES - 1];
    unsigned char *b = mtest_malloc(maxb);
    unsigned seed = 1;
    for (int root = 0; root < 2; root++)
        for (int i = 0; i < NSIZES; i++)
            for (int j = 0; j < NSIZES; j++, seed++) {
                if (i == j)
                    continue;
                int rs = sizes[i], ws = sizes[j], mine = me == root ? rs : ws;
                if (me == root)
                    mtest_fill(b, (size_t)rs, seed);
                else
                    memset(b, 0, maxb);
                int rc = MPI_Bcast(b, mine, MPI_BYTE, root, MPI_COMM_WORLD), cls = MPI_SUCCESS;
                if (rc)
                    MPI_Error_class(rc, &cls);
                if (me == root)
                    MTEST_CHECK(rc == MPI_SUCCESS, "root %d sends %d, reader takes %d: root got class %d", root, rs, ws,
                                cls);
                else if (rs > ws)
                    MTEST_CHECK(cls == MPI_ERR_TRUNCATE, "root %d sends %d, reader takes %d: reader got class %d", root,
                                rs, ws, cls);
                else {
                    MTEST_CHECK(rc == MPI_SUCCESS, "root %d sends %d, reader takes %d: reader got class %d", root, rs,
                                ws, cls);
                    if (mtest_check_buf(b, (size_t)rs, seed, "Bcast of fewer bytes"))
                        MTEST_CHECK(0, "root %d sends %d, reader takes %d: data wrong", root, rs, ws);
                }
                /* a correct Bcast after it */
                int n = sizes[(i + j) % NSIZES];
                if (me == root)
                    mtest_fill(b, (size_t)n, seed + 7777);
                else
                    memset(b, 0, (size_t)n);
                MTEST_OK(MPI_Bcast(b, n, MPI_BYTE, root, MPI_COMM_WORLD));
                if (mtest_check_buf(b, (size_t)n, seed + 7777, "Bcast after"))
                    MTEST_CHECK(0, "the correct Bcast of %d after the pair %d / %d: data wrong", n, rs, ws);
            }
    free(b);
    return mtest_finalize();
}
