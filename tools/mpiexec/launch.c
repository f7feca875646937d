#include "mpiexec.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

static int same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return 0;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    return 0;
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

int mpx_host_is_local(const char *host)
{
    if (strcmp(host, "localhost") == 0)
        return 1;
    char me[256] = "";
    if (gethostname(me, sizeof me - 1) == 0) {
        if (strcmp(host, me) == 0)
            return 1;
        /* "node1" and "node1.cluster" name the same machine. */
        size_t hs = strcspn(host, "."), ms = strcspn(me, ".");
        if (hs == ms && strncmp(host, me, hs) == 0 && (!host[hs] || !me[ms]))
            return 1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        return 0;
    struct ifaddrs *ifs = NULL;
    getifaddrs(&ifs);
    int local = 0;
    for (struct addrinfo *ai = res; ai && !local; ai = ai->ai_next) {
        if (is_loopback(ai->ai_addr))
            local = 1;
        for (struct ifaddrs *i = ifs; i && !local; i = i->ifa_next)
            if (i->ifa_addr && same_addr(i->ifa_addr, ai->ai_addr))
                local = 1;
    }
    freeifaddrs(ifs);
    freeaddrinfo(res);
    return local;
}

int mpx_pick_pmi_addr(const struct mpx_opts *o, char *addr, size_t len)
{
    if (o->pmi_addr) {
        snprintf(addr, len, "%s", o->pmi_addr);
        return 0;
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0) {
        fprintf(stderr, "mpiexec: cannot list network interfaces: %s.\n", strerror(errno));
        return -1;
    }
    int found = 0;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        if (o->pmi_iface ? strcmp(i->ifa_name, o->pmi_iface) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, addr, (socklen_t)len);
        found = 1;
    }
    freeifaddrs(ifs);
    if (!found && o->pmi_iface) {
        fprintf(stderr, "mpiexec: interface %s (--pmi-iface) has no IPv4 address that is up.\n", o->pmi_iface);
        return -1;
    }
    if (!found)
        snprintf(addr, len, "127.0.0.1");
    return 0;
}

/* Listen on the PMI address only: remote ranks are told that address, and nothing else
 * on other interfaces needs to reach mpiexec. */
int mpx_listen(struct mpx_job *job)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
    int rc = getaddrinfo(job->pmi_addr, "0", &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "mpiexec: cannot resolve the PMI address %s: %s.\n", job->pmi_addr, gai_strerror(rc));
        return -1;
    }
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 1024) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        fprintf(stderr, "mpiexec: cannot open the PMI listening socket on %s: %s.\n", job->pmi_addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    job->listen_fd = fd;
    job->pmi_port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                   : ((struct sockaddr_in *)&sa)->sin_port);
    return 0;
}

struct strbuf {
    char *s;
    size_t len, cap;
};

static void sb_add(struct strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) {
            perror("mpiexec");
            exit(1);
        }
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_str(struct strbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

/* POSIX shell single quoting: 'it'\''s' */
static void sb_quote(struct strbuf *b, const char *s)
{
    sb_add(b, "'", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            sb_str(b, "'\\''");
        else
            sb_add(b, p, 1);
    }
    sb_add(b, "'", 1);
}

static void sb_quote_kv(struct strbuf *b, const char *name, const char *value)
{
    size_t n = strlen(name) + strlen(value) + 2;
    char *kv = malloc(n);
    if (!kv) {
        perror("mpiexec");
        exit(1);
    }
    snprintf(kv, n, "%s=%s", name, value);
    sb_add(b, " ", 1);
    sb_quote(b, kv);
    free(kv);
}

static int env_overridden(const struct mpx_opts *o, const char *name, size_t nlen)
{
    for (int i = 0; i < o->nenv; i++)
        if (strlen(o->env[i].name) == nlen && strncmp(o->env[i].name, name, nlen) == 0)
            return 1;
    return 0;
}

/* The job key never travels as a variable on the command line, whatever the options say. */
static int is_key_var(const char *name, size_t len)
{
    return len == strlen(RMPI_AUTH_KEY_ENV) && strncmp(name, RMPI_AUTH_KEY_ENV, len) == 0;
}

/* Variables -genvall does not carry to another host: its shell's, its process manager's. */
static int host_var(const char *name, size_t len)
{
    static const char *const skip[] = {"HOSTNAME", "PWD",           "OLDPWD", "SHLVL",  "_",          "HOME",
                                       "USER",     "LOGNAME",       "SHELL",  "TMPDIR", "SSH_CLIENT", "SSH_CONNECTION",
                                       "SSH_TTY",  "SSH_AUTH_SOCK", "DISPLAY"};
    if (len >= 4 && strncmp(name, "PMI_", 4) == 0)
        return 1;
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strlen(skip[i]) == len && strncmp(name, skip[i], len) == 0)
            return 1;
    return 0;
}

