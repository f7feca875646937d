/* MPI-4.1 error-string management (section 9.5): Add_error_class/code/string and their
 * Remove_ counterparts. A removed class or code is no longer an error value (Error_class
 * refuses it, nothing can be added to it), a new one can be added after removal and works
 * fully; removing a class that still has codes, a code or class that still has a string,
 * a predefined class, code or string, a code through Remove_error_class (and the reverse)
 * or anything twice is MPI_ERR_ARG; strings of codes and classes are independent and
 * read back empty once removed; MPI_LASTUSEDCODE covers every live value; codes may be
 * added to predefined classes, MPI_SUCCESS included. */
#include "mtest.h"

#include <string.h>

static void str_is(int code, const char *want, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = -1;
    MTEST_OK(MPI_Error_string(code, s, &len));
    MTEST_CHECK(!strcmp(s, want) && len == (int)strlen(want), "%s: string \"%s\" (%d), expected \"%s\"", what, s, len,
                want);
}

static void class_is(int code, int cls, const char *what)
{
    int c = -1;
    MTEST_OK(MPI_Error_class(code, &c));
    MTEST_CHECK(c == cls, "%s: class %d, expected %d", what, c, cls);
}

static int last_used(void)
{
    int *v, flag = 0;
    MTEST_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    MTEST_CHECK(flag, "MPI_LASTUSEDCODE is not set");
    return flag ? *v : -1;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int cls, c1, c2, c3, cls2, k;

    MTEST_OK(MPI_Add_error_class(&cls));
    MTEST_OK(MPI_Add_error_code(cls, &c1));
    MTEST_OK(MPI_Add_error_code(cls, &c2));
    MTEST_OK(MPI_Add_error_code(MPI_ERR_OTHER, &c3));
    MTEST_CHECK(last_used() >= c1 && last_used() >= c2 && last_used() >= c3 && last_used() >= cls,
                "MPI_LASTUSEDCODE %d below a value in use", last_used());
    class_is(c1, cls, "user code");
    class_is(c3, MPI_ERR_OTHER, "code of a predefined class");
    MTEST_OK(MPI_Add_error_string(cls, "class text"));
    MTEST_OK(MPI_Add_error_string(c1, "first code text"));
    MTEST_OK(MPI_Add_error_string(c2, "second code text"));
    MTEST_OK(MPI_Add_error_string(c2, "second code, replaced"));
    str_is(c2, "second code, replaced", "replaced string");

    /* what may not be removed */
    MTEST_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* codes left */
    MTEST_ERR(MPI_Remove_error_code(c1), MPI_ERR_ARG);   /* string left */
    MTEST_ERR(MPI_Remove_error_class(c3), MPI_ERR_ARG);  /* a code, not a class */
    MTEST_ERR(MPI_Remove_error_code(cls), MPI_ERR_ARG);  /* a class, not a code */
    MTEST_ERR(MPI_Remove_error_class(MPI_ERR_TYPE), MPI_ERR_ARG);
    MTEST_ERR(MPI_Remove_error_class(MPI_SUCCESS), MPI_ERR_ARG);
    MTEST_ERR(MPI_Remove_error_code(MPI_ERR_TRUNCATE), MPI_ERR_ARG);
    MTEST_ERR(MPI_Remove_error_string(MPI_ERR_COMM), MPI_ERR_ARG);
    MTEST_ERR(MPI_Remove_error_string(c3), MPI_ERR_ARG); /* never had one */
    MTEST_ERR(MPI_Remove_error_class(MPI_ERR_LASTCODE + 100000), MPI_ERR_ARG);
    MTEST_ERR(MPI_Remove_error_code(-5), MPI_ERR_ARG);
    str_is(c1, "first code text", "string after refused removals");
    class_is(c1, cls, "code after refused removals");

    /* strings are per value: removing the code's leaves the class's, and back */
    MTEST_OK(MPI_Remove_error_string(c1));
    str_is(c1, "", "code whose string was removed");
    str_is(cls, "class text", "class string after a code's removal");
    MTEST_ERR(MPI_Remove_error_string(c1), MPI_ERR_ARG); /* twice */
    MTEST_OK(MPI_Add_error_string(c1, "again"));         /* a string may come back */
    str_is(c1, "again", "string added after removal");
    MTEST_OK(MPI_Remove_error_string(c1));
    MTEST_OK(MPI_Remove_error_code(c1));
    MTEST_ERR(MPI_Remove_error_code(c1), MPI_ERR_ARG); /* twice */
    MTEST_ERR(MPI_Error_class(c1, &k), MPI_ERR_ARG);
    MTEST_ERR(MPI_Add_error_string(c1, "x"), MPI_ERR_ARG);
    class_is(c2, cls, "the other code of the class");
    str_is(c2, "second code, replaced", "the other code's string");

    MTEST_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* c2 left */
    MTEST_OK(MPI_Remove_error_string(c2));
    MTEST_OK(MPI_Remove_error_code(c2));
    MTEST_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* its string left */
    MTEST_OK(MPI_Remove_error_string(cls));
    str_is(cls, "", "class whose string was removed");
    MTEST_OK(MPI_Remove_error_class(cls));
    MTEST_ERR(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* twice */
    MTEST_ERR(MPI_Error_class(cls, &k), MPI_ERR_ARG);
    MTEST_ERR(MPI_Add_error_code(cls, &k), MPI_ERR_ARG);
    MTEST_ERR(MPI_Add_error_string(cls, "x"), MPI_ERR_ARG);
    class_is(c3, MPI_ERR_OTHER, "code of a predefined class after the user class went");
    MTEST_OK(MPI_Remove_error_code(c3));

    /* reuse: classes and codes added after removal work fully */
    for (int round = 0; round < 3; round++) {
        MTEST_OK(MPI_Add_error_class(&cls2));
        MTEST_CHECK(cls2 > MPI_ERR_LASTCODE, "new class %d not above MPI_ERR_LASTCODE", cls2);
        class_is(cls2, cls2, "new class");
        str_is(cls2, "", "new class without a string");
        int codes[4];
        for (int i = 0; i < 4; i++) {
            MTEST_OK(MPI_Add_error_code(cls2, &codes[i]));
            class_is(codes[i], cls2, "new code");
            for (int j = 0; j < i; j++)
                MTEST_CHECK(codes[j] != codes[i], "codes %d and %d both %d", j, i, codes[i]);
            MTEST_CHECK(last_used() >= codes[i], "MPI_LASTUSEDCODE %d below code %d", last_used(), codes[i]);
        }
        MTEST_OK(MPI_Add_error_string(codes[2], "round text"));
        str_is(codes[2], "round text", "new code's string");
        MTEST_OK(MPI_Remove_error_string(codes[2]));
        for (int i = 3; i >= 0; i--)
            MTEST_OK(MPI_Remove_error_code(codes[i]));
        MTEST_OK(MPI_Remove_error_class(cls2));
    }

    /* codes of MPI_SUCCESS's class */
    MTEST_OK(MPI_Add_error_code(MPI_SUCCESS, &k));
    class_is(k, MPI_SUCCESS, "code of class MPI_SUCCESS");
    MTEST_OK(MPI_Add_error_string(k, "all is fine, in detail"));
    str_is(k, "all is fine, in detail", "string of a code of class MPI_SUCCESS");
    MTEST_OK(MPI_Remove_error_string(k));
    MTEST_OK(MPI_Remove_error_code(k));
    MTEST_ERR(MPI_Error_class(k, &k), MPI_ERR_ARG);
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MTEST_OK(MPI_Error_string(MPI_ERR_TYPE, s, &len));
    MTEST_CHECK(len > 0, "predefined MPI_ERR_TYPE lost its string");
    return mtest_finalize();
}
