#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* After the last rank is reaped, output still in flight gets this long to arrive. */
#define DRAIN_MS 1000
/* After SIGKILL, give up on ranks that still have not been reaped. */
#define GIVE_UP_MS 2000

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) < 0) {
        /* The pipe is full: enough wake-ups are already pending. */
    }
    errno = saved;
}

uint64_t mpx_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void mpx_msg(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        mpx_write_all(2, buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
}

void mpx_fail(struct mpx_job *job, int code)
{
    job->abort_rank = -1;
    if (job->ending)
        return;
    job->ending = 1;
    job->exit_code = code;
    job->term_at = mpx_now_ms();
    for (int i = 0; i < job->n; i++)
        mpx_signal_rank(&job->ranks[i], SIGTERM);
}

void mpx_abort(struct mpx_job *job, struct mpx_rank *r, int code)
{
    if (job->ending || job->abort_rank >= 0)
        return;
    job->abort_rank = r->rank;
    job->abort_code = code;
    job->abort_at = mpx_now_ms();
}

static void abort_now(struct mpx_job *job)
{
    char who[64];
    mpx_rank_name(job, &job->ranks[job->abort_rank], who, sizeof who);
    mpx_msg("mpiexec: %s called abort (exit code %d); ending the job.\n", who, job->abort_code);
    mpx_fail(job, job->abort_code);
}

static void describe(const struct mpx_rank *r, char *buf, size_t len)
{
    char name[64];
    mpx_rank_name(NULL, r, name, sizeof name);
    if (r->local)
        snprintf(buf, len, "%s (pid %d on %s)", name, (int)r->pid, r->host);
    else
        snprintf(buf, len, "%s (on %s, launch agent pid %d)", name, r->host, (int)r->pid);
}

/* A rank (or its agent) ended: decide whether that ends the job. */
static void rank_exited(struct mpx_job *job, struct mpx_rank *r, int status)
{
    char who[512];
    describe(r, who, sizeof who);
    /* An abort request written just before the exit must win over the exit itself. */
    if (r->conn && mpx_pmi_serve(job, r->conn) < 0)
        mpx_pmi_close(job, r->conn);
    r->pid = 0;
    r->status = status;
    if (job->ending)
        return;
    /* A launch agent (ssh, a remote shell) reports its rank's death by signal N as exit
     * code 128+N. */
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    int agent_sig = !r->local && code > 128 && code < 128 + 32 ? code - 128 : 0;
    if (WIFSIGNALED(status) || agent_sig) {
        int s = agent_sig ? agent_sig : WTERMSIG(status);
        mpx_msg("mpiexec: %s was killed by signal %d (%s)%s; ending the job.\n", who, s, mpx_signame(s),
                agent_sig ? " (its launch agent exited with 128 + the signal)" : "");
        if (job->abort_rank >= 0 && job->abort_rank != r->rank) {
            char other[64];
            mpx_rank_name(job, &job->ranks[job->abort_rank], other, sizeof other);
            mpx_msg("mpiexec: (%s called abort just before, most likely because of this.)\n", other);
        }
        mpx_fail(job, 128 + s);
    } else if (job->abort_rank == r->rank) {
        abort_now(job);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        mpx_msg("mpiexec: %s exited with code %d; ending the job.\n", who, WEXITSTATUS(status));
        mpx_fail(job, WEXITSTATUS(status));
    } else if (r->pmi_inited && !r->pmi_finalized) {
        mpx_msg("mpiexec: %s exited with code 0 without calling PMI finalize; ending the job.\n", who);
        mpx_fail(job, 1);
    }
}

static void reap(struct mpx_job *job)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        for (int i = 0; i < job->n; i++)
            if (job->ranks[i].pid == pid)
                rank_exited(job, &job->ranks[i], status);
    }
}

static void handle_signals(struct mpx_job *job)
{
    unsigned char b[64];
    ssize_t n;
    while ((n = read(sig_pipe[0], b, sizeof b)) > 0 || (n < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < n; i++) {
            int sig = b[i];
            if (sig == SIGCHLD)
                continue;
            if (job->ending && job->ending_by_signal) {
                /* A second interrupt: stop waiting for a clean shutdown. */
                for (int k = 0; k < job->n; k++)
                    mpx_signal_rank(&job->ranks[k], SIGKILL);
                job->sigkill_sent = 1;
                continue;
            }
            mpx_msg("mpiexec: received %s; forwarding it to every rank and ending the job.\n", mpx_signame(sig));
            for (int k = 0; k < job->n; k++)
                mpx_signal_rank(&job->ranks[k], sig);
            if (!job->ending) {
                job->ending = 1;
                job->exit_code = 128 + sig;
                job->term_at = mpx_now_ms();
            }
            job->ending_by_signal = 1;
        }
    }
    reap(job);
}

static void install_signals(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        perror("mpiexec: pipe");
        exit(1);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static int all_reaped(const struct mpx_job *job)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].pid > 0)
            return 0;
    return 1;
}

static int streams_open(const struct mpx_job *job)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].out.fd >= 0 || job->ranks[i].err.fd >= 0)
            return 1;
    return 0;
}

