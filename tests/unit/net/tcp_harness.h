/*
 * Test harness for the TCP provider tests (tcp_*.c): forks n ranks and serves them the
 * simple PMI-1 protocol from the parent over socketpairs (PMI_FD/PMI_RANK/PMI_SIZE), the
 * way mpiexec does, so the ranks run the real rt layer (knobs, PMI client, topology) and
 * drive rmpi_tcp_ops directly, without the layers above net.
 */
#ifndef RMPI_TEST_TCP_HARNESS_H
#define RMPI_TEST_TCP_HARNESS_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"

#define TH_MAX_RANKS 8

static const char *th_name = "?";
/* Set before th_run: rewrites a PMI value (e.g. an address card) as served to rank asker. */
static void (*th_card_hook)(int asker, const char *key, char *val, size_t len);
/* Set before th_run: how many rails open() must return (default 1). */
static int th_want_rails = 1;
static int th_rank, th_size;
static rmpi_rail_t *th_rail; /* the first rail */
static rmpi_rail_t *th_rails[RMPI_NET_MAX_RAILS];
static int th_nrails;
static rmpi_pm_info_t th_pm;

static int th_progress(void)
{
    int n = 0;
    for (int i = 0; i < th_nrails; i++)
        n += rmpi_tcp_ops.progress(th_rails[i]);
    return n;
}

static void th_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void th_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[%s rank %d] FAIL: ", th_name, th_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(1);
}

#define TH_CHECK(cond, ...)       \
    do {                          \
        if (!(cond))              \
            th_fail(__VA_ARGS__); \
    } while (0)

static double th_now(void) { return (double)rmpi_time_ns() * 1e-9; }

/* Progress until cond holds; fail after secs. */
#define TH_WAIT(cond, secs, what)                                                       \
    do {                                                                                \
        double th_end_ = th_now() + (secs);                                             \
        while (!(cond)) {                                                               \
            th_progress();                                                              \
            if (th_now() > th_end_)                                                     \
                th_fail("timed out after %.0f s waiting for %s", (double)(secs), what); \
        }                                                                               \
    } while (0)

/* Child side: the rt layer (knobs, PMI client over PMI_FD, topology) of rank th_rank. */
static void th_rt_init(void)
{
    rmpi_knobs_init();
    TH_CHECK(rmpi_pmi_init(&th_pm) == 0, "rmpi_pmi_init failed");
    rmpi_log_set_rank(th_pm.rank);
    TH_CHECK(th_pm.rank == th_rank && th_pm.size == th_size, "PMI rank/size %d/%d", th_pm.rank, th_pm.size);
    TH_CHECK(rmpi_topo_init(&th_pm) == 0, "rmpi_topo_init failed");
}

/* ... then open the TCP rail (which publishes its address card). */
static void th_open_nofence(void (*on_frame)(rmpi_rail_t *, int, const void *, size_t),
                            void (*on_lost)(rmpi_rail_t *, int, const char *))
{
    th_rt_init();
    static rmpi_net_env_t env;
    env.rank = th_rank;
    env.size = th_size;
    env.jobid = th_pm.kvsname;
    env.on_frame = on_frame;
    env.on_peer_lost = on_lost;
    int n = rmpi_tcp_ops.open(&env, th_rails, RMPI_NET_MAX_RAILS);
    TH_CHECK(n == th_want_rails, "open returned %d rails, expected %d", n, th_want_rails);
    th_nrails = n;
    th_rail = th_rails[0];
    for (int i = 0; i < n; i++) {
        const rmpi_net_hints_t *h = &th_rails[i]->hints;
        TH_CHECK(strncmp(h->name, "tcp:", 4) == 0, "rail name '%s'", h->name);
        TH_CHECK(h->rdma_native == 0 && h->scope == RMPI_SCOPE_INTER && h->max_frame == 1024 * 1024 + 256,
                 "hints of %s", h->name);
        TH_CHECK(i == 0 || strcmp(th_rails[i - 1]->hints.name, h->name) < 0, "rails out of name order: %s, %s",
                 th_rails[i - 1]->hints.name, h->name);
    }
}

