/* Worlds and PMI spawn (hydra's multi-line "mcmd=spawn ... endcmd" commands, one per
 * command of MPI_Comm_spawn_multiple, answered by "cmd=spawn_result rc=N" after the last),
 * and the name service of MPI_Publish_name / MPI_Lookup_name. */
#include "mpiexec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPAWN_MAX_CMDS 64

struct spawn_cmd {
    int nprocs;
    char *exec, *wdir, *host;
    char **argv;          /* exec, args..., NULL */
    int argc;
};

struct mpx_spawn {
    int total, sofar;     /* totspawns, commands complete so far */
    struct spawn_cmd cmd[SPAWN_MAX_CMDS];
    int ncmd;
    char **pkeys, **pvals;  /* preput pairs (the same on every command) */
    int npre;
    int bad;              /* a malformed line was seen: answer rc=-1 */
};

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        perror("mpiexec");
        exit(1);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        perror("mpiexec");
        exit(1);
    }
    return d;
}

const char *mpx_rank_name(const struct mpx_job *job, const struct mpx_rank *r, char *buf, size_t len)
{
    if (r->world == 0)
        snprintf(buf, len, "rank %d", r->wrank);
    else
        snprintf(buf, len, "rank %d of spawned world %d", r->wrank, r->world);
    return buf;
}

int mpx_world_new(struct mpx_job *job, int n)
{
    job->worlds = xrealloc(job->worlds, (size_t)(job->nworlds + 1) * sizeof *job->worlds);
    struct mpx_world *wd = &job->worlds[job->nworlds];
    memset(wd, 0, sizeof *wd);
    /* The name is also the world's identity for dynamic processes: unique per host and
     * mpiexec, and per world. */
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(wd->kvsname, sizeof wd->kvsname, "kvs_%.64s_%d_%d", host, (int)getpid(), job->nworlds);
    wd->base = job->nworlds ? job->n : 0;   /* world 0's ranks are allocated by main */
    wd->n = n;
    if (job->nworlds > 0) {
        job->ranks = xrealloc(job->ranks, (size_t)(job->n + n) * sizeof *job->ranks);
        memset(job->ranks + job->n, 0, (size_t)n * sizeof *job->ranks);
        job->n += n;
    }
    for (int i = 0; i < n; i++) {
        struct mpx_rank *r = &job->ranks[wd->base + i];
        r->rank = wd->base + i;
        r->world = job->nworlds;
        r->wrank = i;
        r->out.fd = r->err.fd = -1;
    }
    return job->nworlds++;
}

void mpx_spawn_free(struct mpx_spawn *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->ncmd; i++) {
        struct spawn_cmd *c = &s->cmd[i];
        free(c->exec);
        free(c->wdir);
        free(c->host);
        for (int a = 0; a < c->argc; a++)
            free(c->argv[a]);
        free(c->argv);
    }
    for (int k = 0; k < s->npre; k++) {
        free(s->pkeys[k]);
        free(s->pvals[k]);
    }
    free(s->pkeys);
    free(s->pvals);
    free(s);
}

static void answer(struct mpx_conn *c, int rc, const char *msg)
{
    char buf[256];
    int n = snprintf(buf, sizeof buf, "cmd=spawn_result rc=%d%s%s\n", rc, msg ? " msg=" : "", msg ? msg : "");
    mpx_write_all(c->fd, buf, (size_t)n);
}

/* Start the collected commands as one world. */
static int do_spawn(struct mpx_job *job, struct mpx_spawn *s)
{
    int n = 0;
    for (int i = 0; i < s->ncmd; i++) {
        if (s->cmd[i].nprocs <= 0 || !s->cmd[i].exec)
            return -1;
        n += s->cmd[i].nprocs;
    }
    int w = mpx_world_new(job, n);
    struct mpx_world *wd = &job->worlds[w];
    for (int k = 0; k < s->npre; k++)
        mpx_kvs_put(w, s->pkeys[k], s->pvals[k]);
    int at = wd->base;
    for (int i = 0; i < s->ncmd; i++) {
        struct spawn_cmd *c = &s->cmd[i];
        c->argv = xrealloc(c->argv, (size_t)(c->argc + 2) * sizeof *c->argv);
        memmove(c->argv + 1, c->argv, (size_t)c->argc * sizeof *c->argv);
        c->argv[0] = c->exec;
        c->argv[c->argc + 1] = NULL;
        c->exec = NULL;   /* owned by argv now */
        c->argc++;
        for (int k = 0; k < c->nprocs; k++, at++) {
            struct mpx_rank *r = &job->ranks[at];
            r->appnum = i;
            r->argv = c->argv;
            r->wdir = c->wdir ? c->wdir : job->opts->wdir;
            r->host = c->host ? c->host : job->opts->nhosts ? mpx_place(job->opts, at) : job->ranks[0].host;
            r->local = mpx_host_is_local(r->host);
            if (!r->local && job->listen_fd < 0 &&
                (mpx_pick_pmi_addr(job->opts, job->pmi_addr, sizeof job->pmi_addr) < 0 || mpx_listen(job) < 0))
                return -1;
        }
    }
    /* The commands' strings now belong to the ranks for the rest of the job. */
    s->ncmd = 0;
    for (int i = wd->base; i < wd->base + wd->n; i++)
        if (mpx_launch(job, &job->ranks[i]) < 0) {
            mpx_fail(job, 1);
            return -1;
        }
    if (job->opts->verbose)
        fprintf(stderr, "mpiexec: spawned world %d: %d process(es) of %s\n", w, n, job->ranks[wd->base].argv[0]);
    return 0;
}

