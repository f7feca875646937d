/* The MPI-4 sessions model without MPI_Init: Info objects before the runtime starts and
 * after it ends; MPI_Info_create_env; two sessions alive at once, each with its own error
 * handler; psets mpi://WORLD and mpi://SELF with their sizes; communicators from their
 * groups with string tags, used for collectives and point-to-point; MPI_Initialized and
 * MPI_Finalized stay false (they describe the world model); then the world model joins
 * (MPI_Init with the sessions open) and the runtime ends with the last user. Prints
 * " No Errors" on rank 0; exits 1 on any error. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs;
#define CHECK(c, ...)                                        \
    do {                                                     \
        if (!(c)) {                                          \
            fprintf(stderr, "sessions_only:%d: ", __LINE__); \
            fprintf(stderr, __VA_ARGS__);                    \
            fputc('\n', stderr);                             \
            errs++;                                          \
        }                                                    \
    } while (0)

static MPI_Comm comm_of(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    CHECK(MPI_Group_from_session_pset(s, pset, &g) == MPI_SUCCESS, "group of %s", pset);
    CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS, "communicator of %s",
          pset);
    MPI_Group_free(&g);
    return c;
}

int main(void)
{
    MPI_Info hints;
    char v[64];
    int flag = 0, len = sizeof v;
    CHECK(MPI_Info_create(&hints) == MPI_SUCCESS, "Info_create before the runtime");
    CHECK(MPI_Info_set(hints, "thread_level", "MPI_THREAD_FUNNELED") == MPI_SUCCESS, "Info_set");
    CHECK(MPI_Info_get_string(hints, "thread_level", &len, v, &flag) == MPI_SUCCESS && flag &&
              !strcmp(v, "MPI_THREAD_FUNNELED"),
          "Info_get_string before the runtime");
    MPI_Info env;
    CHECK(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS, "Info_create_env before the runtime");
    MPI_Info_free(&env);
    MPI_Initialized(&flag);
    CHECK(!flag, "Initialized is true before anything");

    MPI_Session a, b;
    CHECK(MPI_Session_init(hints, MPI_ERRORS_RETURN, &a) == MPI_SUCCESS, "first session");
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &b) == MPI_SUCCESS, "second session");
    MPI_Initialized(&flag);
    CHECK(!flag, "Initialized is true with only sessions open");
    MPI_Errhandler eh;
    CHECK(MPI_Session_get_errhandler(a, &eh) == MPI_SUCCESS && eh == MPI_ERRORS_RETURN, "first session's handler");
    MPI_Errhandler_free(&eh);

    int n = 0, world = -1, self = -1;
    CHECK(MPI_Session_get_num_psets(a, MPI_INFO_NULL, &n) == MPI_SUCCESS && n >= 2, "%d psets", n);
    for (int i = 0; i < n; i++) {
        char name[MPI_MAX_PSET_NAME_LEN];
        int nl = sizeof name;
        MPI_Info pi;
        CHECK(MPI_Session_get_nth_pset(a, MPI_INFO_NULL, i, &nl, name) == MPI_SUCCESS, "pset %d", i);
        CHECK(MPI_Session_get_pset_info(a, name, &pi) == MPI_SUCCESS, "info of %s", name);
        len = sizeof v;
        MPI_Info_get_string(pi, "mpi_size", &len, v, &flag);
        if (!strcmp(name, "mpi://WORLD"))
            world = flag ? atoi(v) : -1;
        if (!strcmp(name, "mpi://SELF"))
            self = flag ? atoi(v) : -1;
        MPI_Info_free(&pi);
    }
    CHECK(self == 1 && world >= 1, "pset sizes: WORLD %d SELF %d", world, self);

    MPI_Comm wc = comm_of(a, "mpi://WORLD", "org.railmpi.test.world");
    MPI_Comm sc = comm_of(b, "mpi://SELF", "org.railmpi.test.self");
    int rank = -1, size = -1, one = 1, sum = 0;
    MPI_Comm_rank(wc, &rank);
    MPI_Comm_size(wc, &size);
    CHECK(size == world, "communicator of WORLD has %d ranks, the pset %d", size, world);
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, wc) == MPI_SUCCESS && sum == size, "allreduce: %d", sum);
    int token = rank, got = -1;
    CHECK(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT, (rank + size - 1) % size, 3, wc,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS &&
              got == (rank + size - 1) % size,
          "ring over the session's communicator: got %d", got);
    MPI_Comm_size(sc, &n);
    CHECK(n == 1, "communicator of SELF has %d ranks", n);
    /* errors go to the session's handler: ERRORS_RETURN gives the class back */
    CHECK(MPI_Send(&one, 1, MPI_INT, size, 0, wc) == MPI_ERR_RANK, "bad rank on the session communicator");

    /* the world model joins while the sessions are open */
    CHECK(MPI_Init(NULL, NULL) == MPI_SUCCESS, "MPI_Init beside sessions");
    int wsize = -1;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize == size, "MPI_COMM_WORLD has %d ranks, the session's WORLD %d", wsize, size);
    MPI_Comm_free(&wc);
    MPI_Comm_free(&sc);
    CHECK(MPI_Session_finalize(&a) == MPI_SUCCESS && a == MPI_SESSION_NULL, "finalize the first session");
    CHECK(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize with a session still open");
    MPI_Finalized(&flag);
    CHECK(flag, "Finalized is false after MPI_Finalize");
    /* the runtime is still up for the open session */
    MPI_Info si;
    CHECK(MPI_Session_get_info(b, &si) == MPI_SUCCESS, "Session_get_info after MPI_Finalize");
    MPI_Info_free(&si);
    CHECK(MPI_Session_finalize(&b) == MPI_SUCCESS, "finalize the last session");
    MPI_Info after;
    CHECK(MPI_Info_create(&after) == MPI_SUCCESS && MPI_Info_set(after, "k", "v") == MPI_SUCCESS &&
              MPI_Info_free(&after) == MPI_SUCCESS,
          "Info after the runtime ended");
    MPI_Info_free(&hints);
    if (rank == 0)
        printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    return errs ? 1 : 0;
}
