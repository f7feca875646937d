/*
 * mpiexec: starts the ranks of one job (fork/exec locally, a launch agent such as ssh for
 * other hosts), serves the simple PMI-1 wire protocol to them, forwards their output and
 * ends the whole job when one rank fails. Plain POSIX, no dependency on the library.
 * Single-threaded: everything runs from the poll() loop in main.c.
 *   options.c     command line, host lists, hostfiles, rank placement
 *   launch.c      locality, local fork/exec, remote command strings, signalling ranks
 *   bind.c        process binding: local ranks in the child before exec, remote ranks
 *                 told through RMPI_BIND (src/util/cpubind.c computes both)
 *   pmi_server.c  the PMI-1 server (one key-value space per world, barrier, abort), the
 *                 port handshake (docs/wire/pmi.md); its line handling takes no socket, so
 *                 tests/fuzz/pmi_server_fuzz.c drives it
 *   spawn.c       worlds started by PMI spawn (MPI_Comm_spawn), the name service
 *   io.c          stdout/stderr forwarding, line-buffered, optional "[rank] " prefix
 *   main.c        event loop, signals, failure handling, exit status
 * Failure rules: a rank's abort waits MPX_ABORT_GRACE_MS for a death by signal (reported
 * instead: it is the likelier cause); ranks and agents get PR_SET_PDEATHSIG so a killed
 * mpiexec takes them along (remote ranks notice their PMI connection close); at the end
 * the job's shared-memory names left in /dev/shm are removed.
 */
#ifndef MPIEXEC_H
#define MPIEXEC_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/util.h"

#define MPX_KILL_GRACE_MS 3000     /* SIGTERM -> SIGKILL */
#define MPX_PMI_LOST_GRACE_MS 3000 /* PMI closed before finalize: wait this long for the exit */
/* A TCP connection must prove the job key within this long, or it is closed. */
#define MPX_AUTH_TIMEOUT_MS 10000
/* Replies a client has not read yet; past this it is too far behind and is dropped, so one
 * client that never reads cannot stall everyone else. */
#define MPX_OUT_MAX (1 << 20)
/* Connections accepted but not yet authenticated. */
#define MPX_PENDING_MAX 256
/* An abort waits this long for a child that died of a signal (the loss the aborting rank
 * noticed is usually that death, which can be seen before the child is reapable). */
#define MPX_ABORT_GRACE_MS 500

struct mpx_host {
    char *name;
    int slots;
};

struct mpx_env {
    char *name;
    char *value;
};

struct mpx_opts {
    int nprocs; /* 0: not given */
    struct mpx_host *hosts;
    int nhosts;
    struct mpx_env *env; /* -genv / -env / -x, in order */
    int nenv;
    char **agent; /* agent command split into words, NULL-terminated */
    int prefix;   /* --prepend-rank / -l / --tag-output */
    int timeout;  /* seconds, 0 = none */
    char *pmi_iface, *pmi_addr;
    char *wdir;
    char **argv; /* program and its arguments, NULL-terminated */
    int verbose;
    int ppn;             /* -ppn/--npernode: ranks per host in a row; 0: by slots */
    int genvall;         /* -genvall: remote ranks get all of mpiexec's environment */
    int bind;            /* --bind-to: RMPI_BIND_*; RMPI_BIND_AUTO when not given */
    int map;             /* --map-by: RMPI_MAP_* (slot: the host slots in order) */
    int report_bindings; /* --report-bindings */
};

/* Buffered output stream of one rank (its stdout or stderr pipe). */
struct mpx_ostream {
    int fd;  /* read end, -1 once closed */
    int out; /* 1 or 2: where it goes */
    char *buf;
    size_t len, cap;
};

struct mpx_spawn;

