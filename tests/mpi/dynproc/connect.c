/* Connect/accept between the two halves of MPI_COMM_WORLD split apart (the port name
 * travels over MPI_COMM_WORLD, then through the name service), traffic and collectives
 * across the intercommunicator, merge, disconnect; bad port names fail cleanly.
 * Modes "serve FILE" / "client FILE" (tests/CMakeLists.txt): two separate jobs, the
 * server's port name passed in a file. */
#include "mtest.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void exercise(MPI_Comm inter, int side, int round)
{
    int lsize, rsize, rank;
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &rank);
    int flag;
    MTEST_OK(MPI_Comm_test_inter(inter, &flag));
    MTEST_CHECK(flag, "the result is not an intercommunicator");
    /* every local rank exchanges with remote rank (rank % rsize) */
    enum { N = 50000 };
    static unsigned char sbuf[N], rbuf[N];
    int peer = rank % rsize;
    mtest_fill(sbuf, N, mtest_seed(side, rank, round));
    MPI_Request rq[2 * 16];
    int nrq = 0;
    MTEST_OK(MPI_Isend(sbuf, N, MPI_BYTE, peer, round, inter, &rq[nrq++]));
    /* remote ranks that chose me */
    for (int r = 0; r < rsize; r++)
        if (r % lsize == rank) {
            MTEST_OK(MPI_Recv(rbuf, N, MPI_BYTE, r, round, inter, MPI_STATUS_IGNORE));
            mtest_check_buf(rbuf, N, mtest_seed(!side, r, round), "message across the intercommunicator");
        }
    MTEST_OK(MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE));
    /* Allreduce across: each side gets the sum of the other side's ranks + 1 */
    int mine = rank + 1, sum = 0;
    MTEST_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    MTEST_CHECK(sum == rsize * (rsize + 1) / 2, "allreduce across gave %d, expected %d", sum, rsize * (rsize + 1) / 2);
    /* Bcast from side 0's rank 0 */
    int v = side == 0 && rank == 0 ? 4242 + round : -1;
    MTEST_OK(MPI_Bcast(&v, 1, MPI_INT, side == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
    if (side == 1)
        MTEST_CHECK(v == 4242 + round, "bcast across gave %d", v);
    MPI_Comm merged;
    MTEST_OK(MPI_Intercomm_merge(inter, side, &merged));
    int msize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    MTEST_CHECK(msize == lsize + rsize, "merged size %d", msize);
    MTEST_CHECK(mrank == (side ? rsize : 0) + rank, "merged rank %d (side %d rank %d)", mrank, side, rank);
    int all = 0;
    MTEST_OK(MPI_Allreduce(&mrank, &all, 1, MPI_INT, MPI_SUM, merged));
    MTEST_CHECK(all == msize * (msize - 1) / 2, "allreduce on the merged communicator gave %d", all);
    MTEST_OK(MPI_Comm_free(&merged));
}

/* Two jobs: the server's rank 0 writes its port name to path, the client's reads it. */
static int two_jobs(int serve, const char *path)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (serve) {
        if (mtest_rank == 0) {
            MTEST_OK(MPI_Open_port(MPI_INFO_NULL, port));
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", path);
            FILE *f = fopen(tmp, "w");
            MTEST_CHECK(f && fputs(port, f) >= 0 && fclose(f) == 0 && rename(tmp, path) == 0, "cannot write %s", path);
        }
        MTEST_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    } else {
        if (mtest_rank == 0) {
            FILE *f = NULL;
            for (int i = 0; i < 2000 && !(f = fopen(path, "r")); i++)
                usleep(5000);
            MTEST_CHECK(f && fgets(port, sizeof port, f), "no port name in %s", path);
            if (f)
                fclose(f);
        }
        MTEST_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    }
    exercise(inter, !serve, 0);
    MTEST_OK(MPI_Comm_disconnect(&inter));
    if (serve && mtest_rank == 0)
        MTEST_OK(MPI_Close_port(port));
    return mtest_finalize();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank, size = mtest_size;
    char port[MPI_MAX_PORT_NAME] = "";
    if (argc > 2)
        return two_jobs(!strcmp(argv[1], "serve"), argv[2]);

    /* a bad port name is an error, not a hang */
    mtest_errors_return(MPI_COMM_SELF);
    MPI_Comm bad = MPI_COMM_NULL;
    MTEST_ERR(MPI_Comm_connect("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &bad), MPI_ERR_PORT);
    MTEST_CHECK(bad == MPI_COMM_NULL, "a failed connect returned a communicator");
    MTEST_ERR(MPI_Comm_connect("rmpi-port:0123456789abcdef@127.0.0.1:1", MPI_INFO_NULL, 0, MPI_COMM_SELF, &bad),
              MPI_ERR_PORT);
    mtest_errors_return(MPI_COMM_WORLD); /* calls without a communicator report there */
    MTEST_ERR(MPI_Close_port("not-open-here"), MPI_ERR_PORT);
    MTEST_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MTEST_CHECK(strncmp(port, "rmpi-port:", 10) == 0, "port name '%s'", port);
    MTEST_OK(MPI_Close_port(port));

    if (size < 2) {
        /* a process connects to itself through Comm_join is covered by join.c */
        return mtest_finalize();
    }
    int side = rank >= size / 2;
    MPI_Comm half;
    MTEST_OK(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half));
    for (int round = 0; round < 3; round++) {
        MPI_Comm inter;
        int via_names = round == 2;
        if (side == 0) {
            if (rank == 0) {
                MTEST_OK(MPI_Open_port(MPI_INFO_NULL, port));
                if (via_names)
                    MTEST_OK(MPI_Publish_name("rmpi-dynproc-test", MPI_INFO_NULL, port));
                else
                    MTEST_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, size / 2, 0, MPI_COMM_WORLD));
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MTEST_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
            if (rank == 0) {
                if (via_names)
                    MTEST_OK(MPI_Unpublish_name("rmpi-dynproc-test", MPI_INFO_NULL, port));
                MTEST_OK(MPI_Close_port(port));
            }
        } else {
            if (rank == size / 2 && !via_names)
                MTEST_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == size / 2 && via_names)
                MTEST_OK(MPI_Lookup_name("rmpi-dynproc-test", MPI_INFO_NULL, port));
            MTEST_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
        }
        exercise(inter, side, round);
        MTEST_OK(MPI_Comm_disconnect(&inter));
        MTEST_CHECK(inter == MPI_COMM_NULL, "disconnect left the handle set");
    }
    char got[MPI_MAX_PORT_NAME];
    MTEST_ERR(MPI_Lookup_name("rmpi-dynproc-test", MPI_INFO_NULL, got), MPI_ERR_NAME);
    MPI_Comm_free(&half);
    return mtest_finalize();
}
