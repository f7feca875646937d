/* Sessions (the basics RailMPI has after MPI_Init): psets mpi://WORLD and mpi://SELF with
 * their sizes, groups from psets, Comm_create_from_group on them (a ring exchange checks the
 * result), session info, error handlers on sessions (user handler called with the session
 * and the code, predefined ones get/set), MPI_ERR_SESSION for a bad handle. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static int calls, last_code;
static MPI_Session last_session;

static void handler(MPI_Session *s, int *code, ...)
{
    calls++;
    last_code = *code;
    last_session = *s;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Session s;
    MTEST_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    int n, len, flag;
    char name[64], val[MPI_MAX_INFO_VAL];
    MTEST_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    MTEST_CHECK(n >= 2, "%d psets", n);
    int have_world = 0;
    for (int i = 0; i < n; i++) {
        len = 0;
        MTEST_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        MTEST_CHECK(len > 1 && len <= (int)sizeof name, "pset %d length %d", i, len);
        MTEST_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        MTEST_CHECK((int)strlen(name) + 1 == len, "pset %d \"%s\" length %d", i, name, len);
        have_world |= strcmp(name, "mpi://WORLD") == 0;
    }
    MTEST_CHECK(have_world, "no mpi://WORLD pset");
    MPI_Info pi;
    MTEST_OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &pi));
    MTEST_OK(MPI_Info_get(pi, "mpi_size", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && atoi(val) == mtest_size, "mpi://WORLD mpi_size %s", flag ? val : "(none)");
    MTEST_OK(MPI_Info_free(&pi));
    MTEST_OK(MPI_Session_get_info(s, &pi));
    MTEST_OK(MPI_Info_get(pi, "thread_level", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag, "session info without thread_level");
    MTEST_OK(MPI_Info_free(&pi));

    MPI_Group g;
    MPI_Comm c;
    MTEST_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MTEST_OK(MPI_Comm_create_from_group(g, "rmpi-session-world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int r, sz, got = -1, me = mtest_rank;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &sz);
    MTEST_CHECK(r == me && sz == mtest_size, "world from pset: rank %d size %d", r, sz);
    MTEST_OK(
        MPI_Sendrecv(&me, 1, MPI_INT, (r + 1) % sz, 0, &got, 1, MPI_INT, (r - 1 + sz) % sz, 0, c, MPI_STATUS_IGNORE));
    MTEST_CHECK(got == (me - 1 + sz) % sz, "ring on the pset communicator: %d", got);
    MTEST_OK(MPI_Comm_free(&c));
    MTEST_OK(MPI_Group_free(&g));
    MTEST_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    MTEST_OK(MPI_Group_size(g, &sz));
    MTEST_CHECK(sz == 1, "mpi://SELF size %d", sz);
    MTEST_OK(MPI_Group_free(&g));

    /* error handlers */
    MPI_Errhandler eh, got_eh;
    MTEST_OK(MPI_Session_create_errhandler(handler, &eh));
    MTEST_OK(MPI_Session_set_errhandler(s, eh));
    MTEST_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    MTEST_CHECK(calls == 1 && last_code == MPI_ERR_OTHER && last_session == s, "session handler: %d calls, code %d",
                calls, last_code);
    int rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g);
    MTEST_CHECK(rc == MPI_ERR_ARG, "unknown pset: rc %d", rc);
    MTEST_CHECK(calls == 2 && last_code == MPI_ERR_ARG, "unknown pset through the handler: %d calls", calls);
    MTEST_OK(MPI_Session_get_errhandler(s, &got_eh));
    MTEST_CHECK(got_eh == eh, "Session_get_errhandler returned another handler");
    MTEST_OK(MPI_Errhandler_free(&got_eh));
    MTEST_OK(MPI_Errhandler_free(&eh));
    MTEST_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MTEST_OK(MPI_Session_finalize(&s));
    MTEST_CHECK(s == MPI_SESSION_NULL, "Session_finalize did not null the handle");
    mtest_errors_return(MPI_COMM_WORLD);
    MTEST_ERR(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    return mtest_finalize();
}
