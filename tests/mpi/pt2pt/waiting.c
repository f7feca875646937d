/* Messages that arrive before their receive wait where they landed (net.h
 * rmpi_net_rx_enough): rank 1 sends NMSG eager messages with MPI_Send while rank 0 sleeps,
 * then rank 0 takes them one MPI_Recv at a time. Over shared memory (argument "ring") a
 * progress pass ends at the next frame once a receive took one, so the frames stay in the
 * ring or queue until their receive is posted and are copied once, straight into it: at
 * most an eighth of them may go through the unexpected queue (MPI_T rmpi_unexpected).
 * Before, every pass read up to 32 frames of the ring and all but one became unexpected
 * messages. With "any" (tcp, which reads what the socket holds) only the data and the
 * order are checked. */
#include "mtest.h"

#include <stdio.h>
#include <string.h>
#include <time.h> /* nanosleep */

#define NMSG 2000
#define LEN 4096

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MTEST_CHECK(mtest_size == 2, "needs 2 ranks, has %d", mtest_size);
    const char *mode = argc > 1 ? argv[1] : "";
    int ring = !strcmp(mode, "ring");
    MTEST_CHECK(ring || !strcmp(mode, "any"), "argument '%s': ring or any", mode);
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle h;
    mtest_pvar_open("rmpi_unexpected", &ses, &h);
    static unsigned char buf[LEN];
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_OK(MPI_T_pvar_start(ses, h));
    if (mtest_rank == 0) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        for (int i = 0; i < NMSG; i++) {
            MPI_Status st;
            memset(buf, 0, sizeof buf);
            MTEST_OK(MPI_Recv(buf, LEN, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &st));
            char what[48];
            snprintf(what, sizeof what, "message %d", i);
            if (mtest_check_buf(buf, LEN, mtest_seed(1, 0, i), what))
                break;
        }
    } else if (mtest_rank == 1) {
        for (int i = 0; i < NMSG; i++) {
            mtest_fill(buf, LEN, mtest_seed(1, 0, i));
            MTEST_OK(MPI_Send(buf, LEN, MPI_BYTE, 0, 7, MPI_COMM_WORLD));
        }
    }
    unsigned long long unexp = 0;
    MTEST_OK(MPI_T_pvar_read(ses, h, &unexp));
    if (mtest_rank == 0) {
        printf("rank 0: %llu of %d messages went through the unexpected queue\n", unexp, NMSG);
        if (ring)
            MTEST_CHECK(unexp <= NMSG / 8,
                        "%llu of %d messages were copied through the unexpected queue, want at most %d", unexp, NMSG,
                        NMSG / 8);
    }
    mtest_pvar_close(&ses, &h);
    return mtest_finalize();
}
