/* MPI_Comm_join over a TCP connection between pairs of ranks (2k, 2k+1): the result is an
 * intercommunicator of one process on each side that carries messages both ways. */
#include "mtest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, peer = me ^ 1;
    if (peer < mtest_size) {
        int fd = -1, port = 0;
        if (!(me & 1)) {
            int ls = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
            socklen_t al = sizeof a;
            MTEST_CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0 &&
                            getsockname(ls, (struct sockaddr *)&a, &al) == 0,
                        "cannot listen on loopback");
            port = ntohs(a.sin_port);
            /* synchronous: the port must have arrived before this rank blocks in accept() */
            MTEST_OK(MPI_Ssend(&port, 1, MPI_INT, peer, 0, MPI_COMM_WORLD));
            fd = accept(ls, NULL, NULL);
            close(ls);
        } else {
            MTEST_OK(MPI_Recv(&port, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET,
                                    .sin_port = htons((uint16_t)port),
                                    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
            MTEST_CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "cannot connect to the peer");
        }
        MPI_Comm inter;
        MTEST_OK(MPI_Comm_join(fd, &inter));
        close(fd);
        int flag, rsize, rank;
        MPI_Comm_test_inter(inter, &flag);
        MPI_Comm_remote_size(inter, &rsize);
        MPI_Comm_rank(inter, &rank);
        MTEST_CHECK(flag && rsize == 1 && rank == 0, "join gave inter %d, remote size %d, rank %d", flag, rsize, rank);
        enum { N = 70000 };
        static unsigned char s[N], r[N];
        mtest_fill(s, N, mtest_seed(me, peer, 0));
        MTEST_OK(MPI_Sendrecv(s, N, MPI_BYTE, 0, 3, r, N, MPI_BYTE, 0, 3, inter, MPI_STATUS_IGNORE));
        mtest_check_buf(r, N, mtest_seed(peer, me, 0), "message over the joined communicator");
        MTEST_OK(MPI_Comm_disconnect(&inter));
    }
    /* a socket with nobody behind it is an error, not a hang */
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    close(sv[1]);
    mtest_errors_return(MPI_COMM_WORLD);
    MPI_Comm bad;
    MTEST_ERR(MPI_Comm_join(sv[0], &bad), MPI_ERR_ARG);
    MTEST_CHECK(bad == MPI_COMM_NULL, "a failed join returned a communicator");
    close(sv[0]);
    return mtest_finalize();
}
