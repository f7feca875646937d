#include "mpiexec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Limits announced by get_maxes: the same as hydra's, so a library that fits under our
 * mpiexec also fits under hydra. */
#define KVSNAME_MAX 256
#define KEYLEN_MAX 64
#define VALLEN_MAX 1024
#define LINE_MAX_BYTES 65536
#define MAX_WORDS 16
#define KVS_BUCKETS 4096

struct kv {
    char *key, *value;
    struct kv *next;
};

static struct kv *kvs[KVS_BUCKETS];

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % KVS_BUCKETS;
}

/* One table for every world: a world's keys are stored as "<world>/<key>". */
static struct kv *kvs_find(int world, const char *k)
{
    char key[KEYLEN_MAX + 16];
    snprintf(key, sizeof key, "%d/%s", world, k);
    for (struct kv *e = kvs[hash(key)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

void mpx_kvs_put(int world, const char *k, const char *value)
{
    char key[KEYLEN_MAX + 16];
    snprintf(key, sizeof key, "%d/%s", world, k);
    struct kv *e = kvs_find(world, k);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e || !(e->key = strdup(key))) {
            perror("mpiexec");
            exit(1);
        }
        unsigned h = hash(key);
        e->next = kvs[h];
        kvs[h] = e;
    }
    free(e->value);
    if (!(e->value = strdup(value))) {
        perror("mpiexec");
        exit(1);
    }
}

void mpx_pmi_init(struct mpx_job *job)
{
    mpx_world_new(job, job->opts->nprocs);
}

void mpx_pmi_free(struct mpx_job *job)
{
    for (int i = 0; i < KVS_BUCKETS; i++) {
        while (kvs[i]) {
            struct kv *e = kvs[i];
            kvs[i] = e->next;
            free(e->key);
            free(e->value);
            free(e);
        }
    }
}

struct mpx_conn *mpx_conn_new(int fd, int rank)
{
    struct mpx_conn *c = calloc(1, sizeof *c);
    if (!c) {
        perror("mpiexec");
        exit(1);
    }
    c->fd = fd;
    c->rank = rank;
    return c;
}

static int reply(struct mpx_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reply(struct mpx_conn *c, const char *fmt, ...)
{
    char buf[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof buf)
        return -1;
    return mpx_write_all(c->fd, buf, (size_t)n);
}

struct words {
    int n;
    char *key[MAX_WORDS], *val[MAX_WORDS];
};

static void split(char *line, struct words *w)
{
    char *save = NULL;
    w->n = 0;
    for (char *t = strtok_r(line, " \t\r", &save); t && w->n < MAX_WORDS; t = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(t, '=');
        if (eq)
            *eq = '\0';
        w->key[w->n] = t;
        w->val[w->n] = eq ? eq + 1 : t + strlen(t);
        w->n++;
    }
}

static const char *get(const struct words *w, const char *key)
{
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->key[i], key) == 0)
            return w->val[i];
    return NULL;
}

static void barrier_release(struct mpx_job *job, struct mpx_world *wd)
{
    wd->barrier_count = 0;
    for (int i = wd->base; i < wd->base + wd->n; i++) {
        struct mpx_conn *c = job->ranks[i].conn;
        if (c && c->in_barrier) {
            c->in_barrier = 0;
            reply(c, "cmd=barrier_out rc=0\n");
        }
    }
}

/* A TCP connection names its rank with initack before anything else. */
static int serve_initack(struct mpx_job *job, struct mpx_conn *c, const struct words *w)
{
    const char *id = get(w, "pmiid");
    char *end = NULL;
    long r = id ? strtol(id, &end, 10) : -1;
    if (!id || *end || r < 0 || r >= job->n || job->ranks[r].local || job->ranks[r].conn) {
        mpx_msg("mpiexec: a PMI connection announced id %s, which is no unconnected remote rank "
                "of this job; closing it.\n", id ? id : "(none)");
        return -1;
    }
    for (int i = 0; i < job->npending; i++) {
        if (job->pending[i] == c) {
            job->pending[i] = job->pending[--job->npending];
            break;
        }
    }
    c->rank = (int)r;
    job->ranks[r].conn = c;
    return reply(c, "cmd=initack\ncmd=set size=%d\ncmd=set rank=%d\ncmd=set debug=0\n",
                 job->worlds[job->ranks[r].world].n, job->ranks[r].wrank);
}

