/* Many rendezvous written by the sender at once, each longer than a provider's largest
 * RDMA op (tcp;ofi_rxm's max_rma is 512 KiB: the write goes out in chunks, one after the
 * other, and frames sent after it wait for its last chunk), with new RTSs, CTSs and FINs
 * interleaved: rank 0 sends 64 messages to rank 1, up to 32 at once, the next as one
 * completes, so its RTS leaves while earlier writes are in flight and their CTSs arrive;
 * rounds of 64 KiB and 1 MiB alternate, as one-sided put_bw runs them. Each round is sent
 * from contiguous memory (written by the sender under RMPI_RNDV_MODE=write) and as a
 * two-block datatype (a small header block in one buffer and the body in another, as the
 * one-sided layer sends large puts), which the sender always writes; args "typed": the
 * latter only. Every message is checked. Over libfabric a frame queued behind such a write
 * once waited for a later write queued behind the frame itself: the job hung (3 runs in 3
 * under RMPI_RNDV_MODE=write). */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMSG 64
#define HDR 48
#define SWIN 32

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int me = mtest_rank;
    if (mtest_size != 2) {
        MTEST_CHECK(0, "run with 2 ranks");
        return mtest_finalize();
    }
    static const size_t sizes[] = {65536, 1 << 20, 65536, 1 << 20, 65536, 1 << 20};
    const size_t max = 1 << 20;
    unsigned char *hdr = mtest_malloc((size_t)NMSG * HDR);
    unsigned char *body = mtest_malloc(max); /* one body for every send, as put_bw does */
    unsigned char *rb = mtest_malloc((size_t)NMSG * (HDR + max));
    MPI_Request rq[NMSG];
    const int only_typed = argc > 1 && !strcmp(argv[1], "typed");
    for (int typed = only_typed; typed < 2; typed++)
        for (int round = 0; round < (int)(sizeof sizes / sizeof *sizes); round++) {
            const size_t sz = sizes[round];
            const size_t len = HDR + sz;
            MPI_Datatype dt[NMSG];
            for (int j = 0; j < NMSG; j++) {
                unsigned seed = mtest_seed(typed, round, j);
                if (me == 0 && j >= SWIN) {
                    /* the next send as one completes: its RTS goes out while the CTSs
                     * of earlier ones start their writes */
                    int done;
                    MTEST_OK(MPI_Waitany(j, rq, &done, MPI_STATUS_IGNORE));
                }
                if (me == 0 && typed) {
                    int bl[2] = {HDR, (int)sz};
                    MPI_Aint at[2];
                    mtest_fill(hdr + (size_t)j * HDR, HDR, seed);
                    MPI_Get_address(hdr + (size_t)j * HDR, &at[0]);
                    MPI_Get_address(body, &at[1]);
                    MTEST_OK(MPI_Type_create_hindexed(2, bl, at, MPI_BYTE, &dt[j]));
                    MTEST_OK(MPI_Type_commit(&dt[j]));
                    if (j == 0)
                        mtest_fill(body, sz, mtest_seed(typed, round, 999));
                    MTEST_OK(MPI_Isend(MPI_BOTTOM, 1, dt[j], 1, j, MPI_COMM_WORLD, &rq[j]));
                } else if (me == 0) {
                    unsigned char *m = rb + (size_t)j * len; /* the sender's copies */
                    mtest_fill(m, HDR, seed);
                    mtest_fill(m + HDR, sz, mtest_seed(typed, round, 999));
                    MTEST_OK(MPI_Isend(m, (int)len, MPI_BYTE, 1, j, MPI_COMM_WORLD, &rq[j]));
                } else {
                    MTEST_OK(MPI_Irecv(rb + (size_t)j * len, (int)len, MPI_BYTE, 0, j, MPI_COMM_WORLD, &rq[j]));
                }
            }
            MTEST_OK(MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE));
            if (me == 0 && typed)
                for (int j = 0; j < NMSG; j++)
                    MTEST_OK(MPI_Type_free(&dt[j]));
            if (me == 1)
                for (int j = 0; j < NMSG; j++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s round %d (%zu bytes) message %d header",
                             typed ? "typed" : "contiguous", round, sz, j);
                    mtest_check_buf(rb + (size_t)j * len, HDR, mtest_seed(typed, round, j), what);
                    snprintf(what, sizeof what, "%s round %d (%zu bytes) message %d body",
                             typed ? "typed" : "contiguous", round, sz, j);
                    mtest_check_buf(rb + (size_t)j * len + HDR, sz, mtest_seed(typed, round, 999), what);
                }
            MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    free(hdr);
    free(body);
    free(rb);
    return mtest_finalize();
}
