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

void mpx_pmi_init(struct mpx_job *job) { mpx_world_new(job, job->opts->nprocs); }

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
    c->claim = -1;
    return c;
}

int mpx_pmi_flush(struct mpx_conn *c)
{
    size_t done = 0;
    while (c->fd >= 0 && done < c->olen) {
        ssize_t n = send(c->fd, c->out + done, c->olen - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == ENOTSOCK)
            n = write(c->fd, c->out + done, c->olen - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            c->broken = 1;
            return -1;
        }
        done += (size_t)n;
    }
    memmove(c->out, c->out + done, c->olen - done);
    c->olen -= done;
    return 0;
}

int mpx_pmi_reply(struct mpx_conn *c, const char *fmt, ...)
{
    char buf[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof buf || c->broken)
        return -1;
    if (c->olen + (size_t)n > MPX_OUT_MAX) {
        if (c->rank >= 0)
            mpx_msg("mpiexec: rank %d does not read its PMI replies (%zu bytes waiting); closing its "
                    "connection.\n",
                    c->rank, c->olen);
        c->broken = 1;
        return -1;
    }
    if (c->olen + (size_t)n > c->ocap) {
        size_t cap = c->ocap ? c->ocap : 4096;
        while (cap < c->olen + (size_t)n)
            cap *= 2;
        c->out = realloc(c->out, cap);
        if (!c->out) {
            perror("mpiexec");
            exit(1);
        }
        c->ocap = cap;
    }
    memcpy(c->out + c->olen, buf, (size_t)n);
    c->olen += (size_t)n;
    return mpx_pmi_flush(c);
}

#define reply mpx_pmi_reply
#define refuse mpx_pmi_refuse

int mpx_pmi_refuse(struct mpx_conn *c, const char *wire_msg, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->rank >= 0)
        mpx_msg("mpiexec: rank %d: %s; closing its PMI connection.\n", c->rank, buf);
    else
        mpx_msg("mpiexec: a PMI connection (fd %d): %s; closing it.\n", c->fd, buf);
    reply(c, "cmd=error rc=-1 msg=%s\n", wire_msg);
    return -1;
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

static void pending_remove(struct mpx_job *job, struct mpx_conn *c)
{
    for (int i = 0; i < job->npending; i++) {
        if (job->pending[i] == c) {
            job->pending[i] = job->pending[--job->npending];
            return;
        }
    }
}

static int initack_reply(struct mpx_job *job, struct mpx_conn *c)
{
    const struct mpx_rank *r = &job->ranks[c->rank];
    return reply(c, "cmd=initack\ncmd=set size=%d\ncmd=set rank=%d\ncmd=set debug=0\n", job->worlds[r->world].n,
                 r->wrank);
}

/* A TCP connection names its rank with initack, is challenged with a fresh nonce and must
 * answer with the MAC of nonce and pmiid under the job key (docs/wire/pmi.md) before it is
 * served anything else; the first to prove a rank's id owns it for the rest of the job. */
static int serve_unauthenticated(struct mpx_job *job, struct mpx_conn *c, const char *cmd, const rmpi_pmi_words_t *w)
{
    if (strcmp(cmd, "initack") == 0 && c->claim < 0) {
        const char *id = rmpi_pmi_word(w, "pmiid");
        char *end = NULL;
        long r = id && *id ? strtol(id, &end, 10) : -1;
        if (!end || *end || r < 0 || r >= job->n || job->ranks[r].local || job->ranks[r].pmi_claimed)
            return refuse(c, "unknown_or_taken_pmiid",
                          "it announced id %.20s, which is no unconnected remote rank of this job", id ? id : "(none)");
        char hex[2 * RMPI_AUTH_NONCE_BYTES + 1];
        if (rmpi_auth_random(c->nonce, sizeof c->nonce) < 0)
            return refuse(c, "no_random_bytes", "getrandom failed: %s", strerror(errno));
        rmpi_auth_hex(c->nonce, sizeof c->nonce, hex);
        c->claim = (int)r;
        return reply(c, "cmd=challenge version=1 nonce=%s\n", hex);
    }
    if (strcmp(cmd, "auth") == 0 && c->claim >= 0) {
        uint8_t mac[RMPI_AUTH_MAC_BYTES];
        struct mpx_rank *r = &job->ranks[c->claim];
        if (rmpi_auth_unhex(rmpi_pmi_word(w, "mac"), mac, sizeof mac) < 0 ||
            rmpi_auth_pmi_verify(job->key, c->nonce, c->claim, mac) < 0)
            return refuse(c, "authentication_failed", "it claimed rank %d but does not know the job key", c->claim);
        if (r->pmi_claimed)
            return refuse(c, "pmiid_taken", "rank %d is already connected", c->claim);
        pending_remove(job, c);
        c->rank = c->claim;
        r->conn = c;
        r->pmi_claimed = 1;
        return initack_reply(job, c);
    }
    return refuse(c, "authenticate_first", "it sent cmd=%.40s before proving the job key (initack, auth)", cmd);
}

