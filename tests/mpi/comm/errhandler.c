/* Error handlers and user error codes: a user handler gets the communicator and the code
 * (raised by the library and by Comm_call_errhandler); new communicators inherit it;
 * Add_error_class/code/string with Error_class/Error_string and MPI_LASTUSEDCODE;
 * Remove_error_*; a user code passed through the handler. */
#include "mtest.h"

#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Errhandler eh;
    MPI_Comm d, d2;
    MTEST_OK(MPI_Comm_create_errhandler(mtest_recording_handler, &eh));
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MTEST_OK(MPI_Comm_set_errhandler(d, eh));
    MTEST_OK(MPI_Errhandler_free(&eh));
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, mtest_size, 0, d);
    MTEST_CHECK(rc == MPI_ERR_RANK && mtest_handler_calls == 1 && mtest_handler_code == MPI_ERR_RANK &&
                    mtest_handler_comm == d,
                "bad rank: rc %d, %d calls, code %d", rc, mtest_handler_calls, mtest_handler_code);
    /* inherited by dup and split */
    MTEST_OK(MPI_Comm_split(d, 0, 0, &d2));
    rc = MPI_Send(&x, 1, MPI_INT, 0, -1, d2);
    MTEST_CHECK(rc == MPI_ERR_TAG && mtest_handler_calls == 2 && mtest_handler_code == MPI_ERR_TAG &&
                    mtest_handler_comm == d2,
                "inherited handler: rc %d, %d calls, code %d", rc, mtest_handler_calls, mtest_handler_code);
    MTEST_OK(MPI_Comm_free(&d2));

    /* user classes, codes and strings */
    int cls, code, code2, c, len, *lastused, flag;
    char s[MPI_MAX_ERROR_STRING];
    MTEST_OK(MPI_Add_error_class(&cls));
    MTEST_CHECK(cls > MPI_ERR_LASTCODE, "user class %d is not above MPI_ERR_LASTCODE", cls);
    MTEST_OK(MPI_Add_error_code(cls, &code));
    MTEST_OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    MTEST_CHECK(code != cls && code2 != code, "codes %d %d class %d", code, code2, cls);
    MTEST_OK(MPI_Error_class(code, &c));
    MTEST_CHECK(c == cls, "Error_class(user code) = %d, expected %d", c, cls);
    MTEST_OK(MPI_Error_class(cls, &c));
    MTEST_CHECK(c == cls, "Error_class(user class) = %d", c);
    MTEST_OK(MPI_Error_class(code2, &c));
    MTEST_CHECK(c == MPI_ERR_ARG, "Error_class(code of MPI_ERR_ARG) = %d", c);
    MTEST_OK(MPI_Error_string(code, s, &len));
    MTEST_CHECK(len == 0 && s[0] == 0, "string of a code without one: \"%s\"", s);
    MTEST_OK(MPI_Add_error_string(code, "the frobnicator jammed"));
    MTEST_OK(MPI_Add_error_string(cls, "frobnication errors"));
    MTEST_OK(MPI_Error_string(code, s, &len));
    MTEST_CHECK(strcmp(s, "the frobnicator jammed") == 0 && len == (int)strlen(s), "user string: \"%s\" %d", s, len);
    MTEST_OK(MPI_Error_string(cls, s, &len));
    MTEST_CHECK(strcmp(s, "frobnication errors") == 0, "class string: \"%s\"", s);
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag));
    MTEST_CHECK(flag && *lastused >= code2 && *lastused >= code, "MPI_LASTUSEDCODE %d", flag ? *lastused : -1);

    /* Comm_call_errhandler with a user code */
    MTEST_OK(MPI_Comm_call_errhandler(d, code));
    MTEST_CHECK(mtest_handler_calls == 3 && mtest_handler_code == code && mtest_handler_comm == d,
                "call_errhandler: %d calls, code %d", mtest_handler_calls, mtest_handler_code);

    /* removal (MPI-4.1) */
    mtest_errors_return(MPI_COMM_WORLD);
    MTEST_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* still has a code */
    MTEST_ERR(MPI_Remove_error_code(code), MPI_ERR_ARG); /* still has a string */
    MTEST_OK(MPI_Remove_error_string(code));
    MTEST_OK(MPI_Error_string(code, s, &len));
    MTEST_CHECK(len == 0, "string after removal: \"%s\"", s);
    MTEST_OK(MPI_Remove_error_code(code));
    MTEST_ERR(MPI_Error_class(code, &c), MPI_ERR_ARG);
    MTEST_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* still has a string */
    MTEST_OK(MPI_Remove_error_string(cls));
    MTEST_OK(MPI_Remove_error_class(cls));
    MTEST_OK(MPI_Remove_error_code(code2));

    /* bad input */
    MTEST_ERR(MPI_Add_error_code(cls, &code), MPI_ERR_ARG);          /* removed class */
    MTEST_ERR(MPI_Add_error_string(MPI_ERR_RANK, "x"), MPI_ERR_ARG); /* predefined code */
    MTEST_ERR(MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM);
    MTEST_OK(MPI_Comm_free(&d));
    return mtest_finalize();
}
