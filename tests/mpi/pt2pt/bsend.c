/* Buffered mode: with a buffer attached, Bsend/Ibsend of small and rendezvous-size
 * messages return before the receiver has posted anything; the user's send buffer can be
 * reused at once; Buffer_detach blocks until the buffered data has gone, after which the
 * attached memory can be scribbled on without harming delivery. Errors (MPI_ERRORS_RETURN):
 * a message larger than the attached buffer, or no buffer at all -> MPI_ERR_BUFFER. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {0, 100, 16384, 100000, 300000};
#define NS 5
#define TOTAL (0 + 100 + 16384 + 100000 + 300000)

static void sender(int peer)
{
    int need = TOTAL + NS * MPI_BSEND_OVERHEAD + 64 * NS;
    char *space = mtest_malloc((size_t)need);
    unsigned char *msg = mtest_malloc(300000);
    MTEST_OK(MPI_Buffer_attach(space, need));
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < NS; k++) {
            mtest_fill(msg, (size_t)sizes[k], mtest_seed(mtest_rank, peer, round * 10 + k));
            if (k % 2 && round == 1) { /* persistent: Bsend_init, started once */
                MPI_Request rq;
                MTEST_OK(MPI_Bsend_init(msg, sizes[k], MPI_BYTE, peer, round * 10 + k, MPI_COMM_WORLD, &rq));
                MTEST_OK(MPI_Start(&rq));
                MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                MTEST_OK(MPI_Request_free(&rq));
            } else if (k % 2) {
                MPI_Request rq;
                MTEST_OK(MPI_Ibsend(msg, sizes[k], MPI_BYTE, peer, round * 10 + k, MPI_COMM_WORLD, &rq));
                MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else {
                MTEST_OK(MPI_Bsend(msg, sizes[k], MPI_BYTE, peer, round * 10 + k, MPI_COMM_WORLD));
            }
            /* the library has its own copy: reusing the buffer must not change the message */
            memset(msg, 0xee, (size_t)sizes[k]);
        }
        /* only now may the receiver start: a Bsend that waited for it would hang here */
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 100 + round, MPI_COMM_WORLD));
        if (round == 2) {
            void *p = NULL;
            int sz = 0;
            MTEST_OK(MPI_Buffer_detach(&p, &sz));
            MTEST_CHECK(p == space && sz == need, "Buffer_detach returned %p/%d, attached %p/%d", p, sz, (void *)space,
                        need);
            /* detach returned: everything buffered has been delivered or copied away */
            memset(space, 0x11, (size_t)need);
        } else {
            /* wait for the receiver so the next round reuses the space */
            MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 200 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    free(space);
    free(msg);
}

static void receiver(int peer)
{
    unsigned char *buf = mtest_malloc(300000);
    for (int round = 0; round < 3; round++) {
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 100 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (round == 2)
            mtest_sleep(0.05);
        for (int k = NS - 1; k >= 0; k--) {
            MPI_Status st;
            MTEST_OK(MPI_Recv(buf, 300000, MPI_BYTE, peer, round * 10 + k, MPI_COMM_WORLD, &st));
            int cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            char what[64];
            snprintf(what, sizeof what, "buffered %d-byte message, round %d", sizes[k], round);
            MTEST_CHECK(cnt == sizes[k], "%s: count %d", what, cnt);
            mtest_check_buf(buf, (size_t)sizes[k], mtest_seed(peer, mtest_rank, round * 10 + k), what);
        }
        if (round < 2)
            MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 200 + round, MPI_COMM_WORLD));
    }
    MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 300, MPI_COMM_WORLD));
    free(buf);
}

static void errors(void)
{
    char small[1000];
    char data[2000] = {0};
    int rc;
    int peer = (mtest_rank ^ 1) < mtest_size ? (mtest_rank ^ 1) : mtest_rank;
    /* no buffer attached */
    MTEST_ERR(MPI_Bsend(data, 10, MPI_BYTE, peer, 7, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MTEST_OK(MPI_Buffer_attach(small, sizeof small));
    /* larger than the whole buffer */
    MTEST_ERR(MPI_Bsend(data, 2000, MPI_BYTE, peer, 7, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Request rq = MPI_REQUEST_NULL;
    rc = MTEST_ERR(MPI_Ibsend(data, 2000, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq), MPI_ERR_BUFFER);
    (void)rc;
    /* attaching a second buffer is an error */
    char other[100];
    rc = MPI_Buffer_attach(other, sizeof other);
    MTEST_CHECK(rc != MPI_SUCCESS, "a second Buffer_attach succeeded");
    void *p;
    int sz;
    MTEST_OK(MPI_Buffer_detach(&p, &sz));
    MTEST_CHECK(p == small && sz == (int)sizeof small, "Buffer_detach returned %p/%d", p, sz);
    /* nothing was sent by the failed calls */
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    int flag = 1;
    MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    MTEST_CHECK(!flag, "a failed Bsend delivered a message");
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int peer = mtest_rank ^ 1;
    if (peer < mtest_size) {
        if (mtest_rank & 1)
            receiver(peer);
        else
            sender(peer);
    }
    mtest_errors_return(MPI_COMM_WORLD);
    errors();
    return mtest_finalize();
}