/* One PMI connection (local socketpair end or accepted TCP connection). */
struct mpx_conn {
    int fd;    /* -1: no socket (the fuzz harness); replies stay in out */
    int rank;  /* index in job->ranks; -1 until authenticated for TCP */
    char *buf; /* input not yet served */
    size_t len, cap;
    char *out; /* replies not yet written (the fd is non-blocking) */
    size_t olen, ocap;
    int broken; /* write failed or too far behind: close at the next sweep */
    int claim;  /* TCP: the pmiid announced by initack, -1 before */
    uint8_t nonce[RMPI_AUTH_NONCE_BYTES];
    uint64_t accepted_at;
    int inited, in_barrier, finalized;
    struct mpx_spawn *spawn; /* a multi-line spawn command being read */
};

/* The processes started together: the command line's (world 0) or one PMI spawn. */
struct mpx_world {
    char kvsname[128];
    int base, n; /* job->ranks[base .. base + n) */
    int barrier_count;
};

struct mpx_rank {
    int rank;                 /* index in job->ranks (world 0: the rank) */
    int world, wrank, appnum; /* its world, rank there, command number there */
    char **argv;              /* program and arguments (world 0: opts->argv) */
    const char *wdir;
    const char *host;
    int local;
    pid_t pid;  /* local: the rank; remote: the agent. 0 once reaped */
    int status; /* wait status once reaped */
    struct mpx_ostream out, err;
    struct mpx_conn *conn; /* NULL until connected (remote) or after close */
    int pmi_claimed;       /* a connection proved the key for it: no second one */
    int pmi_inited, pmi_finalized, pmi_lost;
    uint64_t pmi_lost_at; /* ms timestamp of an early PMI close */
    int bound;            /* local: bind to cpus in the child before exec (world 0 only:
                                 * spawned ranks join a host already counted, so run unbound) */
    cpu_set_t cpus;
    char bind_env[64]; /* remote: RMPI_BIND for the library to bind at MPI_Init */
};

struct mpx_job {
    struct mpx_opts *opts;
    int n; /* processes of every world */
    struct mpx_rank *ranks;
    struct mpx_world *worlds;
    int nworlds;
    void **owned; /* strings and argv arrays of spawned worlds (spawn.c) */
    int nowned;
    int listen_fd; /* -1 when every rank is local */
    char pmi_addr[64];
    int pmi_port;
    struct mpx_conn **pending; /* accepted TCP connections not yet identified */
    int npending;
    int ending;           /* the job is being torn down */
    int ending_by_signal; /* ... because mpiexec got SIGINT/SIGTERM/SIGHUP */
    int exit_code;
    uint64_t term_at, kill_at; /* ms timestamps of SIGTERM and SIGKILL */
    int sigkill_sent;
    uint8_t key[RMPI_AUTH_KEY_BYTES]; /* the job key every rank gets (docs/wire/auth.md) */
    char key_hex[2 * RMPI_AUTH_KEY_BYTES + 1];
    int abort_rank; /* a rank's abort waiting MPX_ABORT_GRACE_MS, else -1 */
    int abort_code;
    uint64_t abort_at;
};

/* options.c */
int mpx_parse_args(int argc, char **argv, struct mpx_opts *o);
int mpx_parse_hostfile(const char *path, struct mpx_opts *o);
int mpx_parse_hostlist(const char *list, struct mpx_opts *o);
/* Host of each rank: fill slots in order, wrap around when nprocs exceeds them; with -ppn,
 * ppn ranks per host in a row, host after host. */
const char *mpx_place(const struct mpx_opts *o, int rank);
void mpx_usage(FILE *f);

/* bind.c */
/* Decide every world-0 rank's binding (--bind-to, --map-by, the default: bind to cores
 * when a host's ranks fit its cores); print --report-bindings for local ranks. Sets that
 * this host's kernel refuses make one warning and leave the local ranks unbound. */
void mpx_bind_plan(struct mpx_job *job);
/* In the forked child of a local rank, before exec. */
void mpx_bind_apply(const struct mpx_rank *r);

