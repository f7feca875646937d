/*
 * Process-manager client. Three wires, picked from the environment the process starts in
 * (src/rt/README.md has the rule):
 *   - PMI-1, the simple PMI wire protocol (newline-terminated "key=value" words), as served
 *     by RailMPI's mpiexec, MPICH's hydra and Slurm's --mpi=pmi2 plugin;
 *   - PMI-2 (6-character length, then "key=value;" pairs), as Slurm's srun --mpi=pmi2 and
 *     hydra serve it;
 *   - PMIx through libpmix (pmix.c) when the library was built with it.
 * Without any of them the process is a singleton whose key-value space is a local table.
 * Values on the wire may not contain spaces, '=' or ';'; such values are hex-encoded here
 * behind a '~' marker so callers can store any string (see src/rt/README.md).
 * Every wait for a reply is bounded by RMPI_PMI_TIMEOUT except the fence's, which waits
 * for the slowest rank and which the process manager ends when a rank dies.
 */
#include "rt.h"
#include "pmi_int.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#define PMI_LINE_MAX 8192
/* PMI-2 frames: a 6-character decimal length, space-padded, then the body. */
#define PMI2_LEN_DIGITS 6

struct pmi_kv {
    char *key, *value;
    struct pmi_kv *next;
};

static struct {
    int initialized;
    int fd; /* -1 for a singleton */
    rmpi_pm_info_t info;
    int keylen_max, vallen_max;
    char rbuf[PMI_LINE_MAX];
    size_t rlen;          /* bytes buffered in rbuf, not yet consumed */
    struct pmi_kv *local; /* singleton key-value table */
    int have_key;         /* job_key is set */
    uint8_t job_key[RMPI_AUTH_KEY_BYTES];
    int kind;           /* RMPI_PM_* */
    int pmi1_phase;     /* PMI-2: the init exchange still uses PMI-1 lines */
    uint64_t deadline;  /* ns: the reply awaited must come by then; 0 none */
    char expected[160]; /* the process manager, as error messages name it */
    char jobid[256];    /* PMI-2 jobid (the kvsname of get) */
} pmi = {.fd = -1};

static void pmi_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void pmi_err(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (pmi.initialized || pmi.info.size > 0)
        fprintf(stderr, "[rmpi rank %d] PMI: %s\n", pmi.info.rank, msg);
    else
        fprintf(stderr, "[rmpi] PMI: %s\n", msg);
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, -1);
                continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static void (*abort_hooks[8])(void);
static int nabort_hooks;

void rmpi_rt_at_abort(void (*fn)(void))
{
    if (nabort_hooks < (int)RMPI_ARRAY_LEN(abort_hooks))
        abort_hooks[nabort_hooks++] = fn;
}

static void run_abort_hooks(void)
{
    for (int i = 0; i < nabort_hooks; i++)
        abort_hooks[i]();
}

/* Wait until the process manager's connection is readable, at most until the deadline
 * (0: no deadline). 0, or -1 with the message printed. */
static int wait_readable(void)
{
    for (;;) {
        int ms = -1;
        if (pmi.deadline) {
            uint64_t now = rmpi_time_ns();
            if (now >= pmi.deadline) {
                pmi_err("no reply from the %s within %g s; is this program started by the process manager "
                        "its environment names? (RMPI_PMI_TIMEOUT sets the bound)",
                        pmi.expected, rmpi_knobs.PMI_TIMEOUT);
                return -1;
            }
            ms = (int)((pmi.deadline - now + 999999) / 1000000);
        }
        struct pollfd p = {.fd = pmi.fd, .events = POLLIN};
        int n = poll(&p, 1, ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR) {
            pmi_err("waiting for the %s failed: %s.", pmi.expected, strerror(errno));
            return -1;
        }
    }
}

/* Append what the connection holds to rbuf (at least one byte); -1 when it closed or the
 * wait timed out (message printed). */
static int read_more(void)
{
    if (pmi.rlen == sizeof pmi.rbuf) {
        pmi_err("a reply from the %s exceeds %zu bytes.", pmi.expected, sizeof pmi.rbuf);
        return -1;
    }
    for (;;) {
        if (wait_readable() < 0)
            return -1;
        ssize_t n = read(pmi.fd, pmi.rbuf + pmi.rlen, sizeof pmi.rbuf - pmi.rlen);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n <= 0) {
            /* The launcher is gone, and with it the reader of our stderr: clean up before
             * the message, whose write may end us by SIGPIPE. */
            int err = errno;
            run_abort_hooks();
            pmi_err("the connection to the %s %s%s.", pmi.expected,
                    n == 0 ? "was closed" : "failed: ", n == 0 ? "" : strerror(err));
            return -1;
        }
        pmi.rlen += (size_t)n;
        return 0;
    }
}

/* Take len bytes off the front of rbuf into out (NUL-terminated), plus skip more. */
static void take(char *out, size_t len, size_t skip)
{
    memcpy(out, pmi.rbuf, len);
    out[len] = '\0';
    pmi.rlen -= len + skip;
    memmove(pmi.rbuf, pmi.rbuf + len + skip, pmi.rlen);
}

/* Read one newline-terminated line into out (without the newline); keeps whatever
 * follows it in the buffer, since the server may send several lines at once. */
static int read_line(char *out, size_t outlen)
{
    for (;;) {
        char *nl = memchr(pmi.rbuf, '\n', pmi.rlen);
        if (nl) {
            size_t len = (size_t)(nl - pmi.rbuf);
            if (len >= outlen) {
                pmi_err("a reply from the %s is longer than %zu bytes.", pmi.expected, outlen);
                return -1;
            }
            if (memchr(pmi.rbuf, '\0', len)) {
                pmi_err("a reply from the %s holds a NUL byte.", pmi.expected);
                return -1;
            }
            take(out, len, 1);
            return 0;
        }
        if (read_more() < 0)
            return -1;
    }
}

