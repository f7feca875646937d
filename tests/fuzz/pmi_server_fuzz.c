/*
 * libFuzzer harness for mpiexec's PMI-1 server (tools/mpiexec/pmi_server.c, spawn.c): the
 * line handling is driven without sockets through mpx_pmi_feed. One job of two ranks:
 * rank 0 local (its connection is trusted, as a socketpair is), rank 1 remote (its TCP
 * connection must authenticate first). The input is split at 0xff bytes into pieces; a
 * piece's first byte picks the connection (bit 0 clear: rank 0, set: the TCP one), the rest
 * is fed to it. With bit 1 also set, the harness first answers the TCP connection's
 * challenge correctly (it knows the job key), so the authenticated paths are reached too. A closed connection is replaced by a fresh one. Process launches are stubbed:
 * a spawn builds its world but starts nothing.
 */
#include "mpiexec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- stubs for launch.c and main.c: nothing is started, nothing is signalled ---- */
uint64_t mpx_now_ms(void) { return 0; }
void mpx_msg(const char *fmt, ...) { (void)fmt; }
void mpx_fail(struct mpx_job *job, int code)
{
    job->ending = 1;
    job->exit_code = code;
}
void mpx_abort(struct mpx_job *job, struct mpx_rank *r, int code) { mpx_fail(job, code); }
int mpx_host_is_local(const char *host) { return strcmp(host, "localhost") == 0; }
int mpx_pick_pmi_addr(const struct mpx_opts *o, char *addr, size_t len)
{
    snprintf(addr, len, "127.0.0.1");
    return 0;
}
int mpx_listen(struct mpx_job *job)
{
    job->listen_fd = 1000; /* never used: no socket is touched */
    return 0;
}
int mpx_launch(struct mpx_job *job, struct mpx_rank *r) { return 0; }
const char *mpx_place(const struct mpx_opts *o, int rank) { return "localhost"; }

static void drop_output(struct mpx_job *job)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].conn)
            job->ranks[i].conn->olen = 0;
    for (int i = 0; i < job->npending; i++)
        job->pending[i]->olen = 0;
}

static struct mpx_conn *tcp_conn(struct mpx_job *job)
{
    struct mpx_conn *c = mpx_conn_new(-1, -1);
    job->pending = realloc(job->pending, (size_t)(job->npending + 1) * sizeof *job->pending);
    job->pending[job->npending++] = c;
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *argv[] = {"prog", NULL};
    static char wdir[] = "/";
    struct mpx_host hosts[2] = {{"localhost", 1}, {"remotehost", 1}};
    struct mpx_opts opts = {.nprocs = 2, .hosts = hosts, .nhosts = 2, .argv = argv, .wdir = wdir};
    struct mpx_job job = {.opts = &opts, .n = 2, .listen_fd = 1000, .abort_rank = -1};
    job.ranks = calloc(2, sizeof *job.ranks);
    mpx_pmi_init(&job);
    for (int i = 0; i < 2; i++) {
        job.ranks[i].argv = argv;
        job.ranks[i].wdir = wdir;
        job.ranks[i].host = hosts[i].name;
        job.ranks[i].local = i == 0;
    }
    job.ranks[0].conn = mpx_conn_new(-1, 0);
    struct mpx_conn *tcp = tcp_conn(&job);

    const uint8_t *p = data, *end = data + size;
    while (p < end) {
        const uint8_t *stop = memchr(p, 0xff, (size_t)(end - p));
        if (!stop)
            stop = end;
        if (stop > p) {
            int to_tcp = p[0] & 1;
            struct mpx_conn *c = to_tcp ? tcp : job.ranks[0].conn;
            if (to_tcp && (p[0] & 2) && c->claim >= 0 && c->rank < 0) {
                uint8_t mac[RMPI_AUTH_MAC_BYTES];
                char line[32 + 2 * RMPI_AUTH_MAC_BYTES];
                rmpi_auth_pmi_mac(job.key, c->nonce, c->claim, mac);
                strcpy(line, "cmd=auth mac=");
                rmpi_auth_hex(mac, sizeof mac, line + strlen(line));
                strcat(line, "\n");
                if (mpx_pmi_feed(&job, c, line, strlen(line)) < 0) {
                    mpx_pmi_close(&job, c);
                    tcp = c = tcp_conn(&job);
                }
            }
            if (mpx_pmi_feed(&job, c, (const char *)p + 1, (size_t)(stop - p - 1)) < 0) {
                mpx_pmi_close(&job, c);
                if (to_tcp)
                    tcp = tcp_conn(&job);
                else
                    job.ranks[0].conn = mpx_conn_new(-1, 0);
            }
            mpx_pmi_sweep(&job, 0);
            /* a sweep may have closed either connection */
            if (!job.ranks[0].conn)
                job.ranks[0].conn = mpx_conn_new(-1, 0);
            int tcp_alive = 0;
            for (int i = 0; i < job.npending; i++)
                tcp_alive |= job.pending[i] == tcp;
            for (int i = 0; i < job.n; i++)
                tcp_alive |= job.ranks[i].conn == tcp;
            if (!tcp_alive)
                tcp = tcp_conn(&job);
            drop_output(&job);
        }
        p = stop + 1;
    }

    for (int i = 0; i < job.n; i++)
        if (job.ranks[i].conn)
            mpx_pmi_close(&job, job.ranks[i].conn);
    while (job.npending)
        mpx_pmi_close(&job, job.pending[0]);
    free(job.pending);
    mpx_pmi_free(&job);
    mpx_names_free();
    mpx_spawn_release(&job);
    free(job.worlds);
    free(job.ranks);
    return 0;
}
