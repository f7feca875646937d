/* Worlds and PMI spawn (hydra's multi-line "mcmd=spawn ... endcmd" commands, one per
 * command of MPI_Comm_spawn_multiple, answered by "cmd=spawn_result rc=N" after the last),
 * and the name service of MPI_Publish_name / MPI_Lookup_name. */
#include "mpiexec.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bounds of one spawn request: every count a client sends is checked against them before
 * anything is allocated from it. */
#define SPAWN_MAX_CMDS 64
#define SPAWN_MAX_ARGS 1024
#define SPAWN_MAX_PAIRS 64        /* preput and info pairs per command */
#define SPAWN_MAX_PROCS 4096      /* processes of one job, every world together */
#define SPAWN_MAX_BYTES (1 << 20) /* text of one request */
#define SPAWN_MAX_NAMES 4096      /* published names */

struct spawn_cmd {
    int nprocs;
    char *exec, *wdir, *host;
    char **argv;      /* args... (exec is put in front by do_spawn) */
    int argcnt, argc; /* announced, received */
    int npre, ninfo;  /* announced preput_num, info_num; -1 before */
    int pre_seen, info_seen;
    int pre_open;   /* preput key pre_seen arrived, its value not yet */
    char *info_key; /* the key whose value comes next */
};

struct mpx_spawn {
    int total, sofar; /* totspawns, commands complete so far */
    struct spawn_cmd cmd[SPAWN_MAX_CMDS];
    int ncmd;
    char **pkeys, **pvals; /* preput pairs of the first command (the same on every one) */
    int npre, pcap;        /* pairs complete, slots allocated */
    size_t bytes;
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
    wd->base = job->nworlds ? job->n : 0; /* world 0's ranks are allocated by main */
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

void mpx_spawn_release(struct mpx_job *job)
{
    for (int i = 0; i < job->nowned; i++)
        free(job->owned[i]);
    free(job->owned);
    job->owned = NULL;
    job->nowned = 0;
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
        free(c->info_key);
        for (int a = 0; a < c->argc; a++)
            free(c->argv[a]);
        free(c->argv);
    }
    for (int k = 0; k < s->pcap; k++) {
        free(s->pkeys[k]);
        free(s->pvals[k]);
    }
    free(s->pkeys);
    free(s->pvals);
    free(s);
}

/* Start the collected commands as one world. */
static int do_spawn(struct mpx_job *job, struct mpx_spawn *s)
{
    int n = 0;
    for (int i = 0; i < s->ncmd; i++)
        n += s->cmd[i].nprocs;
    if (job->n + n > SPAWN_MAX_PROCS) {
        mpx_msg("mpiexec: a spawn of %d processes would make the job larger than %d processes; refusing it.\n", n,
                SPAWN_MAX_PROCS);
        return -1;
    }
    int w = mpx_world_new(job, n);
    struct mpx_world *wd = &job->worlds[w];
    for (int k = 0; k < s->npre; k++)
        mpx_kvs_put(w, s->pkeys[k], s->pvals[k]);
    /* The commands' strings belong to the ranks for the rest of the job. */
    for (int i = 0; i < s->ncmd; i++) {
        struct spawn_cmd *c = &s->cmd[i];
        c->argv = xrealloc(c->argv, (size_t)(c->argc + 2) * sizeof *c->argv);
        memmove(c->argv + 1, c->argv, (size_t)c->argc * sizeof *c->argv);
        c->argv[0] = c->exec;
        c->argv[c->argc + 1] = NULL;
        c->exec = NULL; /* owned by argv now */
        c->argc++;
        job->owned = xrealloc(job->owned, (size_t)(job->nowned + c->argc + 3) * sizeof *job->owned);
        for (int a = 0; a < c->argc; a++)
            job->owned[job->nowned++] = c->argv[a];
        job->owned[job->nowned++] = c->argv;
        job->owned[job->nowned++] = c->wdir;
        job->owned[job->nowned++] = c->host;
    }
    int ncmd = s->ncmd;
    s->ncmd = 0; /* mpx_spawn_free must not free them */
    int at = wd->base;
    for (int i = 0; i < ncmd; i++) {
        struct spawn_cmd *c = &s->cmd[i];
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
    for (int i = wd->base; i < wd->base + wd->n; i++)
        if (mpx_launch(job, &job->ranks[i]) < 0) {
            mpx_fail(job, 1);
            return -1;
        }
    if (job->opts->verbose)
        fprintf(stderr, "mpiexec: spawned world %d: %d process(es) of %s\n", w, n, job->ranks[wd->base].argv[0]);
    return 0;
}

/* v as an integer in [lo, hi], else -1 (lo >= 0). */
static int bounded(const char *v, int lo, int hi)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n < lo || n > hi)
        return -1;
    return (int)n;
}

