/* Non-blocking and persistent Reduce on 2 ranks (coll/shm.c: in single copy from where the
 * blocking call takes it in the machine's state, reduce_nb_single, else the segment or the
 * tree): sizes on both sides of the deep ring's limit, of a step buffer and of the
 * segment's Reduce limit; both roots, in place and not; several types and ops; six calls
 * in flight at once, completed newest first by MPI_Wait or by MPI_Test rounds, a
 * persistent call started twice; the other rank overwrites its operand as soon as its call
 * completes (single copy releases it once the root has read it, so a release before the
 * read shows as a wrong result). Only non-blocking reductions run after the first Barrier,
 * so the RMPI_REPORT line of the testlist counts theirs. Every result is checked exactly
 * against x0 op x1 computed here (two operands: every order gives the same bits). */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {8192, 12288, 16000, 16384, 32768, 40000, 65472, 65536, 131072};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define NFLIGHT 6

typedef struct {
    MPI_Datatype t;
    MPI_Op op;
    size_t es;
    const char *name;
} kind_t;

static const kind_t *kinds(int *n)
{
    static kind_t k[4];
    k[0] = (kind_t){MPI_INT, MPI_SUM, sizeof(int), "int SUM"};
    k[1] = (kind_t){MPI_DOUBLE, MPI_MAX, sizeof(double), "double MAX"};
    k[2] = (kind_t){MPI_LONG, MPI_BXOR, sizeof(long), "long BXOR"};
    k[3] = (kind_t){MPI_FLOAT, MPI_SUM, sizeof(float), "float SUM"};
    *n = mtest_size == 2 ? 4 : 3; /* float SUM of more than two operands depends on the order */
    return k;
}

/* Element i of rank r's operand for call seed s. */
static void input(const kind_t *k, int r, unsigned s, void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)(i * 2654435761u) ^ (s * 40503u) ^ (uint32_t)(r * 977);
        if (k->t == MPI_INT)
            ((int *)buf)[i] = (int)(v % 100000) - 50000;
        else if (k->t == MPI_DOUBLE)
            ((double *)buf)[i] = (double)(int)(v % 2001 - 1000) / 8.0;
        else if (k->t == MPI_LONG)
            ((long *)buf)[i] = (long)v * 65537L;
        else
            ((float *)buf)[i] = (float)(v % 4096) / 16.0f;
    }
}

static void combine(const kind_t *k, const void *a, void *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (k->t == MPI_INT)
            ((int *)b)[i] += ((const int *)a)[i];
        else if (k->t == MPI_DOUBLE) {
            double x = ((const double *)a)[i];
            if (x > ((double *)b)[i])
                ((double *)b)[i] = x;
        } else if (k->t == MPI_LONG)
            ((long *)b)[i] ^= ((const long *)a)[i];
        else
            ((float *)b)[i] += ((const float *)a)[i];
    }
}

typedef struct {
    MPI_Request req;
    char *in, *out;
    unsigned seed;
    int persistent;
} call_t;

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size, nk;
    const kind_t *ks = kinds(&nk);
    size_t maxb = (size_t)sizes[NSIZES - 1];
    char *ref = mtest_malloc(maxb), *other = mtest_malloc(maxb);
    call_t c[NFLIGHT];
    for (int i = 0; i < NFLIGHT; i++) {
        c[i].in = mtest_malloc(maxb);
        c[i].out = mtest_malloc(maxb);
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD)); /* makes the segment the non-blocking calls use */
    int round = 0;
    for (int s = 0; s < NSIZES; s++)
        for (int ki = 0; ki < nk; ki++)
            for (int root = 0; root < n && root < 2; root++)
                for (int inplace = 0; inplace < 2; inplace++, round++) {
                    const kind_t *k = &ks[ki];
                    size_t cnt = (size_t)sizes[s] / k->es, bytes = cnt * k->es;
                    int poll = round % 2;
                    for (int i = 0; i < NFLIGHT; i++) {
                        call_t *x = &c[i];
                        x->seed = (unsigned)(round * NFLIGHT + i);
                        x->persistent = i == NFLIGHT - 1 && round % 3 == 0;
                        input(k, me, x->seed, x->in, cnt);
                        memset(x->out, 0x5a, bytes);
                        int ip = inplace && me == root;
                        if (ip)
                            memcpy(x->out, x->in, bytes);
                        const void *sb = ip ? MPI_IN_PLACE : x->in;
                        MTEST_OK(x->persistent
                                     ? MPI_Reduce_init(sb, x->out, (int)cnt, k->t, k->op, root, MPI_COMM_WORLD,
                                                       MPI_INFO_NULL, &x->req)
                                     : MPI_Ireduce(sb, x->out, (int)cnt, k->t, k->op, root, MPI_COMM_WORLD, &x->req));
                        if (x->persistent)
                            MTEST_OK(MPI_Start(&x->req));
                    }
                    for (int i = NFLIGHT - 1; i >= 0; i--) {
                        call_t *x = &c[i];
                        for (int start = 0; start < 1 + x->persistent; start++) {
                            if (start) { /* the persistent call again, on fresh operands */
                                x->seed += 1000;
                                input(k, me, x->seed, x->in, cnt);
                                if (inplace && me == root)
                                    memcpy(x->out, x->in, bytes);
                                MTEST_OK(MPI_Start(&x->req));
                            }
                            if (poll) {
                                int done = 0;
                                while (!done)
                                    MTEST_OK(MPI_Test(&x->req, &done, MPI_STATUS_IGNORE));
                            } else
                                MTEST_OK(MPI_Wait(&x->req, MPI_STATUS_IGNORE));
                            if (me != root) {
                                memset(x->in, 0xa5, bytes); /* released: the root has its operand */
                                continue;
                            }
                            /* ref = x0 op x1 (rank 0's operand on the left) */
                            input(k, 0, x->seed, ref, cnt);
                            for (int r = 1; r < n; r++) {
                                input(k, r, x->seed, other, cnt);
                                combine(k, ref, other, cnt);
                                memcpy(ref, other, bytes);
                            }
                            if (memcmp(ref, x->out, bytes)) {
                                size_t at = 0;
                                while (at < bytes && ref[at] == x->out[at])
                                    at++;
                                MTEST_CHECK(0, "%s %zu B root %d%s call %d%s: wrong from byte %zu", k->name, bytes,
                                            root, inplace ? " in place" : "", i, x->persistent ? " (persistent)" : "",
                                            at);
                            }
                        }
                        if (x->persistent)
                            MTEST_OK(MPI_Request_free(&x->req));
                    }
                }
    for (int i = 0; i < NFLIGHT; i++) {
        free(c[i].in);
        free(c[i].out);
    }
    free(ref);
    free(other);
    return mtest_finalize();
}