/* ... then the fence after which peers' cards are visible. */
static void th_open(void (*on_frame)(rmpi_rail_t *, int, const void *, size_t),
                    void (*on_lost)(rmpi_rail_t *, int, const char *))
{
    th_open_nofence(on_frame, on_lost);
    TH_CHECK(rmpi_pmi_fence() == 0, "fence failed");
    for (int i = 0; i < th_nrails; i++)
        for (int p = 0; p < th_size; p++)
            TH_CHECK(rmpi_tcp_ops.reaches(th_rails[i], p) == (p != th_rank), "%s reaches(%d)", th_rails[i]->hints.name,
                     p);
}

static void th_finish(void)
{
    for (int i = th_nrails - 1; i >= 0; i--)
        rmpi_tcp_ops.close(th_rails[i]);
    rmpi_pmi_finalize();
    fflush(stdout);
    fflush(stderr);
    _exit(0);
}

/* ---- parent side: a PMI-1 server for n ranks ---- */
struct th_kv {
    char key[64], val[1024];
};

struct th_srv {
    int n, fd[TH_MAX_RANKS], len[TH_MAX_RANKS], barrier, nkv, failed;
    char buf[TH_MAX_RANKS][4096];
    struct th_kv *kv;
};

static const char *th_word(char *line, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (char *p = line; (p = strstr(p, key)); p += kl) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            size_t n = strcspn(p + kl + 1, " \n");
            if (n >= len)
                n = len - 1;
            memcpy(out, p + kl + 1, n);
            out[n] = '\0';
            return out;
        }
    }
    out[0] = '\0';
    return NULL;
}

static void th_reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void th_reply(int fd, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (int off = 0; off < n;) {
        ssize_t w = write(fd, line + off, (size_t)(n - off));
        if (w <= 0)
            return;
        off += (int)w;
    }
}