/* The index of "<prefix><N>" keys, which must arrive in order: N == want. */
static int in_order(const char *key, const char *prefix, int want)
{
    size_t pl = strlen(prefix);
    return strncmp(key, prefix, pl) == 0 && bounded(key + pl, 0, SPAWN_MAX_ARGS) == want;
}

static int spawn_key(struct mpx_spawn *s, struct spawn_cmd *cur, const char *key, const char *v)
{
    if (!strcmp(key, "nprocs"))
        return (cur->nprocs = bounded(v, 1, SPAWN_MAX_PROCS)) < 0 ? -1 : 0;
    if (!strcmp(key, "execname")) {
        if (cur->exec || !*v)
            return -1;
        cur->exec = xstrdup(v);
        return 0;
    }
    if (!strcmp(key, "totspawns")) {
        int t = bounded(v, 1, SPAWN_MAX_CMDS);
        if (t < 0 || (s->total && t != s->total))
            return -1;
        s->total = t;
        return 0;
    }
    if (!strcmp(key, "spawnssofar"))
        return bounded(v, 1, SPAWN_MAX_CMDS) < 0 ? -1 : 0;
    if (!strcmp(key, "argcnt")) {
        if (cur->argv || (cur->argcnt = bounded(v, 0, SPAWN_MAX_ARGS)) < 0)
            return -1;
        cur->argv = xrealloc(NULL, (size_t)(cur->argcnt + 2) * sizeof *cur->argv);
        return 0;
    }
    if (!strncmp(key, "arg", 3)) {
        if (!cur->argv || cur->argc >= cur->argcnt || !in_order(key, "arg", cur->argc + 1))
            return -1;
        cur->argv[cur->argc++] = xstrdup(v);
        return 0;
    }
    if (!strcmp(key, "preput_num")) {
        if (cur->npre >= 0 || (cur->npre = bounded(v, 0, SPAWN_MAX_PAIRS)) < 0)
            return -1;
        if (s->ncmd == 1) {
            s->pcap = cur->npre + 1;
            s->pkeys = calloc((size_t)s->pcap, sizeof *s->pkeys);
            s->pvals = calloc((size_t)s->pcap, sizeof *s->pvals);
            if (!s->pkeys || !s->pvals) {
                perror("mpiexec");
                exit(1);
            }
        }
        return 0;
    }
    /* key K then value K, K counting up from 0, at most the announced number */
    if (!strncmp(key, "preput_key_", 11)) {
        if (cur->pre_open || cur->pre_seen >= cur->npre || !in_order(key, "preput_key_", cur->pre_seen) || !*v)
            return -1;
        cur->pre_open = 1;
        if (s->ncmd == 1)
            s->pkeys[cur->pre_seen] = xstrdup(v);
        return 0;
    }
    if (!strncmp(key, "preput_val_", 11)) {
        if (!cur->pre_open || !in_order(key, "preput_val_", cur->pre_seen))
            return -1;
        cur->pre_open = 0;
        if (s->ncmd == 1)
            s->pvals[s->npre++] = xstrdup(v);
        cur->pre_seen++;
        return 0;
    }
    if (!strcmp(key, "info_num"))
        return cur->ninfo >= 0 || (cur->ninfo = bounded(v, 0, SPAWN_MAX_PAIRS)) < 0 ? -1 : 0;
    if (!strncmp(key, "info_key_", 9)) {
        if (cur->info_key || cur->info_seen >= cur->ninfo || !in_order(key, "info_key_", cur->info_seen))
            return -1;
        cur->info_key = xstrdup(v);
        return 0;
    }
    if (!strncmp(key, "info_val_", 9)) {
        if (!cur->info_key || !in_order(key, "info_val_", cur->info_seen))
            return -1;
        char **slot = !strcmp(cur->info_key, "wdir") ? &cur->wdir : !strcmp(cur->info_key, "host") ? &cur->host : NULL;
        if (slot) {
            free(*slot);
            *slot = xstrdup(v);
        }
        free(cur->info_key);
        cur->info_key = NULL;
        cur->info_seen++;
        return 0;
    }
    return 0; /* other keys carry nothing mpiexec uses */
}