static int num(const char *v) { return v ? atoi(v) : -1; }

int mpx_spawn_line(struct mpx_job *job, struct mpx_conn *c, const char *line)
{
    struct mpx_spawn *s = c->spawn;
    if (!strcmp(line, "mcmd=spawn")) {
        if (!s)
            s = c->spawn = calloc(1, sizeof *s);
        if (!s) {
            perror("mpiexec");
            exit(1);
        }
        if (s->ncmd == SPAWN_MAX_CMDS)
            s->bad = 1;
        else
            memset(&s->cmd[s->ncmd++], 0, sizeof s->cmd[0]);
        return 1;
    }
    if (!s)
        return 0;
    struct spawn_cmd *cur = s->ncmd ? &s->cmd[s->ncmd - 1] : NULL;
    if (!strcmp(line, "endcmd")) {
        if (++s->sofar < s->total && !s->bad)
            return 1;
        int rc = s->bad || s->sofar != s->total ? -1 : do_spawn(job, s);
        mpx_spawn_free(s);
        c->spawn = NULL;
        answer(c, rc, rc ? "spawn_failed" : NULL);
        return 1;
    }
    const char *eq = strchr(line, '=');
    if (!eq || !cur) {
        s->bad = 1;
        return 1;
    }
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)(eq - line < 63 ? eq - line : 63), line);
    const char *v = eq + 1;
    if (!strcmp(key, "nprocs"))
        cur->nprocs = num(v);
    else if (!strcmp(key, "execname"))
        cur->exec = xstrdup(v);
    else if (!strcmp(key, "totspawns"))
        s->total = num(v);
    else if (!strcmp(key, "argcnt"))
        cur->argv = xrealloc(cur->argv, (size_t)(num(v) > 0 ? num(v) : 1) * sizeof *cur->argv);
    else if (!strncmp(key, "arg", 3) && key[3] >= '1' && key[3] <= '9')
        cur->argv[cur->argc++] = xstrdup(v);
    else if (!strcmp(key, "preput_num") && s->ncmd == 1) {
        s->pkeys = calloc((size_t)(num(v) > 0 ? num(v) : 1), sizeof *s->pkeys);
        s->pvals = calloc((size_t)(num(v) > 0 ? num(v) : 1), sizeof *s->pvals);
    } else if (!strncmp(key, "preput_key_", 11) && s->ncmd == 1)
        s->pkeys[s->npre] = xstrdup(v);
    else if (!strncmp(key, "preput_val_", 11) && s->ncmd == 1 && s->pkeys && s->pkeys[s->npre])
        s->pvals[s->npre++] = xstrdup(v);
    else if (!strncmp(key, "info_key_", 9)) {
        free(cur->host);   /* remember which key the next value is for */
        cur->host = xstrdup(v);
    } else if (!strncmp(key, "info_val_", 9) && cur->host) {
        char *k = cur->host;
        cur->host = NULL;
        if (!strcmp(k, "wdir")) {
            free(cur->wdir);
            cur->wdir = xstrdup(v);
        } else if (!strcmp(k, "host")) {
            cur->host = xstrdup(v);
        }
        free(k);
    }
    /* spawnssofar, info_num, preput of later commands: nothing to keep */
    return 1;
}

/* ---- name service ---- */

struct name {
    char *service, *port;
    struct name *next;
};
static struct name *names;

void mpx_names_serve(const char *cmd, const char *service, const char *port, char *out, size_t len)
{
    struct name **pp = &names;
    while (service && *pp && strcmp((*pp)->service, service))
        pp = &(*pp)->next;
    int found = service && *pp;
    if (!strcmp(cmd, "publish_name")) {
        if (!service || !port || found) {
            snprintf(out, len, "cmd=publish_result rc=-1 info=%s\n", found ? "already_published" : "bad_request");
            return;
        }
        struct name *nm = calloc(1, sizeof *nm);
        if (!nm) {
            perror("mpiexec");
            exit(1);
        }
        nm->service = xstrdup(service);
        nm->port = xstrdup(port);
        nm->next = names;
        names = nm;
        snprintf(out, len, "cmd=publish_result rc=0 info=ok\n");
    } else if (!strcmp(cmd, "unpublish_name")) {
        if (found) {
            struct name *nm = *pp;
            *pp = nm->next;
            free(nm->service);
            free(nm->port);
            free(nm);
        }
        snprintf(out, len, "cmd=unpublish_result rc=%d\n", found ? 0 : -1);
    } else if (found) {
        snprintf(out, len, "cmd=lookup_result rc=0 port=%s\n", (*pp)->port);
    } else {
        snprintf(out, len, "cmd=lookup_result rc=-1 info=not_found\n");
    }
}

void mpx_names_free(void)
{
    while (names) {
        struct name *nm = names;
        names = nm->next;
        free(nm->service);
        free(nm->port);
        free(nm);
    }
}
