/* Channel selection in a job: ranks 1, 2 and 3 send rank 0 six, three and one message a
 * round (plus what the round's barrier brings), received in any order, each checked for
 * its source's sequence number and contents. The testlist's match= checks rank 0's
 * RMPI_REPORT: with RMPI_CHAN_MAX_DEDICATED=2 its two busiest senders are the ones
 * selected, and over tcp nothing is selected. Rank 0 also reads the MPI_T counter
 * rmpi_chan_to_dedicated over the run: the argument "selected" wants 2 or more decisions,
 * "one" 1 or more, "none" 0. Needs 4 ranks or more (the others only join the barriers). */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

#define ROUNDS 1500
#define LEN 24

static const int per_round[4] = {0, 6, 3, 1};

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MTEST_CHECK(mtest_size >= 4, "needs 4 ranks, has %d", mtest_size);
    const char *want = argc > 1 ? argv[1] : "";
    int least = !strcmp(want, "selected") ? 2 : !strcmp(want, "one") ? 1 : 0;
    MTEST_CHECK(least || !strcmp(want, "none"), "argument '%s': selected, one or none", want);
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle h;
    mtest_pvar_open("rmpi_chan_to_dedicated", &ses, &h);
    MTEST_OK(MPI_T_pvar_start(ses, h));
    int seq[4] = {0, 0, 0, 0};
    unsigned char buf[LEN];
    for (int round = 0; round < ROUNDS && mtest_size >= 4; round++) {
        if (mtest_rank == 0) {
            for (int k = 0; k < per_round[1] + per_round[2] + per_round[3]; k++) {
                MPI_Status st;
                MTEST_OK(MPI_Recv(buf, LEN, MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
                int src = st.MPI_SOURCE;
                MTEST_CHECK(src >= 1 && src <= 3, "a message from rank %d", src);
                if (src < 1 || src > 3)
                    break;
                char what[64];
                snprintf(what, sizeof what, "message %d from rank %d", seq[src], src);
                mtest_check_buf(buf, LEN, mtest_seed(src, 0, seq[src]), what);
                seq[src]++;
            }
        } else if (mtest_rank <= 3) {
            for (int k = 0; k < per_round[mtest_rank]; k++) {
                mtest_fill(buf, LEN, mtest_seed(mtest_rank, 0, seq[mtest_rank]++));
                MTEST_OK(MPI_Send(buf, LEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD));
            }
        }
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    unsigned long long decisions = 0;
    MTEST_OK(MPI_T_pvar_read(ses, h, &decisions));
    if (mtest_rank == 0)
        MTEST_CHECK(least ? decisions >= (unsigned long long)least : decisions == 0,
                    "%llu channel decisions to dedicated (MPI_T rmpi_chan_to_dedicated), want %s", decisions,
                    least == 2 ? "2 or more"
                    : least    ? "1 or more"
                               : "none");
    mtest_pvar_close(&ses, &h);
    if (mtest_rank == 0)
        for (int src = 1; src <= 3; src++)
            MTEST_CHECK(seq[src] == ROUNDS * per_round[src], "%d messages from rank %d, want %d", seq[src], src,
                        ROUNDS * per_round[src]);
    return mtest_finalize();
}
