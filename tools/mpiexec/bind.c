#include "mpiexec.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Whether the kernel accepts every set: mpiexec is single-threaded, so it can try each
 * set on itself and restore its mask. A cgroup that forbids a core, or a CPU that went
 * offline, is found here once instead of in every child. */
static int sets_accepted(const struct mpx_job *job, const cpu_set_t *orig, int *err)
{
    int ok = 1;
    for (int i = 0; i < job->n && ok; i++) {
        const struct mpx_rank *r = &job->ranks[i];
        if (r->bound && sched_setaffinity(0, sizeof r->cpus, &r->cpus) < 0) {
            *err = errno;
            ok = 0;
        }
    }
    sched_setaffinity(0, sizeof *orig, orig);
    return ok;
}

void mpx_bind_plan(struct mpx_job *job)
{
    const struct mpx_opts *o = job->opts;
    rmpi_cpubind_topo_t topo;
    int have_topo = 0, any_local = 0;
    for (int i = 0; i < job->n; i++)
        any_local |= job->ranks[i].local;
    if (any_local && (o->bind != RMPI_BIND_NONE || o->report_bindings)) {
        have_topo = rmpi_cpubind_topo_load(&topo, 1) == 0;
        if (!have_topo && o->bind != RMPI_BIND_AUTO && o->bind != RMPI_BIND_NONE)
            mpx_msg("mpiexec: cannot read this host's cores (%s); --bind-to %s is ignored, ranks run "
                    "unbound.\n",
                    strerror(errno), rmpi_cpubind_bind_name(o->bind));
    }
    for (int i = 0; i < job->n; i++) {
        struct mpx_rank *r = &job->ranks[i];
        /* This rank's index among the ranks of its host, and how many share the host. */
        int index = 0, count = 0;
        for (int j = 0; j < job->n; j++) {
            if (strcmp(job->ranks[j].host, r->host) == 0) {
                index += j < i;
                count++;
            }
        }
        if (r->local) {
            r->bound = have_topo ? rmpi_cpubind_plan(&topo, o->bind, o->map, index, count, &r->cpus) : 0;
            if (!have_topo)
                sched_getaffinity(0, sizeof r->cpus, &r->cpus);
        } else {
            snprintf(r->bind_env, sizeof r->bind_env, "%s:%s:%d:%d%s", rmpi_cpubind_bind_name(o->bind),
                     rmpi_cpubind_map_name(o->map), index, count, o->report_bindings ? ":report" : "");
        }
    }
    cpu_set_t orig;
    int err = 0;
    if (have_topo && sched_getaffinity(0, sizeof orig, &orig) == 0 && !sets_accepted(job, &orig, &err)) {
        mpx_msg("mpiexec: this host refuses to bind a rank to its cores (%s); every local rank runs "
                "unbound.\n",
                strerror(err));
        for (int i = 0; i < job->n; i++) {
            job->ranks[i].bound = 0;
            job->ranks[i].cpus = orig;
        }
    }
    for (int i = 0; i < job->n && o->report_bindings && have_topo; i++) {
        const struct mpx_rank *r = &job->ranks[i];
        char what[2048];
        if (!r->local)
            continue;
        rmpi_cpubind_describe(&topo, r->bound, &r->cpus, what, sizeof what);
        mpx_msg("report-bindings: rank %d on %s %s\n", r->rank, r->host, what);
    }
    if (have_topo)
        rmpi_cpubind_topo_free(&topo);
}

void mpx_bind_apply(const struct mpx_rank *r)
{
    if (r->bound && sched_setaffinity(0, sizeof r->cpus, &r->cpus) < 0) {
        char msg[256];
        int n = snprintf(msg, sizeof msg, "mpiexec: rank %d could not be bound (%s); it runs unbound.\n", r->rank,
                         strerror(errno));
        if (n > 0)
            mpx_write_all(2, msg, n < (int)sizeof msg ? (size_t)n : sizeof msg - 1);
    }
}
