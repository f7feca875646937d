/* Info bindings and MPI_INFO_ENV. */
#include "api_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Info objects work before MPI_Init and after MPI_Finalize too (MPI-4.1 11.4.1). */
#define GET_INFO(i, h)                 \
    rmpi_info_t *i = rmpi_info_get(h); \
    RMPI_CHECK(i, NULL, MPI_ERR_INFO, "invalid info object %p", (void *)(h))

#define CHECK_KEY(key)                                                                            \
    RMPI_CHECK(key, NULL, MPI_ERR_INFO_KEY, "key must not be NULL");                              \
    RMPI_CHECK(key[0] && strlen(key) < MPI_MAX_INFO_KEY, NULL, MPI_ERR_INFO_KEY,                  \
               "key \"%.40s\" is empty or longer than MPI_MAX_INFO_KEY - 1 (%d) characters", key, \
               MPI_MAX_INFO_KEY - 1)

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    default: return "MPI_THREAD_SINGLE";
    }
}

/* The command line as the kernel has it (MPI_Init's argc/argv may be NULL). */
static char **read_cmdline(int *argc)
{
    static char buf[8192];
    static char *argv[64];
    *argc = 0;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return argv;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    for (size_t i = 0; i < n && *argc < 63; i += strlen(buf + i) + 1)
        argv[(*argc)++] = buf + i;
    return argv;
}

void rmpi_api_info_env_init(int maxprocs, int thread_level)
{
    int argc;
    char **argv = read_cmdline(&argc);
    rmpi_info_env_init(argc, argv, maxprocs, thread_level_name(thread_level));
}

int MPI_Info_create(MPI_Info *info)
{
    RMPI_CHECK(info, NULL, MPI_ERR_ARG, "info must not be NULL");
    *info = (MPI_Info)rmpi_info_new();
    return MPI_SUCCESS;
}

int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    RMPI_CHECK(info, NULL, MPI_ERR_ARG, "info must not be NULL");
    int provided = MPI_THREAD_SINGLE;
    if (rmpi_api_state == RMPI_STATE_INIT)
        MPI_Query_thread(&provided);
    rmpi_info_t *i = rmpi_info_new();
    if (argc <= 0 || !argv)
        argv = read_cmdline(&argc);
    rmpi_info_env_fill(i, argc, argv, rmpi_core_size > 0 ? rmpi_core_size : 1, thread_level_name(provided));
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}

/* MPI-4.1: the hardware resources MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED) can split by. */
int MPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(hw_info, NULL, MPI_ERR_ARG, "hw_info must not be NULL");
    rmpi_info_t *i = rmpi_info_new();
    rmpi_info_set(i, "mpi_hw_resource_type", "mpi_shared_memory");
    *hw_info = (MPI_Info)i;
    return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    GET_INFO(i, info);
    RMPI_CHECK(i != &rmpi_info_env, NULL, MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed");
    CHECK_KEY(key);
    RMPI_CHECK(value, NULL, MPI_ERR_INFO_VALUE, "value must not be NULL");
    RMPI_CHECK(strlen(value) < MPI_MAX_INFO_VAL, NULL, MPI_ERR_INFO_VALUE,
               "the value of \"%s\" is longer than MPI_MAX_INFO_VAL - 1 (%d) characters", key, MPI_MAX_INFO_VAL - 1);
    RMPI_LOCK();
    rmpi_info_set(i, key, value);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key)
{
    GET_INFO(i, info);
    RMPI_CHECK(i != &rmpi_info_env, NULL, MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed");
    CHECK_KEY(key);
    RMPI_LOCK();
    int found = rmpi_info_delete(i, key);
    RMPI_UNLOCK();
    RMPI_CHECK(found, NULL, MPI_ERR_INFO_NOKEY, "key \"%s\" is not in the info object", key);
    return MPI_SUCCESS;
}

/* Copy value into a buffer of buflen bytes (valuelen + 1 for MPI_Info_get), truncating. */
static void copy_value(char *dst, const char *v, int buflen)
{
    if (buflen <= 0)
        return;
    size_t n = strlen(v);
    if (n >= (size_t)buflen)
        n = (size_t)buflen - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    GET_INFO(i, info);
    CHECK_KEY(key);
    RMPI_CHECK(valuelen >= 0, NULL, MPI_ERR_ARG, "valuelen %d is negative", valuelen);
    RMPI_CHECK(value && flag, NULL, MPI_ERR_ARG, "value and flag must not be NULL");
    const char *v = rmpi_info_lookup(i, key);
    *flag = v != NULL;
    if (v)
        copy_value(value, v, valuelen + 1);
    return MPI_SUCCESS;
}

int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    GET_INFO(i, info);
    CHECK_KEY(key);
    RMPI_CHECK(buflen && flag, NULL, MPI_ERR_ARG, "buflen and flag must not be NULL");
    const char *v = rmpi_info_lookup(i, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    int need = (int)strlen(v) + 1;
    if (*buflen > 0 && value)
        copy_value(value, v, *buflen);
    *buflen = need;
    return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    GET_INFO(i, info);
    CHECK_KEY(key);
    RMPI_CHECK(valuelen && flag, NULL, MPI_ERR_ARG, "valuelen and flag must not be NULL");
    const char *v = rmpi_info_lookup(i, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    GET_INFO(i, info);
    RMPI_CHECK(nkeys, NULL, MPI_ERR_ARG, "nkeys must not be NULL");
    *nkeys = i->n;
    return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    GET_INFO(i, info);
    RMPI_CHECK(key, NULL, MPI_ERR_ARG, "key must not be NULL");
    RMPI_CHECK(n >= 0 && n < i->n, NULL, MPI_ERR_ARG, "n %d is not in 0..%d (the number of keys - 1)", n, i->n - 1);
    snprintf(key, MPI_MAX_INFO_KEY, "%s", i->keys[n]);
    return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    GET_INFO(i, info);
    RMPI_CHECK(newinfo, NULL, MPI_ERR_ARG, "newinfo must not be NULL");
    RMPI_LOCK();
    *newinfo = (MPI_Info)rmpi_info_dup(i);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Info_free(MPI_Info *info)
{
    RMPI_CHECK(info, NULL, MPI_ERR_ARG, "info must not be NULL");
    GET_INFO(i, *info);
    RMPI_CHECK(i != &rmpi_info_env, NULL, MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed");
    RMPI_LOCK();
    rmpi_info_free(i);
    RMPI_UNLOCK();
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