/* The command is complete and consistent: everything announced has arrived. */
static int cmd_complete(const struct spawn_cmd *c)
{
    return c->nprocs > 0 && c->exec && c->argc == c->argcnt && c->pre_seen == RMPI_MAX(c->npre, 0) && !c->pre_open &&
           c->info_seen == RMPI_MAX(c->ninfo, 0) && !c->info_key;
}

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
        if (s->ncmd == SPAWN_MAX_CMDS || (s->total && s->ncmd >= s->total))
            return mpx_pmi_refuse(c, "spawn_too_many_commands",
                                  "its spawn holds more commands than it "
                                  "announced or than %d",
                                  SPAWN_MAX_CMDS);
        if (s->sofar < s->ncmd) /* the last one never ended: it would be spawned half made */
            return mpx_pmi_refuse(c, "spawn_unended", "its spawn command %d has no endcmd before the next", s->ncmd);
        struct spawn_cmd *cur = &s->cmd[s->ncmd++];
        memset(cur, 0, sizeof *cur);
        cur->npre = cur->ninfo = -1;
        return 1;
    }
    if (!s)
        return 0;
    struct spawn_cmd *cur = &s->cmd[s->ncmd - 1];
    s->bytes += strlen(line) + 1;
    if (s->bytes > SPAWN_MAX_BYTES)
        return mpx_pmi_refuse(c, "spawn_too_long", "its spawn request is longer than %d bytes", SPAWN_MAX_BYTES);
    /* after a command's endcmd only the next mcmd=spawn: a key there would change a command
     * already checked complete (an info pair announced after it, never answered, was spawned
     * with it and its key leaked) */
    if (s->sofar >= s->ncmd)
        return mpx_pmi_refuse(c, "spawn_after_endcmd",
                              "its spawn command %d has \"%.40s\" after its endcmd, before the next mcmd=spawn",
                              s->ncmd, line);
    if (!strcmp(line, "endcmd")) {
        if (!cmd_complete(cur) || !s->total)
            return mpx_pmi_refuse(c, "spawn_incomplete",
                                  "its spawn command %d lacks nprocs, execname, "
                                  "totspawns or some announced arguments, preput or info pairs",
                                  s->ncmd);
        if (++s->sofar < s->total)
            return 1;
        int rc = do_spawn(job, s);
        mpx_spawn_free(s);
        c->spawn = NULL;
        mpx_pmi_reply(c, "cmd=spawn_result rc=%d%s\n", rc, rc ? " msg=spawn_failed" : "");
        return 1;
    }
    const char *eq = strchr(line, '=');
    char key[64];
    if (!eq || eq - line >= (ptrdiff_t)sizeof key)
        return mpx_pmi_refuse(c, "spawn_malformed",
                              "its spawn command holds a line that is no key=value: "
                              "\"%.40s\"",
                              line);
    snprintf(key, sizeof key, "%.*s", (int)(eq - line), line);
    if (spawn_key(s, cur, key, eq + 1) < 0)
        return mpx_pmi_refuse(c, "spawn_malformed",
                              "its spawn command has a bad, repeated, out-of-order or "
                              "unannounced %s=\"%.40s\"",
                              key, eq + 1);
    return 1;
}

/* ---- name service ---- */

struct name {
    char *service, *port;
    struct name *next;
};
static struct name *names;
static int nnames;

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
        if (nnames >= SPAWN_MAX_NAMES) {
            snprintf(out, len, "cmd=publish_result rc=-1 info=too_many_names\n");
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
        nnames++;
        snprintf(out, len, "cmd=publish_result rc=0 info=ok\n");
    } else if (!strcmp(cmd, "unpublish_name")) {
        if (found) {
            struct name *nm = *pp;
            *pp = nm->next;
            free(nm->service);
            free(nm->port);
            free(nm);
            nnames--;
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
    nnames = 0;
}
