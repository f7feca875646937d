/* Iallgather and Ialltoall (and their *_init forms) against local references, run before
 * and after a blocking call made the communicator's shared segment (the calls after it
 * take the segment when eligible, the ones before the point-to-point schedules): seven
 * predefined types of 1 to 16 bytes, counts across step boundaries (with a small
 * RMPI_COLL_SHM_CHUNK), in place, a receive type with gaps freed before the wait, four
 * calls outstanding with a blocking Allgather, Alltoall and Bcast among them, completed
 * newest first; persistent calls started twice with new data. args=nbonly leaves the
 * blocking Allgather/Alltoall out (RMPI_REPORT then shows the I* calls' path). On WORLD, a split in
 * reversed rank order and a dup. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static const MPI_Datatype types[] = {MPI_CHAR, MPI_SHORT,           MPI_INT, MPI_DOUBLE, MPI_LONG_DOUBLE,
                                     MPI_2INT, MPI_C_DOUBLE_COMPLEX};
#define NTYPES (int)(sizeof types / sizeof types[0])
static const int counts[] = {0, 1, 7, 300, 1500};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* byte i of the block from src to dst (Allgather: dst -1) in round seed */
static unsigned char pat(int src, int dst, size_t i, int seed)
{
    return (unsigned char)(src * 131 + (dst + 1) * 17 + (int)(i % 251) * 7 + seed * 29 + 1);
}

typedef struct call {
    int gather, in_place, gaps; /* gaps: the receive side is every other int (MPI_INT only) */
    size_t blk;                 /* packed bytes of a block */
    unsigned char *s, *r;
    int n, me, seed;
} call_t;

static void fill(call_t *k)
{
    size_t rlen = k->blk * (size_t)k->n * (k->gaps ? 2 : 1);
    memset(k->r, 0xEE, rlen + 1);
    unsigned char *dst = k->in_place ? k->r : k->s;
    for (int d = 0; d < (k->gather ? 1 : k->n); d++) {
        /* in place, Allgather's own block sits at its place in the receive buffer */
        unsigned char *b = dst + (k->in_place ? (size_t)(k->gather ? k->me : d) : (size_t)d) * k->blk;
        for (size_t i = 0; i < k->blk; i++)
            b[i] = pat(k->me, k->gather ? -1 : d, i, k->seed);
    }
}

static int check(const call_t *k, const char *what)
{
    int bad = 0;
    for (int q = 0; q < k->n; q++)
        for (size_t i = 0; i < k->blk; i++) {
            size_t at = (size_t)q * k->blk + i;
            if (k->gaps) /* int granules: data in even ints, odd ints untouched */
                at = ((size_t)q * k->blk + i / 4 * 4) * 2 + i % 4;
            bad += k->r[at] != pat(q, k->gather ? -1 : k->me, i, k->seed);
            if (k->gaps && i % 4 == 0)
                for (int g = 0; g < 4; g++)
                    bad += k->r[at + 4 + (size_t)g] != 0xEE;
        }
    MTEST_CHECK(!bad, "%s %s blk %zu%s%s seed %d: %d bytes wrong", what, k->gather ? "Iallgather" : "Ialltoall", k->blk,
                k->in_place ? " in place" : "", k->gaps ? " gaps" : "", k->seed, bad);
    return bad;
}

/* The receive type: t, or (gaps) an int followed by a hole of one int, freed after the call. */
static MPI_Datatype recv_type(const call_t *k, MPI_Datatype t)
{
    if (!k->gaps)
        return t;
    MPI_Datatype one, vec;
    MPI_Type_vector(1, 1, 2, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, 2 * sizeof(int), &vec);
    MPI_Type_free(&one);
    MPI_Type_commit(&vec);
    return vec;
}