static void min_deadline(uint64_t *next, uint64_t t)
{
    if (t && (!*next || t < *next))
        *next = t;
}

enum { PF_SIG, PF_LISTEN, PF_PENDING, PF_CONN, PF_OUT, PF_ERR };

static int run(struct mpx_job *job)
{
    struct pollfd *pf = NULL;
    int *kind = NULL, *idx = NULL;
    uint64_t start = mpx_now_ms(), reaped_at = 0;

    for (;;) {
        uint64_t now = mpx_now_ms();
        if (job->opts->timeout && !job->ending && now - start >= (uint64_t)job->opts->timeout * 1000) {
            mpx_msg("mpiexec: the job ran longer than --timeout %d s; ending it.\n", job->opts->timeout);
            mpx_fail(job, 124);
        }
        if (job->abort_rank >= 0 && !job->ending) {
            /* Children that died just before the abort are reaped before it is believed. */
            reap(job);
            if (job->abort_rank >= 0 && !job->ending && now - job->abort_at >= MPX_ABORT_GRACE_MS)
                abort_now(job);
        }
        mpx_pmi_sweep(job, now);
        for (int i = 0; i < job->n && !job->ending; i++) {
            struct mpx_rank *r = &job->ranks[i];
            if (r->pmi_lost && r->pid > 0 && now - r->pmi_lost_at >= MPX_PMI_LOST_GRACE_MS) {
                char who[512];
                describe(r, who, sizeof who);
                mpx_msg("mpiexec: %s closed its PMI connection before finalize and has not exited; "
                        "ending the job.\n",
                        who);
                mpx_fail(job, 1);
            }
        }
        if (job->ending && !job->sigkill_sent && now - job->term_at >= MPX_KILL_GRACE_MS) {
            for (int i = 0; i < job->n; i++)
                mpx_signal_rank(&job->ranks[i], SIGKILL);
            job->sigkill_sent = 1;
            job->kill_at = now;
        }
        if (job->sigkill_sent && !job->kill_at)
            job->kill_at = now;
        if (all_reaped(job)) {
            if (!reaped_at)
                reaped_at = now;
            if (!streams_open(job) || now - reaped_at >= DRAIN_MS)
                break;
        } else if (job->sigkill_sent && now - job->kill_at >= GIVE_UP_MS) {
            for (int i = 0; i < job->n; i++)
                if (job->ranks[i].pid > 0)
                    mpx_msg("mpiexec: rank %d (pid %d on %s) did not end after SIGKILL; leaving it.\n",
                            job->ranks[i].rank, (int)job->ranks[i].pid, job->ranks[i].host);
            break;
        }

        size_t need = 2 + (size_t)job->n * 3 + 64 + (size_t)job->npending; /* spawn adds ranks */
        pf = realloc(pf, need * sizeof *pf);
        kind = realloc(kind, need * sizeof *kind);
        idx = realloc(idx, need * sizeof *idx);
        if (!pf || !kind || !idx) {
            perror("mpiexec");
            exit(1);
        }
        nfds_t n = 0;
#define ADD(fd_, k_, i_) \
    (pf[n].fd = (fd_), pf[n].events = POLLIN, pf[n].revents = 0, kind[n] = (k_), idx[n] = (i_), n++)
        ADD(sig_pipe[0], PF_SIG, 0);
        if (job->listen_fd >= 0 && !job->ending)
            ADD(job->listen_fd, PF_LISTEN, 0);
        for (int i = 0; i < job->npending; i++) {
            ADD(job->pending[i]->fd, PF_PENDING, i);
            if (job->pending[i]->olen)
                pf[n - 1].events |= POLLOUT;
        }
        for (int i = 0; i < job->n; i++) {
            struct mpx_rank *r = &job->ranks[i];
            if (r->conn) {
                ADD(r->conn->fd, PF_CONN, i);
                if (r->conn->olen)
                    pf[n - 1].events |= POLLOUT;
            }
            if (r->out.fd >= 0)
                ADD(r->out.fd, PF_OUT, i);
            if (r->err.fd >= 0)
                ADD(r->err.fd, PF_ERR, i);
        }
#undef ADD
        uint64_t next = 0;
        if (job->opts->timeout && !job->ending)
            min_deadline(&next, start + (uint64_t)job->opts->timeout * 1000);
        for (int i = 0; i < job->n; i++)
            if (job->ranks[i].pmi_lost && job->ranks[i].pid > 0 && !job->ending)
                min_deadline(&next, job->ranks[i].pmi_lost_at + MPX_PMI_LOST_GRACE_MS);
        if (job->ending && !job->sigkill_sent)
            min_deadline(&next, job->term_at + MPX_KILL_GRACE_MS);
        if (job->sigkill_sent)
            min_deadline(&next, job->kill_at + GIVE_UP_MS);
        if (reaped_at)
            min_deadline(&next, reaped_at + DRAIN_MS);
        if (job->abort_rank >= 0 && !job->ending)
            min_deadline(&next, job->abort_at + MPX_ABORT_GRACE_MS);
        for (int i = 0; i < job->npending; i++)
            min_deadline(&next, job->pending[i]->accepted_at + MPX_AUTH_TIMEOUT_MS);
        int timeout = -1;
        if (next)
            timeout = next > now ? (int)(next - now) : 0;

        int rc = poll(pf, n, timeout);
        if (rc < 0 && errno != EINTR) {
            perror("mpiexec: poll");
            mpx_fail(job, 1);
            continue;
        }
        if (rc <= 0)
            continue;
        /* PMI traffic first, so an abort is seen before the exit that follows it. */
        for (nfds_t k = 0; k < n; k++) {
            if (!pf[k].revents || kind[k] != PF_CONN)
                continue;
            struct mpx_conn *c = job->ranks[idx[k]].conn;
            if (c && c->fd == pf[k].fd && mpx_pmi_serve(job, c) < 0)
                mpx_pmi_close(job, c);
        }
        for (nfds_t k = 0; k < n; k++) {
            if (!pf[k].revents || kind[k] != PF_PENDING)
                continue;
            for (int i = 0; i < job->npending; i++) {
                struct mpx_conn *c = job->pending[i];
                if (c->fd == pf[k].fd) {
                    if (mpx_pmi_serve(job, c) < 0)
                        mpx_pmi_close(job, c);
                    break;
                }
            }
        }
        for (nfds_t k = 0; k < n; k++) {
            if (!pf[k].revents)
                continue;
            struct mpx_rank *r = &job->ranks[idx[k]];
            if (kind[k] == PF_LISTEN)
                mpx_pmi_accept(job);
            else if (kind[k] == PF_OUT && r->out.fd == pf[k].fd)
                mpx_ostream_read(job, r, &r->out);
            else if (kind[k] == PF_ERR && r->err.fd == pf[k].fd)
                mpx_ostream_read(job, r, &r->err);
        }
        if (pf[0].revents)
            handle_signals(job);
    }
    free(pf);
    free(kind);
    free(idx);
    for (int i = 0; i < job->n; i++) {
        struct mpx_rank *r = &job->ranks[i];
        mpx_ostream_close(job, r, &r->out);
        mpx_ostream_close(job, r, &r->err);
        if (r->conn)
            mpx_pmi_close(job, r->conn);
    }
    while (job->npending)
        mpx_pmi_close(job, job->pending[0]);
    int removed = mpx_shm_cleanup(job);
    if (removed && job->opts->verbose)
        fprintf(stderr, "mpiexec: removed %d shared-memory segment(s) the ranks left behind.\n", removed);
    return job->exit_code;
}

