/*
 * Rendezvous of data in short pieces by DATA frames (src/core/core_frag.c): the sender
 * gathers or packs one fragment at a time, the receiver scatters each as it arrives,
 * under credit. Vectors of bytes whose blocks are shorter than, equal to and just around
 * the fragment size (RMPI_FRAG_SIZE, 32 KiB by default; the testlist runs 1 KiB and 4 KiB
 * too), 1-byte blocks (more pieces per fragment than a rail gathers: packed fragments),
 * messages that end anywhere in a fragment; each pair of ranks sends both ways at once:
 *  - typed sender to typed receiver of another stride, to a contiguous receiver, and a
 *    contiguous sender to a typed receiver;
 *  - receive posted first and after the RTS arrived (unexpected), and a receive shorter
 *    than the message (MPI_ERR_TRUNCATE, only what fits written);
 * checked byte for byte: every byte of the type map holds its stream byte, every gap and
 * the slack after the buffer keep the sentinel.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define SENTINEL 0xa5
#define SLACK 64

typedef struct shape {
    int block, count, stride; /* bytes; MPI_Type_vector of MPI_BYTE */
} shape_t;

static const shape_t shapes[] = {
    {1, 70001, 2},     {7, 20011, 9},     {1000, 131, 1048}, {1024, 200, 2048}, {4096, 33, 4160},   {32767, 5, 32783},
    {32768, 5, 32784}, {32769, 5, 32785}, {8191, 17, 8200},  {65536, 3, 65600}, {1023, 4099, 1030}, {16, 30000, 48},
};

static int peer;

static size_t span(const shape_t *s, int stride) { return (size_t)stride * (size_t)(s->count - 1) + (size_t)s->block; }

static unsigned char stream_byte(size_t i, int seed) { return (unsigned char)(seed * 37 + i * 13 + (i >> 9)); }

static MPI_Datatype vec(const shape_t *s, int stride)
{
    MPI_Datatype t;
    MTEST_OK(MPI_Type_vector(s->count, s->block, stride, MPI_BYTE, &t));
    MTEST_OK(MPI_Type_commit(&t));
    return t;
}

/* The layout's bytes in stream order hold stream_byte(i); gaps hold the sentinel. */
static void fill(unsigned char *b, const shape_t *s, int stride, int typed, size_t n, int seed)
{
    size_t len = typed ? span(s, stride) : n;
    memset(b, SENTINEL, len + SLACK);
    for (size_t i = 0; i < n; i++) {
        size_t at = typed ? (i / (size_t)s->block) * (size_t)stride + i % (size_t)s->block : i;
        b[at] = stream_byte(i, seed);
    }
}

/* got holds the first n stream bytes in the layout, and the sentinel elsewhere. */
static void check(const unsigned char *got, const shape_t *s, int stride, int typed, size_t n, size_t total, int seed,
                  const char *what)
{
    unsigned char *want = malloc((typed ? span(s, stride) : total) + SLACK);
    fill(want, s, stride, typed, n, seed);
    size_t len = (typed ? span(s, stride) : total) + SLACK;
    for (size_t i = 0; i < len; i++)
        if (got[i] != want[i]) {
            MTEST_CHECK(0, "%s, blocks of %d every %d x %d: byte %zu is %#x, expected %#x", what, s->block, stride,
                        s->count, i, got[i], want[i]);
            break;
        }
    free(want);
}

/* One exchange with the peer, both directions at once. mode 0: typed -> typed (another
 * stride), 1: typed -> contiguous, 2: contiguous -> typed; late: the receive is posted
 * after the peer's RTS is in; trunc: the receive takes one block less. */
static void exchange(const shape_t *s, int mode, int late, int trunc)
{
    int sstride = s->stride, rstride = s->stride + 24;
    int styped = mode != 2, rtyped = mode != 1;
    size_t total = (size_t)s->block * (size_t)s->count;
    shape_t rs = *s;
    if (trunc)
        rs.count--;
    size_t rtotal = (size_t)rs.block * (size_t)rs.count;
    unsigned char *sb = malloc((styped ? span(s, sstride) : total) + SLACK);
    unsigned char *rb = malloc((rtyped ? span(&rs, rstride) : rtotal) + SLACK);
    fill(sb, s, sstride, styped, total, mtest_rank);
    memset(rb, SENTINEL, (rtyped ? span(&rs, rstride) : rtotal) + SLACK);
    MPI_Datatype st = vec(s, sstride), rt = vec(&rs, rstride);
    MPI_Request rq[2];
    MPI_Status stat[2];
    if (!late)
        MTEST_OK(MPI_Irecv(rb, rtyped ? 1 : (int)rtotal, rtyped ? rt : MPI_BYTE, peer, 5, MPI_COMM_WORLD, &rq[1]));
    MTEST_OK(MPI_Isend(sb, styped ? 1 : (int)total, styped ? st : MPI_BYTE, peer, 5, MPI_COMM_WORLD, &rq[0]));
    if (late) {
        int flag = 0;
        while (!flag) /* the peer's RTS is in the unexpected queue */
            MTEST_OK(MPI_Iprobe(peer, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Irecv(rb, rtyped ? 1 : (int)rtotal, rtyped ? rt : MPI_BYTE, peer, 5, MPI_COMM_WORLD, &rq[1]));
    }
    int rc = MPI_Waitall(2, rq, stat);
    if (trunc)
        MTEST_CHECK(rc == MPI_ERR_IN_STATUS && stat[1].MPI_ERROR == MPI_ERR_TRUNCATE,
                    "truncated receive: Waitall %d, status %d", rc, stat[1].MPI_ERROR);
    else
        MTEST_CHECK(rc == MPI_SUCCESS, "Waitall returned %d", rc);
    int got;
    MTEST_OK(MPI_Get_count(&stat[1], MPI_BYTE, &got));
    MTEST_CHECK((size_t)got == rtotal, "received %d bytes, expected %zu", got, rtotal);
    static const char *const names[] = {"typed to typed", "typed to contiguous", "contiguous to typed"};
    check(rb, &rs, rstride, rtyped, rtotal, rtotal, peer, names[mode]);
    MTEST_OK(MPI_Type_free(&st));
    MTEST_OK(MPI_Type_free(&rt));
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    peer = mtest_rank ^ 1;
    if (peer < mtest_size) {
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
            for (int mode = 0; mode < 3; mode++) {
                exchange(&shapes[i], mode, 0, 0);
                exchange(&shapes[i], mode, 1, 0);
            }
        exchange(&shapes[0], 0, 0, 1);
        exchange(&shapes[6], 0, 1, 1);
        exchange(&shapes[2], 2, 0, 1);
    }
    return mtest_finalize();
}
