/*
 * PMIx client through libpmix (built when pkg-config finds pmix): Open MPI's prterun and
 * mpirun, and Slurm's srun --mpi=pmix. pmi.c picks it when PMIX_NAMESPACE is set.
 * PMIx keeps every key under the process that put it, while RailMPI's key-value space is
 * one flat table: a key names its owner as the number after its first '-' ("host-3",
 * "ofi-3-1"); keys without one ("rmpi-jobkey") are rank 0's (src/rt/README.md).
 */
#include "pmi_int.h"

#include <errno.h>
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static const char *server = "PMIx server";

static void pmix_err(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "[rmpi rank %d] PMIx: %s failed at the %s: %s.\n", (int)me.rank, what, server,
            PMIx_Error_string(rc));
}

/* A job-level value of our namespace (size, app number) as an unsigned int. */
static int job_uint(const char *key, int optional, unsigned *out)
{
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || !v) {
        if (!optional)
            pmix_err(key, rc);
        return -1;
    }
    int ok = 0;
    if (v->type == PMIX_UINT32)
        *out = v->data.uint32;
    else if (v->type == PMIX_UINT16)
        *out = v->data.uint16;
    else if (v->type == PMIX_INT)
        *out = (unsigned)v->data.integer;
    else
        ok = -1;
    PMIX_VALUE_RELEASE(v);
    return ok;
}

/* PMIx_Init waits as long as a server that accepted the connection stays silent, and
 * libpmix offers no bound for its handshake: a watchdog thread ends the process after
 * RMPI_PMI_TIMEOUT instead, with the message a silent PMI-1/PMI-2 server gets. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
} watch = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void *init_watchdog(void *arg)
{
    double secs = *(const double *)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)secs;
    until.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&watch.mu);
    int rc = 0;
    while (!watch.done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&watch.cv, &watch.mu, &until);
    int done = watch.done;
    pthread_mutex_unlock(&watch.mu);
    if (!done) {
        fprintf(stderr,
                "[rmpi] PMIx: no answer from the %s within %g s; is the launcher that set it still "
                "running? (RMPI_PMI_TIMEOUT sets the bound) Ending this process.\n",
                server, secs);
        _exit(1);
    }
    return NULL;
}

int rmpi_pmix_init(rmpi_pm_info_t *info, const char *expected)
{
    server = expected;
    double secs = rmpi_knobs.PMI_TIMEOUT;
    pthread_t dog;
    int have_dog = secs > 0 && pthread_create(&dog, NULL, init_watchdog, &secs) == 0;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (have_dog) {
        pthread_mutex_lock(&watch.mu);
        watch.done = 1;
        pthread_cond_signal(&watch.cv);
        pthread_mutex_unlock(&watch.mu);
        pthread_join(dog, NULL);
    }
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr,
                "[rmpi] PMIx: cannot connect to the %s: %s; was this program started by prterun, "
                "mpirun (Open MPI) or srun --mpi=pmix, and is that launcher still running?\n",
                server, PMIx_Error_string(rc));
        return -1;
    }
    unsigned size = 0, appnum = 0;
    if (job_uint(PMIX_JOB_SIZE, 0, &size) < 0 || size == 0 || me.rank >= size) {
        fprintf(stderr, "[rmpi rank %d] PMIx: the %s gave no valid job size.\n", (int)me.rank, server);
        return -1;
    }
    if (job_uint(PMIX_APPNUM, 1, &appnum) < 0)
        appnum = 0;
    info->rank = (int)me.rank;
    info->size = (int)size;
    info->appnum = (int)appnum;
    snprintf(info->kvsname, sizeof info->kvsname, "%s", me.nspace);
    return 0;
}

int rmpi_pmix_put(const char *key, const char *value)
{
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, value, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (rc != PMIX_SUCCESS) {
        pmix_err("put", rc);
        return -1;
    }
    return 0;
}

int rmpi_pmix_fence(void)
{
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        pmix_err("commit", rc);
        return -1;
    }
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) {
        pmix_err("fence", rc);
        return -1;
    }
    return 0;
}

int rmpi_pmix_get(const char *key, char *value, size_t len)
{
    const char *dash = strchr(key, '-');
    pmix_proc_t owner;
    PMIX_LOAD_PROCID(&owner, me.nspace, 0);
    if (dash && dash[1] >= '0' && dash[1] <= '9')
        owner.rank = (pmix_rank_t)strtoul(dash + 1, NULL, 10);
    /* After a collecting fence the data is here: do not ask the server to wait for it. */
    pmix_info_t opt;
    bool yes = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&owner, key, &opt, 1, &v);
    PMIX_INFO_DESTRUCT(&opt);
    if (rc != PMIX_SUCCESS || !v)
        return -1;
    int ok = -1;
    if (v->type == PMIX_STRING && v->data.string) {
        if (strlen(v->data.string) < len) {
            strcpy(value, v->data.string);
            ok = 0;
        } else {
            fprintf(stderr, "[rmpi rank %d] PMIx: the value of key \"%s\" does not fit %zu bytes.\n", (int)me.rank, key,
                    len);
        }
    }
    PMIX_VALUE_RELEASE(v);
    return ok;
}

int rmpi_pmix_finalize(void)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        pmix_err("finalize", rc);
        return -1;
    }
    return 0;
}

void rmpi_pmix_abort(int code, const char *msg)
{
    /* NULL procs: the whole namespace. The server usually ends us before this returns. */
    PMIx_Abort(code, msg && *msg ? msg : "MPI job aborted", NULL, 0);
}

int rmpi_pmix_spawn(int count, const rmpi_pmi_spawn_cmd_t *cmds, int npre, const char *const *pkeys,
                    const char *const *pvals)
{
    (void)count, (void)cmds, (void)npre, (void)pkeys, (void)pvals;
    fprintf(stderr,
            "[rmpi rank %d] PMIx: MPI_Comm_spawn is not supported under PMIx here (RailMPI's PMIx client "
            "has no PMIx_Spawn path); start the job with mpiexec, mpiexec.hydra or srun --mpi=pmi2 to spawn.\n",
            (int)me.rank);
    return -1;
}

int rmpi_pmix_names(const char *cmd, const char *service, const char *port, char *out, size_t len)
{
    pmix_status_t rc;
    if (strcmp(cmd, "publish_name") == 0) {
        pmix_info_t i;
        PMIX_INFO_LOAD(&i, service, port, PMIX_STRING);
        rc = PMIx_Publish(&i, 1);
        PMIX_INFO_DESTRUCT(&i);
    } else if (strcmp(cmd, "unpublish_name") == 0) {
        char *keys[2] = {(char *)service, NULL};
        rc = PMIx_Unpublish(keys, NULL, 0);
    } else {
        pmix_pdata_t d;
        PMIX_PDATA_CONSTRUCT(&d);
        PMIX_LOAD_KEY(d.key, service);
        rc = PMIx_Lookup(&d, 1, NULL, 0);
        if (rc == PMIX_SUCCESS) {
            if (d.value.type != PMIX_STRING || !d.value.data.string || strlen(d.value.data.string) >= len)
                rc = PMIX_ERR_BAD_PARAM;
            else
                strcpy(out, d.value.data.string);
        }
        PMIX_PDATA_DESTRUCT(&d);
    }
    if (rc == PMIX_SUCCESS)
        return 0;
    if (rc == PMIX_ERR_NOT_SUPPORTED || rc == PMIX_ERR_UNREACH) {
        fprintf(stderr, "[rmpi rank %d] PMIx: the %s offers no name service (%s).\n", (int)me.rank, server,
                PMIx_Error_string(rc));
        return -1;
    }
    return 1;
}