/* Read one PMI-2 frame's body into out. The length field is decimal digits padded with
 * spaces (Slurm writes "%-6d", MPICH "%6d"); anything else is a broken server. */
static int read_frame(char *out, size_t outlen)
{
    while (pmi.rlen < PMI2_LEN_DIGITS)
        if (read_more() < 0)
            return -1;
    size_t len = 0, i = 0;
    while (i < PMI2_LEN_DIGITS && pmi.rbuf[i] == ' ')
        i++;
    size_t first = i;
    while (i < PMI2_LEN_DIGITS && pmi.rbuf[i] >= '0' && pmi.rbuf[i] <= '9')
        len = len * 10 + (size_t)(pmi.rbuf[i++] - '0');
    size_t digits = i - first;
    while (i < PMI2_LEN_DIGITS && pmi.rbuf[i] == ' ')
        i++;
    if (i < PMI2_LEN_DIGITS || digits == 0) {
        pmi_err("a reply from the %s does not start with a PMI-2 length field (\"%.6s\"); is it a "
                "PMI-2 server?",
                pmi.expected, pmi.rbuf);
        return -1;
    }
    if (len == 0 || len >= outlen || len > sizeof pmi.rbuf - PMI2_LEN_DIGITS) {
        pmi_err("a PMI-2 reply from the %s announces %zu bytes, which is %s.", pmi.expected, len,
                len ? "too long" : "not a frame");
        return -1;
    }
    while (pmi.rlen < PMI2_LEN_DIGITS + len)
        if (read_more() < 0)
            return -1;
    if (memchr(pmi.rbuf + PMI2_LEN_DIGITS, '\0', len)) {
        pmi_err("a PMI-2 reply from the %s holds a NUL byte.", pmi.expected);
        return -1;
    }
    pmi.rlen -= PMI2_LEN_DIGITS;
    memmove(pmi.rbuf, pmi.rbuf + PMI2_LEN_DIGITS, pmi.rlen);
    take(out, len, 0);
    return 0;
}

/* Split a reply; too many words is a broken server. */
static int split_reply(char *line, rmpi_pmi_words_t *w)
{
    int rc = pmi.kind == RMPI_PM_PMI2 && !pmi.pmi1_phase ? rmpi_pmi2_split(line, w) : rmpi_pmi_split(line, w);
    if (rc < 0)
        pmi_err("a reply from the %s is malformed (more than %d words, or a PMI-2 pair without '=' or ';').",
                pmi.expected, RMPI_PMI_MAX_WORDS);
    return rc;
}

/* 0 when w is cmd=<expect>; else a message, with the server's reason (msg=) if it gave one. */
static int is_reply(const char *expect, const rmpi_pmi_words_t *w)
{
    const char *cmd = rmpi_pmi_word(w, "cmd"), *msg = rmpi_pmi_word(w, "msg");
    if (!msg)
        msg = rmpi_pmi_word(w, "errmsg");
    if (cmd && strcmp(cmd, expect) == 0)
        return 0;
    pmi_err("expected cmd=%s from the %s but got \"%.40s=%.80s\"%s%.200s.", expect, pmi.expected, w->n ? w->key[0] : "",
            w->n ? w->val[0] : "", msg ? ", msg=" : "", msg ? msg : "");
    return -1;
}

/* Read the next reply (a line, or a PMI-2 frame) and check that it is cmd=<expect>. */
static int expect_reply(const char *expect, char *line, size_t linelen, rmpi_pmi_words_t *w)
{
    int frame = pmi.kind == RMPI_PM_PMI2 && !pmi.pmi1_phase;
    if ((frame ? read_frame(line, linelen) : read_line(line, linelen)) < 0 || split_reply(line, w) < 0)
        return -1;
    return is_reply(expect, w);
}

/* Send a request; its reply is due within RMPI_PMI_TIMEOUT. */
static int send_raw(const char *buf, size_t len)
{
    double t = rmpi_knobs.PMI_TIMEOUT;
    pmi.deadline = t > 0 ? rmpi_time_ns() + (uint64_t)(t * 1e9) : 0;
    if (write_all(pmi.fd, buf, len) < 0) {
        pmi_err("writing to the %s failed: %s.", pmi.expected, strerror(errno));
        return -1;
    }
    return 0;
}

static int send_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int send_cmd(const char *fmt, ...)
{
    char buf[PMI_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf - 1) {
        pmi_err("a PMI command is longer than %d bytes.", PMI_LINE_MAX - 2);
        return -1;
    }
    buf[n++] = '\n';
    return send_raw(buf, (size_t)n);
}

/* One PMI-2 frame: the body gets its 6-character length in front. */
static int send_frame(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int send_frame(const char *fmt, ...)
{
    char buf[PMI_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + PMI2_LEN_DIGITS, sizeof buf - PMI2_LEN_DIGITS, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf - PMI2_LEN_DIGITS) {
        pmi_err("a PMI-2 command is longer than %d bytes.", PMI_LINE_MAX - PMI2_LEN_DIGITS - 1);
        return -1;
    }
    char len[PMI2_LEN_DIGITS + 1];
    snprintf(len, sizeof len, "%-6d", n);
    memcpy(buf, len, PMI2_LEN_DIGITS);
    return send_raw(buf, (size_t)n + PMI2_LEN_DIGITS);
}

static int parse_int(const char *s, int *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < -2147483647L || v > 2147483647L)
        return -1;
    *out = (int)v;
    return 0;
}