static int serve_line(struct mpx_job *job, struct mpx_conn *c, char *line)
{
    if (c->rank >= 0 && mpx_spawn_line(job, c, line))
        return 0;
    struct words w;
    split(line, &w);
    if (w.n == 0)
        return 0;
    const char *cmd = get(&w, "cmd");
    if (!cmd) {
        mpx_msg("mpiexec: a PMI message without cmd= arrived from %s%d; ignoring it.\n",
                c->rank >= 0 ? "rank " : "connection ", c->rank >= 0 ? c->rank : c->fd);
        return 0;
    }
    if (strcmp(cmd, "initack") == 0)
        return c->rank >= 0 ? reply(c, "cmd=initack\ncmd=set size=%d\ncmd=set rank=%d\ncmd=set debug=0\n",
                                    job->worlds[job->ranks[c->rank].world].n, job->ranks[c->rank].wrank)
                            : serve_initack(job, c, &w);
    if (c->rank < 0) {
        mpx_msg("mpiexec: a PMI connection sent cmd=%s before identifying itself with initack; "
                "closing it.\n", cmd);
        return -1;
    }
    struct mpx_rank *r = &job->ranks[c->rank];
    struct mpx_world *wd = &job->worlds[r->world];
    char who[64];
    mpx_rank_name(job, r, who, sizeof who);

    if (strcmp(cmd, "init") == 0) {
        const char *v = get(&w, "pmi_version");
        if (v && strcmp(v, "1") != 0) {
            mpx_msg("mpiexec: rank %d asked for PMI version %s; this mpiexec serves version 1.\n",
                    c->rank, v);
            return reply(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
        }
        c->inited = r->pmi_inited = 1;
        return reply(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    }
    if (strcmp(cmd, "get_maxes") == 0)
        return reply(c, "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d vallen_max=%d\n", KVSNAME_MAX,
                     KEYLEN_MAX, VALLEN_MAX);
    if (strcmp(cmd, "get_appnum") == 0)
        return reply(c, "cmd=appnum rc=0 appnum=%d\n", r->appnum);
    if (strcmp(cmd, "get_my_kvsname") == 0)
        return reply(c, "cmd=my_kvsname rc=0 kvsname=%s\n", wd->kvsname);
    if (strcmp(cmd, "get_universe_size") == 0)
        return reply(c, "cmd=universe_size rc=0 size=%d\n", job->n);
    if (!strcmp(cmd, "publish_name") || !strcmp(cmd, "unpublish_name") || !strcmp(cmd, "lookup_name")) {
        char out[LINE_MAX_BYTES / 2];
        mpx_names_serve(cmd, get(&w, "service"), get(&w, "port"), out, sizeof out);
        return reply(c, "%s", out);
    }
    if (strcmp(cmd, "put") == 0) {
        const char *kn = get(&w, "kvsname"), *key = get(&w, "key"), *val = get(&w, "value");
        if (!key || !val || !*key)
            return reply(c, "cmd=put_result rc=-1 msg=put_needs_key_and_value\n");
        if (kn && strcmp(kn, wd->kvsname) != 0)
            return reply(c, "cmd=put_result rc=-1 msg=unknown_kvsname\n");
        if (strlen(key) >= KEYLEN_MAX || strlen(val) >= VALLEN_MAX)
            return reply(c, "cmd=put_result rc=-1 msg=key_or_value_too_long\n");
        mpx_kvs_put(r->world, key, val);
        return reply(c, "cmd=put_result rc=0 msg=success\n");
    }
    if (strcmp(cmd, "get") == 0) {
        const char *kn = get(&w, "kvsname"), *key = get(&w, "key");
        if (kn && strcmp(kn, wd->kvsname) != 0)
            return reply(c, "cmd=get_result rc=-1 msg=unknown_kvsname\n");
        struct kv *e = key ? kvs_find(r->world, key) : NULL;
        if (!e)
            return reply(c, "cmd=get_result rc=-1 msg=key_not_found\n");
        return reply(c, "cmd=get_result rc=0 msg=success value=%s\n", e->value);
    }
    if (strcmp(cmd, "barrier_in") == 0) {
        if (!c->in_barrier) {
            c->in_barrier = 1;
            wd->barrier_count++;
        }
        if (wd->barrier_count == wd->n)
            barrier_release(job, wd);
        return 0;
    }
    if (strcmp(cmd, "finalize") == 0) {
        c->finalized = r->pmi_finalized = 1;
        return reply(c, "cmd=finalize_ack rc=0\n");
    }
    if (strcmp(cmd, "abort") == 0) {
        const char *v = get(&w, "exitcode");
        int code = v ? atoi(v) : 1;
        if (!job->ending)
            mpx_msg("mpiexec: %s called abort (exit code %d); ending the job.\n", who, code);
        r->pmi_finalized = 1;
        mpx_fail(job, code);
        return 0;
    }
    mpx_msg("mpiexec: %s sent the unsupported PMI command \"%s\"; answering rc=-1.\n", who, cmd);
    return reply(c, "cmd=%s_result rc=-1 msg=unsupported_command\n", cmd);
}

int mpx_pmi_serve(struct mpx_job *job, struct mpx_conn *c)
{
    int eof = 0;
    for (;;) {
        if (c->cap - c->len < 4096) {
            c->cap = c->cap ? c->cap * 2 : 8192;
            c->buf = realloc(c->buf, c->cap);
            if (!c->buf) {
                perror("mpiexec");
                exit(1);
            }
        }
        ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
        if (n > 0) {
            c->len += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        eof = 1;
        break;
    }
    /* PMI-2 frames start with a 6-character length field and carry no newline. */
    if (!c->inited && c->len >= 6 && (c->buf[0] == ' ' || (c->buf[0] >= '0' && c->buf[0] <= '9'))) {
        mpx_msg("mpiexec: %s%d speaks PMI-2, which this mpiexec does not serve; closing it.\n",
                c->rank >= 0 ? "rank " : "connection ", c->rank >= 0 ? c->rank : c->fd);
        return -1;
    }
    size_t start = 0;
    for (;;) {
        char *nl = memchr(c->buf + start, '\n', c->len - start);
        if (!nl)
            break;
        *nl = '\0';
        int rc = serve_line(job, c, c->buf + start);
        start = (size_t)(nl - c->buf) + 1;
        if (rc < 0) {
            return -1;
        }
    }
    memmove(c->buf, c->buf + start, c->len - start);
    c->len -= start;
    if (c->len >= LINE_MAX_BYTES) {
        mpx_msg("mpiexec: %s%d sent a PMI command longer than %d bytes; closing it.\n",
                c->rank >= 0 ? "rank " : "connection ", c->rank >= 0 ? c->rank : c->fd, LINE_MAX_BYTES);
        return -1;
    }
    return eof ? -1 : 0;
}

void mpx_pmi_close(struct mpx_job *job, struct mpx_conn *c)
{
    if (c->rank >= 0) {
        struct mpx_rank *r = &job->ranks[c->rank];
        if (c->in_barrier)
            job->worlds[r->world].barrier_count--;
        if (r->conn == c)
            r->conn = NULL;
        if (r->pmi_inited && !r->pmi_finalized && !r->pmi_lost) {
            r->pmi_lost = 1;
            r->pmi_lost_at = mpx_now_ms();
        }
    } else {
        for (int i = 0; i < job->npending; i++) {
            if (job->pending[i] == c) {
                job->pending[i] = job->pending[--job->npending];
                break;
            }
        }
    }
    close(c->fd);
    free(c->buf);
    mpx_spawn_free(c->spawn);
    free(c);
}

void mpx_pmi_accept(struct mpx_job *job)
{
    for (;;) {
        int fd = accept4(job->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return;
        }
        job->pending = realloc(job->pending, (size_t)(job->npending + 1) * sizeof *job->pending);
        if (!job->pending) {
            perror("mpiexec");
            exit(1);
        }
        job->pending[job->npending++] = mpx_conn_new(fd, -1);
    }
}