static void th_line(struct th_srv *s, int r, char *line)
{
    char cmd[64], key[64], val[1024];
    int fd = s->fd[r];
    th_word(line, "cmd", cmd, sizeof cmd);
    if (!strcmp(cmd, "init")) {
        th_reply(fd, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    } else if (!strcmp(cmd, "get_maxes")) {
        th_reply(fd, "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    } else if (!strcmp(cmd, "get_appnum")) {
        th_reply(fd, "cmd=appnum rc=0 appnum=0\n");
    } else if (!strcmp(cmd, "get_my_kvsname")) {
        th_reply(fd, "cmd=my_kvsname rc=0 kvsname=tcptest_%d\n", (int)getpid());
    } else if (!strcmp(cmd, "get_universe_size")) {
        th_reply(fd, "cmd=universe_size rc=0 size=%d\n", s->n);
    } else if (!strcmp(cmd, "put")) {
        th_word(line, "key", key, sizeof key);
        th_word(line, "value", val, sizeof val);
        s->kv = realloc(s->kv, (size_t)(s->nkv + 1) * sizeof(*s->kv));
        snprintf(s->kv[s->nkv].key, sizeof s->kv[0].key, "%s", key);
        snprintf(s->kv[s->nkv].val, sizeof s->kv[0].val, "%s", val);
        s->nkv++;
        th_reply(fd, "cmd=put_result rc=0 msg=success\n");
    } else if (!strcmp(cmd, "get")) {
        th_word(line, "key", key, sizeof key);
        for (int i = s->nkv - 1; i >= 0; i--)
            if (!strcmp(s->kv[i].key, key)) {
                char v[1024];
                snprintf(v, sizeof v, "%s", s->kv[i].val);
                if (th_card_hook)
                    th_card_hook(r, key, v, sizeof v);
                th_reply(fd, "cmd=get_result rc=0 msg=success value=%s\n", v);
                return;
            }
        th_reply(fd, "cmd=get_result rc=-1 msg=key_not_found\n");
    } else if (!strcmp(cmd, "barrier_in")) {
        if (++s->barrier == s->n) {
            s->barrier = 0;
            for (int i = 0; i < s->n; i++)
                if (s->fd[i] >= 0)
                    th_reply(s->fd[i], "cmd=barrier_out rc=0\n");
        }
    } else if (!strcmp(cmd, "finalize")) {
        th_reply(fd, "cmd=finalize_ack rc=0\n");
    } else if (!strcmp(cmd, "abort")) {
        fprintf(stderr, "[%s] rank %d called PMI abort\n", th_name, r);
        s->failed = 1;
    } else {
        th_reply(fd, "cmd=%s_result rc=-1 msg=unsupported_command\n", cmd);
    }
}

/* Fork n ranks running fn with env ("K=V" strings, NULL-terminated; "@R:K=V" for rank R
 * only) and serve PMI until they exit. Ranks in killmask must die of SIGKILL; the others
 * must exit 0. */
static int th_run(const char *name, int n, const char *const *env, unsigned killmask, void (*fn)(void))
{
    struct th_srv s;
    memset(&s, 0, sizeof s);
    s.n = n;
    pid_t pid[TH_MAX_RANKS];
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < n; r++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            return 1;
        pid[r] = fork();
        if (pid[r] == 0) {
            for (int q = 0; q < r; q++)
                close(s.fd[q]);
            close(sv[0]);
            char b[32];
            snprintf(b, sizeof b, "%d", sv[1]);
            setenv("PMI_FD", b, 1);
            snprintf(b, sizeof b, "%d", r);
            setenv("PMI_RANK", b, 1);
            snprintf(b, sizeof b, "%d", n);
            setenv("PMI_SIZE", b, 1);
            /* The provider's rails as listed: spare streams (auto) are a VC's business;
             * tests/netns/streams.sh runs them. A test's own value below wins. */
            setenv("RMPI_TCP_STREAMS", "1", 1);
            for (int i = 0; env && env[i]; i++) {
                const char *e = env[i];
                if (e[0] == '@') {
                    if (atoi(e + 1) != r)
                        continue;
                    e = strchr(e, ':') + 1;
                }
                putenv((char *)e);
            }
            th_name = name;
            th_rank = r;
            th_size = n;
            fn();
            _exit(0);
        }
        close(sv[1]);
        s.fd[r] = sv[0];
    }
    int open_fds = n;
    double start = th_now(), end = start + 90;
    while (open_fds > 0 && !s.failed) {
        struct pollfd pfd[TH_MAX_RANKS];
        for (int r = 0; r < n; r++)
            pfd[r] = (struct pollfd){.fd = s.fd[r], .events = POLLIN};
        if (poll(pfd, (nfds_t)n, 200) < 0 && errno != EINTR)
            break;
        if (th_now() > end) {
            fprintf(stderr, "[%s] FAIL: the ranks did not finish within 90 s\n", name);
            s.failed = 1;
            break;
        }
        for (int r = 0; r < n; r++) {
            if (s.fd[r] < 0 || !(pfd[r].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = read(s.fd[r], s.buf[r] + s.len[r], sizeof(s.buf[r]) - 1 - (size_t)s.len[r]);
            if (got <= 0) {
                close(s.fd[r]);
                s.fd[r] = -1;
                open_fds--;
                continue;
            }
            s.len[r] += (int)got;
            s.buf[r][s.len[r]] = '\0';
            char *nl;
            while ((nl = strchr(s.buf[r], '\n'))) {
                *nl = '\0';
                th_line(&s, r, s.buf[r]);
                size_t rest = (size_t)s.len[r] - (size_t)(nl + 1 - s.buf[r]);
                memmove(s.buf[r], nl + 1, rest + 1);
                s.len[r] = (int)rest;
            }
        }
    }
    int bad = s.failed;
    for (int r = 0; r < n; r++) {
        if (s.failed)
            kill(pid[r], SIGKILL);
        int st;
        waitpid(pid[r], &st, 0);
        int want_kill = (killmask >> r) & 1;
        if (want_kill ? !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) : !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            if (!s.failed)
                fprintf(stderr, "[%s] FAIL: rank %d ended with status %#x\n", name, r, st);
            bad = 1;
        }
        if (s.fd[r] >= 0)
            close(s.fd[r]);
    }
    free(s.kv);
    printf("%s: %s (%.2f s)\n", name, bad ? "FAILED" : "ok", th_now() - start);
    fflush(stdout);
    return bad;
}

#endif