static int connect_port(const char *port_env)
{
    char host[256];
    const char *colon = strrchr(port_env, ':');
    if (!colon || colon == port_env || (size_t)(colon - port_env) >= sizeof host) {
        pmi_err("PMI_PORT=\"%s\" is not of the form host:port.", port_env);
        return -1;
    }
    memcpy(host, port_env, (size_t)(colon - port_env));
    host[colon - port_env] = '\0';
    /* Accept "[v6addr]:port" as well. */
    char *h = host;
    if (h[0] == '[' && h[strlen(h) - 1] == ']') {
        h[strlen(h) - 1] = '\0';
        h++;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(h, colon + 1, &hints, &res);
    if (rc != 0) {
        pmi_err("cannot resolve the process manager address %s: %s.", port_env, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int r;
        do
            r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        while (r < 0 && errno == EINTR);
        if (r == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        pmi_err("cannot connect to the process manager at %s: %s.", port_env, strerror(err));
    return fd;
}

/* Hydra-style handshake for a TCP connection: announce our PMI id, prove the job key if
 * the server challenges (RailMPI's mpiexec does, hydra does not; docs/wire/pmi.md), learn
 * size and rank. The key itself never crosses the wire. */
static int port_handshake(int id, int *size, int *rank)
{
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    if (send_cmd("cmd=initack pmiid=%d", id) < 0 || read_line(line, sizeof line) < 0 || split_reply(line, &w) < 0)
        return -1;
    const char *cmd = rmpi_pmi_word(&w, "cmd");
    if (cmd && strcmp(cmd, "challenge") == 0) {
        uint8_t nonce[RMPI_AUTH_NONCE_BYTES], mac[RMPI_AUTH_MAC_BYTES];
        char hex[2 * RMPI_AUTH_MAC_BYTES + 1];
        if (!pmi.have_key) {
            pmi_err("the process manager asks for the job key, but %s was not given to this rank; "
                    "start it with the mpiexec that listens on PMI_PORT.",
                    RMPI_AUTH_KEY_ENV);
            return -1;
        }
        if (rmpi_auth_unhex(rmpi_pmi_word(&w, "nonce"), nonce, sizeof nonce) < 0) {
            pmi_err("the process manager's challenge holds no valid nonce.");
            return -1;
        }
        rmpi_auth_pmi_mac(pmi.job_key, nonce, id, mac);
        rmpi_auth_hex(mac, sizeof mac, hex);
        if (send_cmd("cmd=auth mac=%s", hex) < 0 || read_line(line, sizeof line) < 0 || split_reply(line, &w) < 0)
            return -1;
    }
    if (is_reply("initack", &w) < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        if (expect_reply("set", line, sizeof line, &w) < 0)
            return -1;
        const char *v;
        if ((v = rmpi_pmi_word(&w, "size")))
            parse_int(v, size);
        else if ((v = rmpi_pmi_word(&w, "rank")))
            parse_int(v, rank);
    }
    return 0;
}

static int server_init(void)
{
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    const char *v;

    if (send_cmd("cmd=init pmi_version=1 pmi_subversion=1") < 0 ||
        expect_reply("response_to_init", line, sizeof line, &w) < 0)
        return -1;
    if ((v = rmpi_pmi_word(&w, "rc")) && strcmp(v, "0") != 0) {
        pmi_err("the process manager refused PMI version 1.1 (rc=%s).", v);
        return -1;
    }
    if (send_cmd("cmd=get_maxes") < 0 || expect_reply("maxes", line, sizeof line, &w) < 0)
        return -1;
    if (parse_int(rmpi_pmi_word(&w, "keylen_max"), &pmi.keylen_max) < 0 ||
        parse_int(rmpi_pmi_word(&w, "vallen_max"), &pmi.vallen_max) < 0) {
        pmi_err("the process manager's maxes reply lacks keylen_max or vallen_max.");
        return -1;
    }
    if (send_cmd("cmd=get_appnum") < 0 || expect_reply("appnum", line, sizeof line, &w) < 0)
        return -1;
    /* Slurm's PMI plugins send -1: they do not know it. */
    if (parse_int(rmpi_pmi_word(&w, "appnum"), &pmi.info.appnum) < 0 || pmi.info.appnum < 0)
        pmi.info.appnum = 0;
    if (send_cmd("cmd=get_my_kvsname") < 0 || expect_reply("my_kvsname", line, sizeof line, &w) < 0)
        return -1;
    v = rmpi_pmi_word(&w, "kvsname");
    if (!v || !*v || strlen(v) >= sizeof pmi.info.kvsname) {
        pmi_err("the process manager sent no usable kvsname.");
        return -1;
    }
    strcpy(pmi.info.kvsname, v);
    return 0;
}

/* The job key from the launcher (RAILMPI_JOB_KEY); removed from the environment once read
 * so programs the rank starts do not inherit it. */
static int take_job_key(void)
{
    const char *hex = rmpi_rt_env(RMPI_AUTH_KEY_ENV);
    if (!hex || !*hex)
        return 0;
    if (rmpi_auth_unhex(hex, pmi.job_key, sizeof pmi.job_key) < 0) {
        pmi_err("%s is not %d hexadecimal digits; the launcher that started this rank is not "
                "RailMPI's mpiexec or is a different version.",
                RMPI_AUTH_KEY_ENV, 2 * RMPI_AUTH_KEY_BYTES);
        return -1;
    }
    pmi.have_key = 1;
    /* unsetenv only drops the pointer: the string stays where exec put it, which is what
     * /proc/<pid>/environ shows. Overwrite it first. */
    memset((char *)hex, '0', strlen(hex));
    unsetenv(RMPI_AUTH_KEY_ENV);
    return 0;
}

const uint8_t *rmpi_rt_job_key(void) { return pmi.have_key ? pmi.job_key : NULL; }

int rmpi_rt_set_job_key(const uint8_t key[RMPI_AUTH_KEY_BYTES])
{
    memcpy(pmi.job_key, key, sizeof pmi.job_key);
    pmi.have_key = 1;
    return 0;
}

/* PMI-2 start (Slurm's mpi/pmi2 plugin, MPICH's simple PMI-2 client): a PMI-1 init line
 * asking for version 2.0, then fullinit and job-getid as PMI-2 frames. */
static int pmi2_init(const char *jobid, int rank)
{
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    const char *v;

    pmi.pmi1_phase = 1;
    if (send_cmd("cmd=init pmi_version=2 pmi_subversion=0") < 0 ||
        expect_reply("response_to_init", line, sizeof line, &w) < 0)
        return -1;
    if (!(v = rmpi_pmi_word(&w, "rc")) || strcmp(v, "0") != 0 || !(v = rmpi_pmi_word(&w, "pmi_version")) ||
        strcmp(v, "2") != 0) {
        pmi_err("the %s does not serve PMI version 2 (it answered rc=%s pmi_version=%s); start with srun "
                "--mpi=pmi2, or set RMPI_PMI=pmi1.",
                pmi.expected, rmpi_pmi_word(&w, "rc") ? rmpi_pmi_word(&w, "rc") : "?",
                rmpi_pmi_word(&w, "pmi_version") ? rmpi_pmi_word(&w, "pmi_version") : "?");
        return -1;
    }
    pmi.pmi1_phase = 0;
    if (send_frame("cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;", jobid, rank) < 0 ||
        expect_reply("fullinit-response", line, sizeof line, &w) < 0)
        return -1;
    if (!(v = rmpi_pmi_word(&w, "rc")) || strcmp(v, "0") != 0) {
        pmi_err("the %s refused fullinit (rc=%s).", pmi.expected, v ? v : "none");
        return -1;
    }
    int srank = -1, ssize = -1;
    if (parse_int(rmpi_pmi_word(&w, "rank"), &srank) < 0 || parse_int(rmpi_pmi_word(&w, "size"), &ssize) < 0) {
        pmi_err("the %s's fullinit-response lacks rank or size.", pmi.expected);
        return -1;
    }
    pmi.info.rank = srank;
    pmi.info.size = ssize;
    if (parse_int(rmpi_pmi_word(&w, "appnum"), &pmi.info.appnum) < 0 || pmi.info.appnum < 0)
        pmi.info.appnum = 0;
    if (send_frame("cmd=job-getid;") < 0 || expect_reply("job-getid-response", line, sizeof line, &w) < 0)
        return -1;
    v = rmpi_pmi_word(&w, "jobid");
    if (!v || !*v || strlen(v) >= sizeof pmi.info.kvsname) {
        pmi_err("the %s sent no usable jobid.", pmi.expected);
        return -1;
    }
    strcpy(pmi.info.kvsname, v);
    strcpy(pmi.jobid, v);
    /* Slurm's PMI2_MAX_KEYLEN / PMI2_MAX_VALLEN; PMI-2 has no get_maxes. */
    pmi.keylen_max = 64;
    pmi.vallen_max = 1024;
    return 0;
}

#ifndef RMPI_HAVE_PMIX
/* Built without libpmix: a PMIx environment is recognised, and refused by name. */
int rmpi_pmix_init(rmpi_pm_info_t *info, const char *expected)
{
    (void)info;
    pmi_err("started by a %s, but this RailMPI was built without libpmix (install libpmix-dev and "
            "rebuild), so it cannot talk to it; start it with srun --mpi=pmi2, mpiexec or mpiexec.hydra.",
            expected);
    return -1;
}
int rmpi_pmix_put(const char *key, const char *value) { return (void)key, (void)value, -1; }
int rmpi_pmix_fence(void) { return -1; }
int rmpi_pmix_get(const char *key, char *value, size_t len) { return (void)key, (void)value, (void)len, -1; }
int rmpi_pmix_finalize(void) { return -1; }
void rmpi_pmix_abort(int code, const char *msg) { (void)code, (void)msg; }
int rmpi_pmix_spawn(int count, const rmpi_pmi_spawn_cmd_t *cmds, int npre, const char *const *pkeys,
                    const char *const *pvals)
{
    return (void)count, (void)cmds, (void)npre, (void)pkeys, (void)pvals, -1;
}
int rmpi_pmix_names(const char *cmd, const char *service, const char *port, char *out, size_t len)
{
    return (void)cmd, (void)service, (void)port, (void)out, (void)len, -1;
}
#endif

/* Which process manager started us (src/rt/README.md, "Which wire"). */
static int pick_kind(const char *fd_env, const char *port_env)
{
    switch (rmpi_knobs.PMI) {
    case RMPI_PMI_PMI1: return RMPI_PM_PMI1;
    case RMPI_PMI_PMI2: return RMPI_PM_PMI2;
    case RMPI_PMI_PMIX: return RMPI_PM_PMIX;
    default: break;
    }
    const char *px = rmpi_rt_env("PMIX_NAMESPACE");
    if (px && *px)
        return RMPI_PM_PMIX;
    const char *jobid = rmpi_rt_env("PMI_JOBID");
    if (fd_env && *fd_env && jobid && *jobid)
        return RMPI_PM_PMI2;
    if ((fd_env && *fd_env) || (port_env && *port_env))
        return RMPI_PM_PMI1;
    return RMPI_PM_SINGLETON;
}

int rmpi_pmi_init(rmpi_pm_info_t *info)
{
    if (pmi.initialized) {
        *info = pmi.info;
        return 0;
    }
    const char *fd_env = rmpi_rt_env("PMI_FD");
    const char *port_env = rmpi_rt_env("PMI_PORT");
    const char *rank_env = rmpi_rt_env("PMI_RANK");
    const char *size_env = rmpi_rt_env("PMI_SIZE");
    int rank = -1, size = -1;

    memset(&pmi.info, 0, sizeof pmi.info);
    pmi.rlen = 0;
    if (take_job_key() < 0)
        return -1;
    pmi.kind = pick_kind(fd_env, port_env);
    if (pmi.kind < 0)
        return -1;
    pmi.info.kind = pmi.kind;
    if (pmi.kind == RMPI_PM_PMIX) {
        snprintf(pmi.expected, sizeof pmi.expected, "PMIx server (PMIX_NAMESPACE=%.64s)",
                 rmpi_rt_env("PMIX_NAMESPACE") ? rmpi_rt_env("PMIX_NAMESPACE") : "unset");
        if (rmpi_pmix_init(&pmi.info, pmi.expected) < 0)
            return -1;
        pmi.keylen_max = 512;
        pmi.vallen_max = 1 << 16;
        pmi.initialized = 1;
        *info = pmi.info;
        return 0;
    }
    if (rank_env && parse_int(rank_env, &rank) < 0) {
        pmi_err("PMI_RANK=\"%s\" is not a number.", rank_env);
        return -1;
    }
    if (size_env && parse_int(size_env, &size) < 0) {
        pmi_err("PMI_SIZE=\"%s\" is not a number.", size_env);
        return -1;
    }

    if (pmi.kind == RMPI_PM_SINGLETON) {
        /* srun without --mpi starts every task as a singleton of its own: say so rather
         * than run N jobs of one rank. */
        const char *ntasks = rmpi_rt_env("SLURM_STEP_NUM_TASKS");
        int nt = 0;
        if (ntasks && parse_int(ntasks, &nt) == 0 && nt > 1) {
            pmi_err("started by Slurm as one of %d tasks, but without a process-manager interface "
                    "(no PMI_FD, PMIX_NAMESPACE); run srun --mpi=pmi2 or --mpi=pmix.",
                    nt);
            return -1;
        }
        pmi.fd = -1;
        pmi.info.rank = 0;
        pmi.info.size = 1;
        pmi.info.singleton = 1;
        /* The job name is also the world's identity for dynamic processes: unique per host
         * and process. */
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        snprintf(pmi.info.kvsname, sizeof pmi.info.kvsname, "singleton_kvs_%.64s_%d", host, (int)getpid());
        pmi.keylen_max = 256;
        pmi.vallen_max = 1 << 16;
        pmi.initialized = 1;
        *info = pmi.info;
        return 0;
    }

    if (fd_env && *fd_env) {
        int fd;
        snprintf(pmi.expected, sizeof pmi.expected, "%s server on PMI_FD=%.16s",
                 pmi.kind == RMPI_PM_PMI2 ? "PMI-2" : "PMI-1", fd_env);
        if (parse_int(fd_env, &fd) < 0 || fd < 0 || fcntl(fd, F_GETFD) < 0) {
            pmi_err("PMI_FD=\"%s\" is not an open file descriptor; the %s process manager that set it "
                    "did not hand it to this process.",
                    fd_env, pmi.kind == RMPI_PM_PMI2 ? "PMI-2" : "PMI-1");
            return -1;
        }
        pmi.fd = fd;
        if (rank < 0 || (size < 0 && pmi.kind == RMPI_PM_PMI1)) {
            pmi_err("PMI_FD is set but PMI_RANK or PMI_SIZE is missing.");
            return -1;
        }
    } else {
        snprintf(pmi.expected, sizeof pmi.expected, "PMI-1 server at PMI_PORT=%.64s", port_env);
        if (pmi.kind == RMPI_PM_PMI2) {
            pmi_err("RMPI_PMI=pmi2 needs PMI_FD (PMI-2 over PMI_PORT is not supported).");
            return -1;
        }
        pmi.fd = connect_port(port_env);
        if (pmi.fd < 0)
            return -1;
        const char *id_env = rmpi_rt_env("PMI_ID");
        int id = rank;
        if (id_env && parse_int(id_env, &id) < 0) {
            pmi_err("PMI_ID=\"%s\" is not a number.", id_env);
            return -1;
        }
        int srank = -1, ssize = -1;
        if (port_handshake(id < 0 ? 0 : id, &ssize, &srank) < 0)
            return -1;
        if (rank < 0)
            rank = srank;
        if (size < 0)
            size = ssize;
    }
    /* Programs the rank starts must not inherit the process-manager connection. */
    fcntl(pmi.fd, F_SETFD, FD_CLOEXEC);
    if (pmi.kind == RMPI_PM_PMI2) {
        const char *jobid = rmpi_rt_env("PMI_JOBID");
        if (pmi2_init(jobid ? jobid : "", rank) < 0)
            return -1;
        if (size >= 0 && size != pmi.info.size) {
            pmi_err("PMI_SIZE=%d but the %s says the job has %d ranks.", size, pmi.expected, pmi.info.size);
            return -1;
        }
        rank = pmi.info.rank;
        size = pmi.info.size;
    }
    if (rank < 0 || size <= 0 || rank >= size) {
        pmi_err("the %s gave rank %d of size %d, which is not valid.", pmi.expected, rank, size);
        return -1;
    }
    pmi.info.rank = rank;
    pmi.info.size = size;
    if (pmi.kind == RMPI_PM_PMI1 && server_init() < 0)
        return -1;
    pmi.initialized = 1;
    *info = pmi.info;
    return 0;
}

static int needs_encoding(const char *v)
{
    if (v[0] == '~')
        return 1;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p <= ' ' || *p == '=' || *p == ';' || *p >= 0x7f)
            return 1;
    return 0;
}

int rmpi_pmi_put(const char *key, const char *value)
{
    if (!pmi.initialized) {
        pmi_err("put of key \"%s\" before PMI was initialised.", key);
        return -1;
    }
    if (!*key || strlen(key) >= (size_t)pmi.keylen_max || needs_encoding(key)) {
        pmi_err("key \"%s\" is empty, longer than %d characters, starts with '~' or contains "
                "spaces, '=' or ';'.",
                key, pmi.keylen_max - 1);
        return -1;
    }
    size_t vlen = strlen(value);
    char *enc = NULL;
    const char *wire = value;
    if (needs_encoding(value)) {
        static const char hex[] = "0123456789abcdef";
        enc = rmpi_xmalloc(2 * vlen + 2);
        enc[0] = '~';
        for (size_t i = 0; i < vlen; i++) {
            enc[1 + 2 * i] = hex[(unsigned char)value[i] >> 4];
            enc[2 + 2 * i] = hex[(unsigned char)value[i] & 15];
        }
        enc[1 + 2 * vlen] = '\0';
        wire = enc;
    }
    int rc = 0;
    if (strlen(wire) >= (size_t)pmi.vallen_max) {
        pmi_err("the value of key \"%s\" needs %zu bytes on the wire; the process manager allows %d%s.", key,
                strlen(wire), pmi.vallen_max - 1,
                enc ? " (values with spaces, '=' or ';' are hex-encoded and take twice the space)" : "");
        rc = -1;
    } else if (pmi.kind == RMPI_PM_PMIX) {
        rc = rmpi_pmix_put(key, wire);
    } else if (pmi.kind == RMPI_PM_SINGLETON) {
        struct pmi_kv *kv;
        for (kv = pmi.local; kv && strcmp(kv->key, key) != 0; kv = kv->next)
            ;
        if (!kv) {
            kv = rmpi_xcalloc(1, sizeof *kv);
            kv->key = rmpi_xstrdup(key);
            kv->next = pmi.local;
            pmi.local = kv;
        }
        free(kv->value);
        kv->value = rmpi_xstrdup(wire);
    } else {
        char line[PMI_LINE_MAX];
        rmpi_pmi_words_t w;
        const char *v;
        if (pmi.kind == RMPI_PM_PMI2
                ? send_frame("cmd=kvs-put;key=%s;value=%s;", key, wire) < 0 ||
                      expect_reply("kvs-put-response", line, sizeof line, &w) < 0
                : send_cmd("cmd=put kvsname=%s key=%s value=%s", pmi.info.kvsname, key, wire) < 0 ||
                      expect_reply("put_result", line, sizeof line, &w) < 0)
            rc = -1;
        else if ((v = rmpi_pmi_word(&w, "rc")) && strcmp(v, "0") != 0) {
            const char *msg = rmpi_pmi_word(&w, pmi.kind == RMPI_PM_PMI2 ? "errmsg" : "msg");
            pmi_err("the process manager refused the put of key \"%s\" (rc=%s%s%s).", key, v, msg ? ", " : "",
                    msg ? msg : "");
            rc = -1;
        }
    }
    free(enc);
    return rc;
}

int rmpi_pmi_fence(void)
{
    if (!pmi.initialized) {
        pmi_err("fence before PMI was initialised.");
        return -1;
    }
    if (pmi.kind == RMPI_PM_SINGLETON)
        return 0;
    if (pmi.kind == RMPI_PM_PMIX)
        return rmpi_pmix_fence();
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    int pmi2 = pmi.kind == RMPI_PM_PMI2;
    if ((pmi2 ? send_frame("cmd=kvs-fence;") : send_cmd("cmd=barrier_in")) < 0)
        return -1;
    /* The fence waits for the slowest rank; a dead rank ends the job through the process
     * manager, so no bound here. */
    pmi.deadline = 0;
    if (expect_reply(pmi2 ? "kvs-fence-response" : "barrier_out", line, sizeof line, &w) < 0)
        return -1;
    const char *rc = rmpi_pmi_word(&w, "rc");
    if (rc && strcmp(rc, "0") != 0) {
        const char *msg = rmpi_pmi_word(&w, pmi2 ? "errmsg" : "msg");
        pmi_err("the %s failed the fence (rc=%s%s%s).", pmi.expected, rc, msg ? ", " : "", msg ? msg : "");
        return -1;
    }
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Undo the put-side encoding of wire into value[len]. */
static int decode_value(const char *key, const char *wire, char *value, size_t len)
{
    if (wire[0] != '~') {
        if (strlen(wire) >= len) {
            pmi_err("the value of key \"%s\" (%zu bytes) does not fit the caller's %zu-byte buffer.", key, strlen(wire),
                    len);
            return -1;
        }
        strcpy(value, wire);
        return 0;
    }
    size_t hl = strlen(wire + 1);
    if (hl % 2 || hl / 2 >= len) {
        pmi_err("the value of key \"%s\" is malformed or does not fit the caller's %zu-byte buffer.", key, len);
        return -1;
    }
    for (size_t i = 0; i < hl / 2; i++) {
        int hi = hexval(wire[1 + 2 * i]), lo = hexval(wire[2 + 2 * i]);
        if (hi < 0 || lo < 0) {
            pmi_err("the value of key \"%s\" has a malformed encoding.", key);
            return -1;
        }
        value[i] = (char)(hi << 4 | lo);
    }
    value[hl / 2] = '\0';
    return 0;
}

int rmpi_pmi_get(const char *key, char *value, size_t len)
{
    if (!pmi.initialized) {
        pmi_err("get of key \"%s\" before PMI was initialised.", key);
        return -1;
    }
    if (len == 0)
        return -1;
    if (pmi.kind == RMPI_PM_SINGLETON) {
        for (struct pmi_kv *kv = pmi.local; kv; kv = kv->next)
            if (strcmp(kv->key, key) == 0)
                return decode_value(key, kv->value, value, len);
        return -1;
    }
    if (!*key || strlen(key) >= (size_t)pmi.keylen_max || needs_encoding(key))
        return -1;
    if (pmi.kind == RMPI_PM_PMIX) {
        char *wire = rmpi_xmalloc((size_t)pmi.vallen_max);
        int rc = rmpi_pmix_get(key, wire, (size_t)pmi.vallen_max);
        if (rc == 0)
            rc = decode_value(key, wire, value, len);
        free(wire);
        return rc;
    }
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    if (pmi.kind == RMPI_PM_PMI2) {
        if (send_frame("cmd=kvs-get;jobid=%s;srcid=-1;key=%s;", pmi.jobid, key) < 0 ||
            expect_reply("kvs-get-response", line, sizeof line, &w) < 0)
            return -1;
        const char *found = rmpi_pmi_word(&w, "found");
        if (!found || strcmp(found, "TRUE") != 0)
            return -1;
    } else if (send_cmd("cmd=get kvsname=%s key=%s", pmi.info.kvsname, key) < 0 ||
               expect_reply("get_result", line, sizeof line, &w) < 0) {
        return -1;
    }
    const char *rc = rmpi_pmi_word(&w, "rc"), *v = rmpi_pmi_word(&w, "value");
    if (!rc || strcmp(rc, "0") != 0 || !v)
        return -1;
    return decode_value(key, v, value, len);
}

int rmpi_pmi_finalize(void)
{
    if (!pmi.initialized)
        return 0;
    int rc = 0;
    if (pmi.kind == RMPI_PM_PMIX)
        rc = rmpi_pmix_finalize();
    if (pmi.fd >= 0) {
        char line[PMI_LINE_MAX];
        rmpi_pmi_words_t w;
        if (pmi.kind == RMPI_PM_PMI2
                ? send_frame("cmd=finalize;") < 0 || expect_reply("finalize-response", line, sizeof line, &w) < 0
                : send_cmd("cmd=finalize") < 0 || expect_reply("finalize_ack", line, sizeof line, &w) < 0)
            rc = -1;
        close(pmi.fd);
        pmi.fd = -1;
    }
    while (pmi.local) {
        struct pmi_kv *kv = pmi.local;
        pmi.local = kv->next;
        free(kv->key);
        free(kv->value);
        free(kv);
    }
    pmi.initialized = 0;
    return rc;
}

void rmpi_pmi_watch(void)
{
    static uint64_t last;
    if (pmi.fd < 0 || !pmi.initialized)
        return;
    uint64_t now = rmpi_time_ns();
    if (now - last < 100000000ull)
        return;
    last = now;
    /* The server sends nothing unasked, so readable means closed (or a stray byte, which
     * MSG_PEEK leaves for the next reply to report). */
    struct pollfd p = {.fd = pmi.fd, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
        return;
    char b;
    ssize_t n = recv(pmi.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && errno == ENOTSOCK)
        n = (p.revents & (POLLHUP | POLLERR)) ? 0 : 1;
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
        return;
    close(pmi.fd);
    pmi.fd = -1;
    run_abort_hooks();
    pmi_err("the connection to the process manager closed while this rank runs: the launcher is gone; "
            "ending this rank.");
    rmpi_pmi_abort(1, NULL);
}

_Noreturn void rmpi_pmi_abort(int code, const char *msg)
{
    run_abort_hooks();
    if (msg && *msg) {
        size_t n = strlen(msg);
        fprintf(stderr, "[rmpi rank %d] %s%s", pmi.info.rank, msg, msg[n - 1] == '\n' ? "" : "\n");
    }
    fflush(NULL);
    if (pmi.initialized && pmi.kind == RMPI_PM_PMIX)
        rmpi_pmix_abort(code, msg);
    if (pmi.initialized && pmi.fd >= 0) {
        /* PMI-2 has no exit code: Slurm kills the step, and srun reports the signal. */
        if (pmi.kind == RMPI_PM_PMI2)
            send_frame("cmd=abort;isworld=TRUE;");
        else
            send_cmd("cmd=abort exitcode=%d", code);
        /* Give the process manager a moment to read the request before the exit below
         * makes it look like an ordinary failure; it usually kills us first. */
        struct pollfd p = {.fd = pmi.fd, .events = POLLIN};
        poll(&p, 1, 2000);
    }
    _exit(code);
}

/* Values of the multi-line spawn command are the rest of their line: no newline inside. */
static int spawn_value_ok(const char *what, const char *v)
{
    if (!strchr(v, '\n') && strlen(v) < PMI_LINE_MAX / 2)
        return 1;
    pmi_err("the spawn %s \"%.40s...\" holds a newline or is too long for the PMI spawn command.", what, v);
    return 0;
}

/* PMI-2 spawn: one frame with every command (Slurm's mpi/pmi2 forwards it to srun). PMI-2
 * values cannot hold ';' (no escape is understood by every server). Like the PMI-1 spawn,
 * its reply is awaited without a bound. */
static int pmi2_spawn(int count, const rmpi_pmi_spawn_cmd_t *cmds, int npre, const char *const *pkeys,
                      const char *const *pvals)
{
    size_t cap = PMI_LINE_MAX, len = 0;
    char *f = rmpi_xmalloc(cap);
    int bad = 0;
#define ADD(...)                                            \
    do {                                                    \
        int n_ = snprintf(f + len, cap - len, __VA_ARGS__); \
        if (n_ < 0 || (size_t)n_ >= cap - len)              \
            bad = 1;                                        \
        else                                                \
            len += (size_t)n_;                              \
    } while (0)
#define ADDV(k, v)                                 \
    do {                                           \
        if (strchr((v), ';') || strchr((v), '\n')) \
            bad = 2;                               \
        ADD(k "%s;", (v));                         \
    } while (0)
    ADD("cmd=spawn;ncmds=%d;preputcount=%d;", count, npre);
    for (int k = 0; k < npre && !bad; k++) {
        ADD("ppkey%d=%s;", k, pkeys[k]);
        ADD("ppval%d=%s;", k, pvals[k]);
        if (strchr(pkeys[k], ';') || strchr(pvals[k], ';'))
            bad = 2;
    }
    for (int i = 0; i < count && !bad; i++) {
        const rmpi_pmi_spawn_cmd_t *c = &cmds[i];
        int argc = 0;
        while (c->argv && c->argv[argc])
            argc++;
        ADDV("subcmd=", c->cmd);
        ADD("maxprocs=%d;argc=%d;", c->maxprocs, argc);
        for (int a = 0; a < argc && !bad; a++) {
            ADD("argv%d=", a);
            ADDV("", c->argv[a]);
        }
        ADD("infokeycount=%d;", c->ninfo);
        for (int k = 0; k < c->ninfo && !bad; k++) {
            ADD("infokey%d=", k);
            ADDV("", c->ikeys[k]);
            ADD("infoval%d=", k);
            ADDV("", c->ivals[k]);
        }
    }
#undef ADDV
#undef ADD
    int rc = -1;
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    if (bad)
        pmi_err("the spawn request %s.",
                bad == 2 ? "holds a ';' or newline, which PMI-2 cannot carry" : "is too long for one PMI-2 command");
    else if (send_frame("%s", f) == 0) {
        pmi.deadline = 0;
        if (expect_reply("spawn-response", line, sizeof line, &w) == 0) {
            const char *v = rmpi_pmi_word(&w, "rc"), *msg = rmpi_pmi_word(&w, "errmsg");
            rc = v && strcmp(v, "0") == 0 ? 0 : -1;
            if (rc)
                pmi_err("the %s could not spawn the processes (rc=%s%s%s).", pmi.expected, v ? v : "?", msg ? ", " : "",
                        msg ? msg : "");
        }
    }
    free(f);
    return rc;
}

int rmpi_pmi_spawn(int count, const rmpi_pmi_spawn_cmd_t *cmds, int npre, const char *const *pkeys,
                   const char *const *pvals)
{
    if (pmi.initialized && pmi.kind == RMPI_PM_PMIX)
        return rmpi_pmix_spawn(count, cmds, npre, pkeys, pvals);
    if (!pmi.initialized || pmi.fd < 0)
        return -1;
    if (pmi.kind == RMPI_PM_PMI2)
        return pmi2_spawn(count, cmds, npre, pkeys, pvals);
    for (int i = 0; i < count; i++) {
        const rmpi_pmi_spawn_cmd_t *c = &cmds[i];
        int argc = 0;
        while (c->argv && c->argv[argc])
            argc++;
        if (!spawn_value_ok("command", c->cmd))
            return -1;
        if (send_cmd("mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=%d\nspawnssofar=%d\nargcnt=%d", c->maxprocs, c->cmd,
                     count, i + 1, argc) < 0)
            return -1;
        for (int a = 0; a < argc; a++)
            if (!spawn_value_ok("argument", c->argv[a]) || send_cmd("arg%d=%s", a + 1, c->argv[a]) < 0)
                return -1;
        if (send_cmd("preput_num=%d", npre) < 0)
            return -1;
        for (int k = 0; k < npre; k++)
            if (send_cmd("preput_key_%d=%s\npreput_val_%d=%s", k, pkeys[k], k, pvals[k]) < 0)
                return -1;
        if (send_cmd("info_num=%d", c->ninfo) < 0)
            return -1;
        for (int k = 0; k < c->ninfo; k++)
            if (!spawn_value_ok("info value", c->ivals[k]) ||
                send_cmd("info_key_%d=%s\ninfo_val_%d=%s", k, c->ikeys[k], k, c->ivals[k]) < 0)
                return -1;
        if (send_cmd("endcmd") < 0)
            return -1;
    }
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    /* Starting processes may wait for resources (Slurm queues the children's step): the
     * process manager answers when it can, or ends the job. */
    pmi.deadline = 0;
    if (expect_reply("spawn_result", line, sizeof line, &w) < 0)
        return -1;
    const char *rc = rmpi_pmi_word(&w, "rc");
    if (!rc || strcmp(rc, "0") != 0) {
        const char *msg = rmpi_pmi_word(&w, "msg");
        pmi_err("the process manager could not spawn the processes (rc=%s%s%s).", rc ? rc : "?", msg ? ", " : "",
                msg ? msg : "");
        return -1;
    }
    return 0;
}

/* One name-service request: rc of the reply, or -1; port filled by lookup. */
static int name_request(const char *cmd, const char *reply, const char *service, const char *port, char *out,
                        size_t len)
{
    if (pmi.initialized && pmi.kind == RMPI_PM_PMIX)
        return rmpi_pmix_names(cmd, service, port, out, len);
    if (!pmi.initialized || pmi.fd < 0 || needs_encoding(service) || (port && needs_encoding(port)))
        return -1;
    char line[PMI_LINE_MAX];
    rmpi_pmi_words_t w;
    int sent;
    if (pmi.kind == RMPI_PM_PMI2) {
        /* PMI-2 names: name-publish / name-unpublish / name-lookup, the port in value= */
        const char *op = cmd[0] == 'p' ? "publish" : cmd[0] == 'u' ? "unpublish" : "lookup";
        char want[40];
        snprintf(want, sizeof want, "name-%s-response", op);
        sent = port ? send_frame("cmd=name-%s;name=%s;port=%s;", op, service, port)
                    : send_frame("cmd=name-%s;name=%s;", op, service);
        if (sent < 0 || expect_reply(want, line, sizeof line, &w) < 0)
            return -1;
    } else {
        sent = port ? send_cmd("cmd=%s service=%s port=%s", cmd, service, port)
                    : send_cmd("cmd=%s service=%s", cmd, service);
        if (sent < 0 || expect_reply(reply, line, sizeof line, &w) < 0)
            return -1;
    }
    const char *rc = rmpi_pmi_word(&w, "rc"), *v = rmpi_pmi_word(&w, pmi.kind == RMPI_PM_PMI2 ? "value" : "port");
    if (!rc || strcmp(rc, "0") != 0)
        return 1;
    if (out && (!v || strlen(v) >= len))
        return 1;
    if (out)
        strcpy(out, v);
    return 0;
}

int rmpi_pmi_publish(const char *service, const char *port)
{
    return name_request("publish_name", "publish_result", service, port, NULL, 0);
}

int rmpi_pmi_unpublish(const char *service)
{
    return name_request("unpublish_name", "unpublish_result", service, NULL, NULL, 0);
}

int rmpi_pmi_lookup(const char *service, char *port, size_t len)
{
    return name_request("lookup_name", "lookup_result", service, NULL, port, len);
}
