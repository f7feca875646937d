/* Info objects: ordered (key, value) string pairs; MPI_INFO_ENV. */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

rmpi_addrset_t rmpi_info_live = RMPI_ADDRSET_INIT;
rmpi_info_t rmpi_info_env = {RMPI_INFO_MAGIC, 0, 0, NULL, NULL};

rmpi_info_t *rmpi_info_new(void)
{
    rmpi_info_t *i = rmpi_xcalloc(1, sizeof *i);
    i->magic = RMPI_INFO_MAGIC;
    rmpi_addrset_add(&rmpi_info_live, i);
    return i;
}

rmpi_info_t *rmpi_info_dup(const rmpi_info_t *src)
{
    rmpi_info_t *i = rmpi_info_new();
    for (int k = 0; src && k < src->n; k++)
        rmpi_info_set(i, src->keys[k], src->vals[k]);
    return i;
}

static void info_clear(rmpi_info_t *i)
{
    for (int k = 0; k < i->n; k++) {
        free(i->keys[k]);
        free(i->vals[k]);
    }
    free(i->keys);
    free(i->vals);
    i->keys = i->vals = NULL;
    i->n = i->cap = 0;
}

void rmpi_info_free(rmpi_info_t *i)
{
    if (!i || i == &rmpi_info_env)
        return;
    info_clear(i);
    i->magic = 0;
    rmpi_addrset_del(&rmpi_info_live, i);
    free(i);
}

static int info_find(const rmpi_info_t *i, const char *key)
{
    for (int k = 0; i && k < i->n; k++)
        if (strcmp(i->keys[k], key) == 0)
            return k;
    return -1;
}

void rmpi_info_set(rmpi_info_t *i, const char *key, const char *val)
{
    int k = info_find(i, key);
    if (k >= 0) {
        free(i->vals[k]);
        i->vals[k] = rmpi_xstrdup(val);
        return;
    }
    if (i->n == i->cap) {
        i->cap = i->cap ? 2 * i->cap : 8;
        i->keys = rmpi_xrealloc(i->keys, (size_t)i->cap * sizeof *i->keys);
        i->vals = rmpi_xrealloc(i->vals, (size_t)i->cap * sizeof *i->vals);
    }
    i->keys[i->n] = rmpi_xstrdup(key);
    i->vals[i->n++] = rmpi_xstrdup(val);
}

const char *rmpi_info_lookup(const rmpi_info_t *i, const char *key)
{
    int k = info_find(i, key);
    return k >= 0 ? i->vals[k] : NULL;
}

int rmpi_info_delete(rmpi_info_t *i, const char *key)
{
    int k = info_find(i, key);
    if (k < 0)
        return 0;
    free(i->keys[k]);
    free(i->vals[k]);
    memmove(&i->keys[k], &i->keys[k + 1], (size_t)(i->n - k - 1) * sizeof *i->keys);
    memmove(&i->vals[k], &i->vals[k + 1], (size_t)(i->n - k - 1) * sizeof *i->vals);
    i->n--;
    return 1;
}

void rmpi_info_env_fill(rmpi_info_t *i, int argc, char **argv, int maxprocs, const char *thread_level)
{
    char buf[4096];
    if (argc > 0 && argv && argv[0]) {
        rmpi_info_set(i, "command", argv[0]);
        size_t len = 0;
        buf[0] = 0;
        for (int a = 1; a < argc && argv[a]; a++)
            len +=
                (size_t)snprintf(buf + len, len < sizeof buf ? sizeof buf - len : 0, "%s%s", a > 1 ? " " : "", argv[a]);
        if (argc > 1)
            rmpi_info_set(i, "argv", buf);
    }
    snprintf(buf, sizeof buf, "%d", maxprocs);
    rmpi_info_set(i, "maxprocs", buf);
    rmpi_info_set(i, "soft", buf);
    if (rmpi_topo_hostname()[0]) /* known once MPI is initialised */
        rmpi_info_set(i, "host", rmpi_topo_hostname());
    if (getcwd(buf, sizeof buf))
        rmpi_info_set(i, "wdir", buf);
    if (thread_level)
        rmpi_info_set(i, "thread_level", thread_level);
}

void rmpi_info_env_init(int argc, char **argv, int maxprocs, const char *thread_level)
{
    info_clear(&rmpi_info_env);
    rmpi_info_env_fill(&rmpi_info_env, argc, argv, maxprocs, thread_level);
}