static void issue(call_t *k, MPI_Comm c, MPI_Datatype t, int cnt, MPI_Request *req, int persistent)
{
    MPI_Datatype rt = recv_type(k, t);
    const void *sb = k->in_place ? MPI_IN_PLACE : (const void *)k->s;
    if (persistent && k->gather)
        MTEST_OK(MPI_Allgather_init(sb, cnt, t, k->r, cnt, rt, c, MPI_INFO_NULL, req));
    else if (persistent)
        MTEST_OK(MPI_Alltoall_init(sb, cnt, t, k->r, cnt, rt, c, MPI_INFO_NULL, req));
    else if (k->gather)
        MTEST_OK(MPI_Iallgather(sb, cnt, t, k->r, cnt, rt, c, req));
    else
        MTEST_OK(MPI_Ialltoall(sb, cnt, t, k->r, cnt, rt, c, req));
    if (rt != t)
        MPI_Type_free(&rt); /* the call keeps what it needs */
}

static int
    nbonly; /* args=nbonly: no blocking Allgather/Alltoall, so RMPI_REPORT's shm notes for them are the I* calls' */

static void blocking(MPI_Comm c, int me, int n, int seed)
{
    int v[64], w[64], bad = 0;
    int b = me == n - 1 ? seed : -1;
    MTEST_OK(MPI_Bcast(&b, 1, MPI_INT, n - 1, c));
    MTEST_CHECK(b == seed, "blocking Bcast among the outstanding calls: %d", b);
    if (nbonly)
        return;
    for (int q = 0; q < n; q++)
        v[q] = me * 1000 + q + seed;
    MTEST_OK(MPI_Alltoall(v, 1, MPI_INT, w, 1, MPI_INT, c));
    for (int q = 0; q < n; q++)
        bad += w[q] != q * 1000 + me + seed;
    MTEST_OK(MPI_Allgather(&v[0], 1, MPI_INT, w, 1, MPI_INT, c));
    for (int q = 0; q < n; q++)
        bad += w[q] != q * 1000 + seed;
    MTEST_CHECK(!bad, "blocking Allgather/Alltoall among the outstanding calls: %d wrong", bad);
}

static void suite(MPI_Comm c, int seed0)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    for (int ti = 0; ti < NTYPES; ti++)
        for (int ci = 0; ci < NCOUNTS; ci++) {
            int tsize, cnt = counts[ci];
            MPI_Type_size(types[ti], &tsize);
            call_t k[4];
            MPI_Request req[4];
            for (int j = 0; j < 4; j++) {
                call_t *x = &k[j];
                x->gather = j % 2 == 0, x->in_place = (j / 2 + ci) % 2, x->n = n, x->me = me;
                x->gaps = types[ti] == MPI_INT && j == 2 && !x->in_place;
                x->seed = seed0 + ti * 10 + ci + j;
                x->blk = (size_t)cnt * (size_t)tsize;
                x->s = malloc(x->blk * (size_t)n + 1);
                x->r = malloc(x->blk * (size_t)n * 2 + 1);
                fill(x);
                issue(x, c, types[ti], cnt, &req[j], 0);
                if (j == 1)
                    blocking(c, me, n, x->seed);
            }
            for (int j = 3; j >= 0; j--) {
                MTEST_OK(MPI_Wait(&req[j], MPI_STATUS_IGNORE));
                check(&k[j], "outstanding");
            }
            /* persistent: the data of each start is what the buffers hold at MPI_Start */
            for (int j = 0; j < 2; j++) {
                issue(&k[j], c, types[ti], cnt, &req[j], 1);
                for (int rep = 0; rep < 2; rep++) {
                    k[j].seed += 100;
                    fill(&k[j]);
                    MTEST_OK(MPI_Start(&req[j]));
                    MTEST_OK(MPI_Wait(&req[j], MPI_STATUS_IGNORE));
                    check(&k[j], "persistent");
                }
                MTEST_OK(MPI_Request_free(&req[j]));
            }
            for (int j = 0; j < 4; j++)
                free(k[j].s), free(k[j].r);
        }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    nbonly = argc > 1 && !strcmp(argv[1], "nbonly");
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -mtest_rank, &half);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* the first calls on WORLD precede any blocking one (schedules); the blocking calls
     * among them make the segment, and the calls after take it */
    suite(MPI_COMM_WORLD, 1);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    suite(MPI_COMM_WORLD, 2);
    MTEST_OK(MPI_Barrier(half));
    suite(half, 3);
    suite(dup, 4); /* the blocking calls inside the first round make dup's segment */
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
