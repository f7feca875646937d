/* Info objects: set/get/get_string/get_valuelen/nkeys/nthkey (insertion order)/delete/dup/
 * free, truncation rules of get and get_string, MPI_INFO_ENV and Info_create_env, and the
 * error classes MPI_ERR_INFO, _INFO_KEY, _INFO_VALUE, _INFO_NOKEY. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Info info, dup;
    char val[MPI_MAX_INFO_VAL], key[MPI_MAX_INFO_KEY];
    int flag, n, len;
    MTEST_OK(MPI_Info_create(&info));
    MTEST_OK(MPI_Info_get_nkeys(info, &n));
    MTEST_CHECK(n == 0, "new info has %d keys", n);
    MTEST_OK(MPI_Info_set(info, "b_key", "first"));
    MTEST_OK(MPI_Info_set(info, "a_key", "second value"));
    MTEST_OK(MPI_Info_set(info, "c_key", "3"));
    MTEST_OK(MPI_Info_set(info, "b_key", "replaced"));
    MTEST_OK(MPI_Info_get_nkeys(info, &n));
    MTEST_CHECK(n == 3, "nkeys %d", n);
    const char *keys[3] = {"b_key", "a_key", "c_key"};
    for (int i = 0; i < 3 && i < n; i++) {
        MTEST_OK(MPI_Info_get_nthkey(info, i, key));
        MTEST_CHECK(strcmp(key, keys[i]) == 0, "nthkey %d = %s, expected %s", i, key, keys[i]);
    }
    MTEST_OK(MPI_Info_get(info, "b_key", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && strcmp(val, "replaced") == 0, "get b_key: %d \"%s\"", flag, val);
    MTEST_OK(MPI_Info_get(info, "a_key", 6, val, &flag));
    MTEST_CHECK(flag && strcmp(val, "second") == 0, "get truncated to 6: \"%s\"", val);
    MTEST_OK(MPI_Info_get_valuelen(info, "a_key", &len, &flag));
    MTEST_CHECK(flag && len == 12, "valuelen %d", len);
    MTEST_OK(MPI_Info_get(info, "missing", 10, val, &flag));
    MTEST_CHECK(!flag, "missing key found");
    MTEST_OK(MPI_Info_get_valuelen(info, "missing", &len, &flag));
    MTEST_CHECK(!flag, "valuelen of a missing key");
    /* get_string: buflen in: space; out: length + 1 */
    len = 0;
    MTEST_OK(MPI_Info_get_string(info, "a_key", &len, NULL, &flag));
    MTEST_CHECK(flag && len == 13, "get_string size query: %d", len);
    len = 4;
    MTEST_OK(MPI_Info_get_string(info, "a_key", &len, val, &flag));
    MTEST_CHECK(flag && len == 13 && strcmp(val, "sec") == 0, "get_string into 4 bytes: %d \"%s\"", len, val);
    len = sizeof val;
    MTEST_OK(MPI_Info_get_string(info, "c_key", &len, val, &flag));
    MTEST_CHECK(flag && len == 2 && strcmp(val, "3") == 0, "get_string c_key: %d \"%s\"", len, val);

    MTEST_OK(MPI_Info_dup(info, &dup));
    MTEST_OK(MPI_Info_delete(info, "b_key"));
    MTEST_OK(MPI_Info_get_nkeys(info, &n));
    MTEST_CHECK(n == 2, "nkeys after delete %d", n);
    MTEST_OK(MPI_Info_get_nthkey(info, 0, key));
    MTEST_CHECK(strcmp(key, "a_key") == 0, "first key after delete: %s", key);
    MTEST_OK(MPI_Info_get(dup, "b_key", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && strcmp(val, "replaced") == 0, "the dup lost b_key");
    MTEST_OK(MPI_Info_free(&dup));
    MTEST_CHECK(dup == MPI_INFO_NULL, "Info_free did not null the handle");

    /* MPI_INFO_ENV and Info_create_env */
    MTEST_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && strstr(val, "info") != NULL, "INFO_ENV command: %d \"%s\"", flag, flag ? val : "");
    MTEST_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && atoi(val) == mtest_size, "INFO_ENV maxprocs: %s", flag ? val : "(none)");
    MTEST_OK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && strncmp(val, "MPI_THREAD_", 11) == 0, "INFO_ENV thread_level: %s", flag ? val : "(none)");
    char *args[] = {"prog", "x", "y", NULL};
    MTEST_OK(MPI_Info_create_env(3, args, &dup));
    MTEST_OK(MPI_Info_get(dup, "argv", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && strcmp(val, "x y") == 0, "create_env argv: \"%s\"", flag ? val : "");
    MTEST_OK(MPI_Info_free(&dup));

    /* errors */
    mtest_errors_return(MPI_COMM_WORLD);
    char longkey[MPI_MAX_INFO_KEY + 8];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    MTEST_ERR(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
    MTEST_ERR(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
    MTEST_ERR(MPI_Info_set(info, "k", NULL), MPI_ERR_INFO_VALUE);
    MTEST_ERR(MPI_Info_delete(info, "not_there"), MPI_ERR_INFO_NOKEY);
    MTEST_ERR(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
    MTEST_ERR(MPI_Info_get_nthkey(info, 5, key), MPI_ERR_ARG);
    MTEST_ERR(MPI_Info_free(&(MPI_Info){MPI_INFO_ENV}), MPI_ERR_INFO);
    MTEST_OK(MPI_Info_free(&info));
    return mtest_finalize();
}