int mpx_pmi_line(struct mpx_job *job, struct mpx_conn *c, char *line)
{
    if (c->rank >= 0) {
        int rc = mpx_spawn_line(job, c, line);
        if (rc)
            return rc < 0 ? -1 : 0;
    }
    rmpi_pmi_words_t w;
    if (rmpi_pmi_split(line, &w) < 0)
        return refuse(c, "too_many_words", "it sent a line of more than %d words", RMPI_PMI_MAX_WORDS);
    if (w.n == 0)
        return 0;
    const char *cmd = rmpi_pmi_word(&w, "cmd");
    if (!cmd)
        return refuse(c, "no_cmd", "it sent a line without cmd=");
    if (c->rank < 0)
        return serve_unauthenticated(job, c, cmd, &w);
    if (strcmp(cmd, "initack") == 0)
        return initack_reply(job, c);
    struct mpx_rank *r = &job->ranks[c->rank];
    struct mpx_world *wd = &job->worlds[r->world];
    char who[64];
    mpx_rank_name(job, r, who, sizeof who);

    if (strcmp(cmd, "init") == 0) {
        const char *v = rmpi_pmi_word(&w, "pmi_version");
        if (v && strcmp(v, "1") != 0) {
            mpx_msg("mpiexec: rank %d asked for PMI version %s; this mpiexec serves version 1.\n", c->rank, v);
            return reply(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
        }
        c->inited = r->pmi_inited = 1;
        return reply(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    }
    if (strcmp(cmd, "get_maxes") == 0)
        return reply(c, "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d vallen_max=%d\n", KVSNAME_MAX, KEYLEN_MAX,
                     VALLEN_MAX);
    if (strcmp(cmd, "get_appnum") == 0)
        return reply(c, "cmd=appnum rc=0 appnum=%d\n", r->appnum);
    if (strcmp(cmd, "get_my_kvsname") == 0)
        return reply(c, "cmd=my_kvsname rc=0 kvsname=%s\n", wd->kvsname);
    if (strcmp(cmd, "get_universe_size") == 0)
        return reply(c, "cmd=universe_size rc=0 size=%d\n", job->n);
    if (!strcmp(cmd, "publish_name") || !strcmp(cmd, "unpublish_name") || !strcmp(cmd, "lookup_name")) {
        char out[LINE_MAX_BYTES / 2];
        mpx_names_serve(cmd, rmpi_pmi_word(&w, "service"), rmpi_pmi_word(&w, "port"), out, sizeof out);
        return reply(c, "%s", out);
    }
    if (strcmp(cmd, "put") == 0) {
        const char *kn = rmpi_pmi_word(&w, "kvsname"), *key = rmpi_pmi_word(&w, "key");
        const char *val = rmpi_pmi_word(&w, "value");
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
        const char *kn = rmpi_pmi_word(&w, "kvsname"), *key = rmpi_pmi_word(&w, "key");
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
        const char *v = rmpi_pmi_word(&w, "exitcode");
        int code = v ? atoi(v) : 1;
        r->pmi_finalized = 1;
        mpx_abort(job, r, code);
        return 0;
    }
    mpx_msg("mpiexec: %s sent the unsupported PMI command \"%s\"; answering rc=-1.\n", who, cmd);
    return reply(c, "cmd=%s_result rc=-1 msg=unsupported_command\n", cmd);
}

int mpx_pmi_feed(struct mpx_job *job, struct mpx_conn *c, const char *data, size_t len)
{
    while (len > 0) {
        /* Never hold more than one line's worth: a client cannot make mpiexec grow. */
        size_t take = RMPI_MIN(len, (size_t)LINE_MAX_BYTES + 1 - c->len);
        if (c->cap < LINE_MAX_BYTES + 1) {
            c->cap = LINE_MAX_BYTES + 1;
            c->buf = realloc(c->buf, c->cap);
            if (!c->buf) {
                perror("mpiexec");
                exit(1);
            }
        }
        memcpy(c->buf + c->len, data, take);
        c->len += take;
        data += take;
        len -= take;
        /* PMI-2 frames start with a 6-character length field and carry no newline. */
        if (!c->inited && c->len >= 6 && (c->buf[0] == ' ' || (c->buf[0] >= '0' && c->buf[0] <= '9')))
            return refuse(c, "pmi2_not_served", "it speaks PMI-2, which this mpiexec does not serve");
        size_t start = 0;
        char *nl;
        while ((nl = memchr(c->buf + start, '\n', c->len - start))) {
            *nl = '\0';
            if (memchr(c->buf + start, '\0', (size_t)(nl - (c->buf + start))))
                return refuse(c, "nul_in_command", "it sent a command holding a NUL byte");
            int rc = mpx_pmi_line(job, c, c->buf + start);
            start = (size_t)(nl - c->buf) + 1;
            if (rc < 0 || c->broken)
                return -1;
        }
        memmove(c->buf, c->buf + start, c->len - start);
        c->len -= start;
        if (c->len > LINE_MAX_BYTES)
            return refuse(c, "command_too_long", "it sent a PMI command longer than %d bytes", LINE_MAX_BYTES);
    }
    return 0;
}

int mpx_pmi_serve(struct mpx_job *job, struct mpx_conn *c)
{
    char chunk[16384];
    if (c->olen && mpx_pmi_flush(c) < 0)
        return -1;
    /* A few chunks per call, so a client that floods mpiexec cannot starve the others;
     * one that does not read its replies fills c->out and is dropped (mpx_pmi_reply). */
    for (int i = 0; i < 4; i++) {
        ssize_t n = read(c->fd, chunk, sizeof chunk);
        if (n > 0) {
            if (mpx_pmi_feed(job, c, chunk, (size_t)n) < 0)
                return -1;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1;
    }
    return 0;
}

void mpx_pmi_sweep(struct mpx_job *job, uint64_t now)
{
    for (int i = 0; i < job->n; i++) {
        struct mpx_conn *c = job->ranks[i].conn;
        if (c && c->broken)
            mpx_pmi_close(job, c);
    }
    for (int i = job->npending - 1; i >= 0; i--) {
        struct mpx_conn *c = job->pending[i];
        if (!c->broken && now - c->accepted_at >= MPX_AUTH_TIMEOUT_MS)
            refuse(c, "authentication_timeout", "it did not prove the job key within %d s", MPX_AUTH_TIMEOUT_MS / 1000);
        if (c->broken || now - c->accepted_at >= MPX_AUTH_TIMEOUT_MS)
            mpx_pmi_close(job, c);
    }
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
        pending_remove(job, c);
    }
    /* Best effort: the last reply may be the error line that says why it is closed. Input
     * left unread would make close() reset the connection and the client lose that line. */
    if (c->olen && !c->broken)
        mpx_pmi_flush(c);
    if (c->fd >= 0) {
        char sink[4096];
        shutdown(c->fd, SHUT_WR);
        for (int i = 0; i < 16 && read(c->fd, sink, sizeof sink) > 0; i++)
            ;
        close(c->fd);
    }
    free(c->buf);
    free(c->out);
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
        if (job->npending >= MPX_PENDING_MAX) {
            /* Make room by the oldest: a flood of idle connections must not lock out a rank
             * that connects now and proves the key in milliseconds. */
            struct mpx_conn *oldest = job->pending[0];
            for (int i = 1; i < job->npending; i++)
                if (job->pending[i]->accepted_at < oldest->accepted_at)
                    oldest = job->pending[i];
            mpx_pmi_close(job, oldest);
        }
        job->pending = realloc(job->pending, (size_t)(job->npending + 1) * sizeof *job->pending);
        if (!job->pending) {
            perror("mpiexec");
            exit(1);
        }
        struct mpx_conn *c = mpx_conn_new(fd, -1);
        c->accepted_at = mpx_now_ms();
        job->pending[job->npending++] = c;
    }
}