char *mpx_remote_command(const struct mpx_job *job, const struct mpx_rank *r)
{
    const struct mpx_opts *o = job->opts;
    struct strbuf b = {0};
    char num[160];
    /* The job key arrives on the agent's stdin and is read by a shell builtin, so it is on
     * no command line (ps, ssh logs); env passes it on to the rank. */
    sb_str(&b, "if ! IFS= read -r " RMPI_AUTH_KEY_ENV "; then echo 'mpiexec: the launch agent gave the remote "
               "command no stdin, which brings the job key' >&2; exit 126; fi; export " RMPI_AUTH_KEY_ENV " && cd ");
    sb_quote(&b, r->wdir);
    sb_str(&b, " && exec env");
    snprintf(num, sizeof num, "%s:%d", job->pmi_addr, job->pmi_port);
    sb_quote_kv(&b, "PMI_PORT", num);
    snprintf(num, sizeof num, "%d", r->rank);
    sb_quote_kv(&b, "PMI_ID", num);
    snprintf(num, sizeof num, "%d", r->wrank);
    sb_quote_kv(&b, "PMI_RANK", num);
    snprintf(num, sizeof num, "%d", job->worlds[r->world].n);
    sb_quote_kv(&b, "PMI_SIZE", num);
    /* Knobs follow the job to other hosts, as they do for local ranks through environ; with
     * -genvall everything does, except what belongs to this host or this launch. */
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (eq && (strncmp(*e, "RMPI_", 5) == 0 || (o->genvall && !host_var(*e, (size_t)(eq - *e)))) &&
            !env_overridden(o, *e, (size_t)(eq - *e)) && !is_key_var(*e, (size_t)(eq - *e))) {
            sb_add(&b, " ", 1);
            sb_quote(&b, *e);
        }
    }
    for (int i = 0; i < o->nenv; i++) {
        const char *v = o->env[i].value ? o->env[i].value : getenv(o->env[i].name);
        if (v && !is_key_var(o->env[i].name, strlen(o->env[i].name)))
            sb_quote_kv(&b, o->env[i].name, v);
    }
    /* mpiexec does not know the other host's cores: the rank binds itself at MPI_Init. */
    if (r->bind_env[0])
        sb_quote_kv(&b, "RMPI_BIND", r->bind_env);
    for (char **a = r->argv; *a; a++) {
        sb_add(&b, " ", 1);
        sb_quote(&b, *a);
    }
    return b.s;
}

static void child_fail(const struct mpx_rank *r, const char *what, const char *arg)
{
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "mpiexec: rank %d cannot %s %s on %s: %s.\n", r->rank, what, arg, r->host,
                     strerror(errno));
    if (n > 0)
        mpx_write_all(2, msg, n < (int)sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(127);
}

