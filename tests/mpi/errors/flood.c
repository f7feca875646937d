/* Rank 0 sends eagerly to rank 1, which does not call MPI for a while: frames pile up in
 * the provider's send pool. Under a small RMPI_OFI_TX_MAX the job must end with a message
 * naming the bound (tests/CMakeLists.txt), not grow without limit. Without a bound it
 * completes and checks the data. */
#include "mtest.h"

#include <string.h>
#include <unistd.h>

#define N 3000
#define LEN 16000 /* eager on every provider (ofi over rxm: up to about 16 KiB) */

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    static unsigned char buf[LEN];
    if (mtest_rank == 0) {
        for (int i = 0; i < N; i++) {
            memset(buf, i & 0xff, LEN);
            MPI_Send(buf, LEN, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        }
    } else if (mtest_rank == 1) {
        sleep(3);
        for (int i = 0; i < N; i++) {
            MPI_Recv(buf, LEN, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MTEST_CHECK(buf[0] == (i & 0xff) && buf[LEN - 1] == (i & 0xff), "message %d carries %d", i, buf[0]);
        }
    }
    return mtest_finalize();
}