int main(int argc, char **argv)
{
    struct mpx_opts opts;
    if (mpx_parse_args(argc, argv, &opts) < 0)
        return 2; /* a usage error, as getopt-style tools report it */

    struct mpx_job job;
    memset(&job, 0, sizeof job);
    job.opts = &opts;
    job.n = opts.nprocs;
    job.listen_fd = -1;
    job.abort_rank = -1;
    if (rmpi_auth_random(job.key, sizeof job.key) < 0) {
        fprintf(stderr, "mpiexec: getrandom failed (%s); cannot make the job key.\n", strerror(errno));
        return 1;
    }
    rmpi_auth_hex(job.key, sizeof job.key, job.key_hex);
    job.ranks = calloc((size_t)job.n, sizeof *job.ranks);
    if (!job.ranks) {
        perror("mpiexec");
        return 1;
    }
    mpx_pmi_init(&job);
    for (int i = 0; i < job.n; i++) {
        job.ranks[i].argv = opts.argv;
        job.ranks[i].wdir = opts.wdir;
    }

    static char myname[256];
    if (gethostname(myname, sizeof myname - 1) < 0)
        strcpy(myname, "localhost");
    int any_remote = 0;
    for (int i = 0; i < job.n; i++) {
        struct mpx_rank *r = &job.ranks[i];
        r->rank = i;
        r->host = mpx_place(&opts, i);
        r->out.fd = r->err.fd = -1;
        /* Ask the resolver once per distinct host name. */
        int j;
        for (j = 0; j < i && strcmp(job.ranks[j].host, r->host) != 0; j++)
            ;
        r->local = j < i ? job.ranks[j].local : mpx_host_is_local(r->host);
        any_remote |= !r->local;
    }
    for (int i = 0; i < job.n; i++)
        if (opts.nhosts == 0)
            job.ranks[i].host = myname;
    if (any_remote) {
        if (mpx_pick_pmi_addr(&opts, job.pmi_addr, sizeof job.pmi_addr) < 0 || mpx_listen(&job) < 0)
            return 1;
        if (opts.verbose)
            fprintf(stderr, "mpiexec: remote ranks reach the PMI server at %s:%d\n", job.pmi_addr, job.pmi_port);
    }

    mpx_bind_plan(&job);
    install_signals();
    for (int i = 0; i < job.n && !job.ending; i++)
        if (mpx_launch(&job, &job.ranks[i]) < 0)
            mpx_fail(&job, 1);

    int code = run(&job);
    mpx_pmi_free(&job);
    mpx_names_free();
    mpx_spawn_release(&job);
    return code & 255 ? code & 255 : (code ? 1 : 0);
}