int mpx_launch(struct mpx_job *job, struct mpx_rank *r)
{
    const struct mpx_opts *o = job->opts;
    int sv[2] = {-1, -1}, inp[2] = {-1, -1}, outp[2], errp[2];
    if (r->local && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        goto fail;
    if (!r->local && pipe2(inp, O_CLOEXEC) < 0)
        goto fail;
    if (pipe2(outp, O_CLOEXEC) < 0)
        goto fail;
    if (pipe2(errp, O_CLOEXEC) < 0)
        goto fail;
    char *cmd = r->local ? NULL : mpx_remote_command(job, r);
    if (o->verbose) {
        if (r->local)
            fprintf(stderr, "mpiexec: rank %d on %s (local): %s\n", r->rank, r->host, r->argv[0]);
        else {
            fprintf(stderr, "mpiexec: rank %d on %s (remote):", r->rank, r->host);
            for (char **a = o->agent; *a; a++)
                fprintf(stderr, " %s", *a);
            fprintf(stderr, " %s %s\n", r->host, cmd);
        }
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        free(cmd);
        goto fail;
    }
    if (pid == 0) {
        /* Own process group, so ending the job can signal the rank and its children; and
         * no inherited handler may write into mpiexec's self-pipe before exec. */
        setpgid(0, 0);
        /* If mpiexec dies (even by SIGKILL) the rank or agent goes with it; exec keeps this.
         * mpiexec may have died before the prctl: then the parent is already someone else. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        if (r->local) {
            int null = open("/dev/null", O_RDONLY);
            if (null >= 0 && null != 0) {
                dup2(null, 0);
                close(null);
            }
        } else {
            dup2(inp[0], 0);
        }
        dup2(outp[1], 1);
        dup2(errp[1], 2);
        if (r->local) {
            char num[32];
            fcntl(sv[1], F_SETFD, 0);
            snprintf(num, sizeof num, "%d", sv[1]);
            setenv("PMI_FD", num, 1);
            snprintf(num, sizeof num, "%d", r->wrank);
            setenv("PMI_RANK", num, 1);
            snprintf(num, sizeof num, "%d", job->worlds[r->world].n);
            setenv("PMI_SIZE", num, 1);
            /* mpiexec may itself run under a process manager. */
            unsetenv("PMI_PORT");
            unsetenv("PMI_ID");
            for (int i = 0; i < o->nenv; i++)
                if (o->env[i].value)
                    setenv(o->env[i].name, o->env[i].value, 1);
            setenv(RMPI_AUTH_KEY_ENV, job->key_hex, 1);
            /* Bound here already (or left unbound on purpose): the library must not redo it. */
            unsetenv("RMPI_BIND");
            mpx_bind_apply(r);
            if (chdir(r->wdir) < 0)
                child_fail(r, "change to directory", r->wdir);
            execvp(r->argv[0], r->argv);
            child_fail(r, "run", r->argv[0]);
        }
        int na = 0;
        while (o->agent[na])
            na++;
        char **av = calloc((size_t)na + 3, sizeof *av);
        if (!av)
            _exit(127);
        for (int i = 0; i < na; i++)
            av[i] = o->agent[i];
        av[na] = (char *)r->host;
        av[na + 1] = cmd;
        execvp(av[0], av);
        child_fail(r, "run the launch agent", av[0]);
    }
    free(cmd);
    setpgid(pid, pid);
    r->pid = pid;
    close(outp[1]);
    close(errp[1]);
    if (!r->local) {
        /* 65 bytes fit any pipe: this write cannot block. An agent that died already makes
         * it fail, which its exit status reports. */
        char line[sizeof job->key_hex + 1];
        snprintf(line, sizeof line, "%s\n", job->key_hex);
        close(inp[0]);
        if (mpx_write_all(inp[1], line, strlen(line)) < 0 && o->verbose)
            fprintf(stderr, "mpiexec: could not hand rank %d's agent the job key: %s.\n", r->rank, strerror(errno));
        close(inp[1]);
    }
    mpx_ostream_init(&r->out, outp[0], 1);
    mpx_ostream_init(&r->err, errp[0], 2);
    if (r->local) {
        close(sv[1]);
        fcntl(sv[0], F_SETFL, O_NONBLOCK);
        r->conn = mpx_conn_new(sv[0], r->rank);
    }
    return 0;
fail:
    fprintf(stderr, "mpiexec: cannot start rank %d on %s: %s.\n", r->rank, r->host, strerror(errno));
    return -1;
}

void mpx_signal_rank(struct mpx_rank *r, int sig)
{
    if (r->pid <= 0)
        return;
    if (kill(-r->pid, sig) < 0)
        kill(r->pid, sig);
}

const char *mpx_signame(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
        {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
        {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
        {SIGCHLD, "SIGCHLD"}, {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"}, {SIGXCPU, "SIGXCPU"},
        {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return "unknown signal";
}

int mpx_shm_cleanup(const struct mpx_job *job)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        for (int w = 0; w < job->nworlds; w++) {
            char prefix[RMPI_SHM_PREFIX_MAX], name[512];
            rmpi_shm_job_prefix(job->worlds[w].kvsname, prefix, sizeof prefix);
            if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
                continue;
            snprintf(name, sizeof name, "/%s", e->d_name);
            removed += shm_unlink(name) == 0;
            break;
        }
    }
    closedir(d);
    return removed;
}
