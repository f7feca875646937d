/* MPI_Comm_spawn of this program (argv checked, errcodes), traffic and a collective across
 * the parent/child intercommunicator, merge, disconnect; then Comm_spawn_multiple with two
 * commands (MPI_APPNUM of each child). The children are new processes of another world:
 * they reach their parents over tcp whatever RMPI_NET says.
 * Failing mode (tests/CMakeLists.txt): "dying" spawns children one of which is killed: the
 * whole job must end with a message naming it. Run without mpiexec (a singleton), the
 * spawn fails with MPI_ERR_SPAWN and a message. */
#include "mtest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCHILD 2

static void across(MPI_Comm inter, int parent_side)
{
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    /* every process sends to remote rank 0 and remote rank 0 receives from all */
    enum { N = 100000 };
    static unsigned char sbuf[N], buf[N];
    mtest_fill(sbuf, N, mtest_seed(parent_side, rank, 7));
    MPI_Request rq;
    MTEST_OK(MPI_Isend(sbuf, N, MPI_BYTE, 0, 5, inter, &rq));
    if (rank == 0)
        for (int r = 0; r < rsize; r++) {
            MPI_Status st;
            MTEST_OK(MPI_Recv(buf, N, MPI_BYTE, MPI_ANY_SOURCE, 5, inter, &st));
            mtest_check_buf(buf, N, mtest_seed(!parent_side, st.MPI_SOURCE, 7), "message across spawn");
        }
    MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int one = 1, sum = 0;
    MTEST_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
    MTEST_CHECK(sum == rsize, "allreduce across gave %d, expected %d", sum, rsize);
    MPI_Comm merged;
    MTEST_OK(MPI_Intercomm_merge(inter, !parent_side, &merged));
    int msize, lsize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_rank(merged, &mrank);
    MTEST_CHECK(msize == lsize + rsize, "merged size %d", msize);
    MTEST_CHECK(mrank == (parent_side ? 0 : rsize) + rank, "merged rank %d", mrank);
    int v = mrank == 0 ? 99 : -1;
    MTEST_OK(MPI_Bcast(&v, 1, MPI_INT, 0, merged));
    MTEST_CHECK(v == 99, "bcast on the merged communicator gave %d", v);
    /* parents and children share this host: one shared-memory communicator of everyone */
    MPI_Comm node;
    int nsize = 0;
    MTEST_OK(MPI_Comm_split_type(merged, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &nsize);
    MTEST_CHECK(nsize == msize, "split_type shared of parents and children: %d of %d", nsize, msize);
    MTEST_OK(MPI_Comm_free(&node));
    MTEST_OK(MPI_Comm_free(&merged));
}

static int child(int argc, char **argv, MPI_Comm parent)
{
    MTEST_CHECK(parent != MPI_COMM_NULL, "a spawned process has no parent");
    int appnum = -1, flag = 0, *p;
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag));
    if (flag)
        appnum = *p;
    MTEST_CHECK(flag, "MPI_APPNUM is not set in a spawned process");
    if (!strcmp(argv[1], "die")) {
        int v;
        if (mtest_rank == 1)
            raise(SIGKILL);
        MPI_Recv(&v, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE); /* never sent */
    }
    if (!strcmp(argv[1], "child")) {
        MTEST_CHECK(argc == 4 && !strcmp(argv[2], "two words") && !strcmp(argv[3], "x=y"), "child argv wrong (argc %d)",
                    argc);
        MTEST_CHECK(mtest_size == NCHILD, "child world has %d processes, expected %d", mtest_size, NCHILD);
        across(parent, 0);
    } else { /* spawn_multiple: argv[2] is the command's number */
        MTEST_CHECK(appnum == atoi(argv[2]), "MPI_APPNUM %d, expected %s", appnum, argv[2]);
        MTEST_CHECK(mtest_size == 3, "spawn_multiple world has %d processes", mtest_size);
        int all[3] = {0, 0, 0};
        MTEST_OK(MPI_Allgather(&appnum, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
        MTEST_CHECK(all[0] == 0 && all[1] == 1 && all[2] == 1, "appnums %d %d %d", all[0], all[1], all[2]);
        int s = appnum;
        MTEST_OK(MPI_Send(&s, 1, MPI_INT, 0, 9, parent));
    }
    MTEST_OK(MPI_Comm_disconnect(&parent));
    MPI_Comm again;
    MPI_Comm_get_parent(&again);
    MTEST_CHECK(again == MPI_COMM_NULL, "Comm_get_parent after disconnect");
    /* the children's own summary line is printed only by a failing child */
    int errs = mtest_error_count();
    MPI_Finalize();
    return errs ? 1 : 0;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent;
    MTEST_OK(MPI_Comm_get_parent(&parent));
    if (argc > 1 && parent != MPI_COMM_NULL)
        return child(argc, argv, parent);
    if (argc > 1 && !strcmp(argv[1], "dying")) {
        MPI_Comm inter;
        char *dargv[] = {"die", NULL};
        int v;
        MTEST_OK(MPI_Comm_spawn(argv[0], dargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        MPI_Recv(&v, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE); /* never sent */
        return 1;
    }
    MTEST_CHECK(parent == MPI_COMM_NULL, "the first world has a parent");

    MPI_Comm inter;
    int errcodes[NCHILD] = {-1, -1};
    char *cargv[] = {"child", "two words", "x=y", NULL};
    MTEST_OK(MPI_Comm_spawn(argv[0], cargv, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes));
    for (int i = 0; i < NCHILD; i++)
        MTEST_CHECK(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, errcodes[i]);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    MTEST_CHECK(rsize == NCHILD, "remote size %d", rsize);
    across(inter, 1);
    MTEST_OK(MPI_Comm_disconnect(&inter));

    /* two commands: one process with appnum 0, two with appnum 1 */
    char *cmds[2] = {argv[0], argv[0]};
    char *a0[] = {"multi", "0", NULL}, *a1[] = {"multi", "1", NULL};
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 2}, ec[3];
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MTEST_OK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, mtest_size - 1, MPI_COMM_WORLD, &inter, ec));
    MPI_Comm_remote_size(inter, &rsize);
    MTEST_CHECK(rsize == 3, "spawn_multiple remote size %d", rsize);
    if (mtest_rank == 0) {
        int got[2] = {0, 0};
        for (int i = 0; i < 3; i++) {
            int v;
            MTEST_OK(MPI_Recv(&v, 1, MPI_INT, i, 9, inter, MPI_STATUS_IGNORE));
            MTEST_CHECK(v == (i == 0 ? 0 : 1), "child %d reports appnum %d", i, v);
            got[v & 1]++;
        }
    }
    MTEST_OK(MPI_Comm_disconnect(&inter));

    /* bad arguments fail cleanly */
    mtest_errors_return(MPI_COMM_WORLD);
    MTEST_ERR(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, mtest_size, MPI_COMM_WORLD, &inter,
                             MPI_ERRCODES_IGNORE),
              MPI_ERR_ROOT);
    return mtest_finalize();
}