/* launch.c */
int mpx_host_is_local(const char *host);
int mpx_pick_pmi_addr(const struct mpx_opts *o, char *addr, size_t len);
int mpx_listen(struct mpx_job *job);
int mpx_launch(struct mpx_job *job, struct mpx_rank *r);
/* The single shell command string a remote rank's agent evaluates. */
char *mpx_remote_command(const struct mpx_job *job, const struct mpx_rank *r);
void mpx_signal_rank(struct mpx_rank *r, int sig);
/* Remove the shared-memory segments the job's ranks left in /dev/shm (ranks killed before
 * they unlinked them), by the library's naming rule (rmpi_shm_job_prefix); how many. */
int mpx_shm_cleanup(const struct mpx_job *job);
const char *mpx_signame(int sig);

/* pmi_server.c */
void mpx_pmi_init(struct mpx_job *job);
struct mpx_conn *mpx_conn_new(int fd, int rank);
/* Read what is available on c and serve every complete command; returns -1 when the
 * connection closed or failed (the caller then calls mpx_pmi_close). */
int mpx_pmi_serve(struct mpx_job *job, struct mpx_conn *c);
/* Serve len bytes of input from c (no socket involved: the fuzz harness drives this);
 * -1 when c must be closed. */
int mpx_pmi_feed(struct mpx_job *job, struct mpx_conn *c, const char *data, size_t len);
/* Bad input from c: say why on stderr and to the client (cmd=error); returns -1 so the
 * caller closes c. */
int mpx_pmi_refuse(struct mpx_conn *c, const char *wire_msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Serve one command line (without its newline); -1 when c must be closed. */
int mpx_pmi_line(struct mpx_job *job, struct mpx_conn *c, char *line);
/* Queue one reply for c and write what can go without blocking; 0, or -1 (c->broken). */
int mpx_pmi_reply(struct mpx_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write what c->out holds without blocking; -1 when the connection failed. */
int mpx_pmi_flush(struct mpx_conn *c);
void mpx_pmi_close(struct mpx_job *job, struct mpx_conn *c);
/* Close broken connections and those that did not authenticate in time. */
void mpx_pmi_sweep(struct mpx_job *job, uint64_t now);
void mpx_pmi_accept(struct mpx_job *job);
void mpx_pmi_free(struct mpx_job *job);
/* Key-value space of a world (pmi_server.c). */
void mpx_kvs_put(int world, const char *key, const char *value);

/* spawn.c */
/* A new world of n ranks (ranks appended to job->ranks, not yet launched); its index. */
int mpx_world_new(struct mpx_job *job, int n);
/* A line of a multi-line "mcmd=spawn" command (c->spawn collects them): 1 when the line
 * belonged to one, 0 when not, -1 when it was malformed (refused: close c). */
int mpx_spawn_line(struct mpx_job *job, struct mpx_conn *c, const char *line);
/* publish_name / unpublish_name / lookup_name; the reply line into out. */
void mpx_names_serve(const char *cmd, const char *service, const char *port, char *out, size_t len);
void mpx_names_free(void);
void mpx_spawn_free(struct mpx_spawn *s);
/* Free what spawned worlds' ranks point to (argv, wdir, host), at the end of the job. */
void mpx_spawn_release(struct mpx_job *job);
/* "rank R" or "rank R of spawned world W" */
const char *mpx_rank_name(const struct mpx_job *job, const struct mpx_rank *r, char *buf, size_t len);

/* io.c */
void mpx_ostream_init(struct mpx_ostream *s, int fd, int out);
/* Read what is available; returns -1 at end of file (the stream is then closed). */
int mpx_ostream_read(struct mpx_job *job, struct mpx_rank *r, struct mpx_ostream *s);
void mpx_ostream_close(struct mpx_job *job, struct mpx_rank *r, struct mpx_ostream *s);
int mpx_write_all(int fd, const char *buf, size_t len);

/* main.c */
uint64_t mpx_now_ms(void);
/* End the job because of a failure: keep the first exit code, SIGTERM everyone. */
void mpx_fail(struct mpx_job *job, int code);
/* A rank asked to abort: ends the job after MPX_ABORT_GRACE_MS unless a rank's death by a
 * signal, the likelier cause, is seen first. */
void mpx_abort(struct mpx_job *job, struct mpx_rank *r, int code);
void mpx_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
