#include "mpiexec.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mpx_usage(FILE *f)
{
    fputs("Usage: mpiexec [options] PROGRAM [ARGS...]\n"
          "Starts PROGRAM as the ranks of one MPI job and serves them the PMI-1 protocol.\n"
          "\n"
          "  -n, -np N               number of ranks (default: the total slots of the hosts, N per\n"
          "                          host with -ppn, or 1)\n"
          "  -host, -hosts, --host H1,H2:2,...\n"
          "                          hosts with optional slot counts; ranks fill the slots in\n"
          "                          order and wrap around when -n exceeds them\n"
          "  -f, -hostfile, -machinefile FILE\n"
          "                          one host per line: \"host\", \"host:N\" or \"host slots=N\";\n"
          "                          '#' starts a comment\n"
          "  -ppn, -perhost, --npernode, -N N\n"
          "                          N consecutive ranks per host, host after host (instead of\n"
          "                          the slot counts)\n"
          "  --oversubscribe         accepted: more ranks than slots or cores is always allowed\n"
          "  --map-by, -map-by core|numa|node|slot\n"
          "                          node: one rank per host in turn; slot (default) and core: the\n"
          "                          host slots in order; numa: like slot, and on each host the\n"
          "                          ranks go to the NUMA nodes in turn\n"
          "  --bind-to, -bind-to core|numa|none\n"
          "                          bind each rank to one core, or to its core's NUMA node\n"
          "                          (hwloc when built with it, else sysfs). Default: core when a\n"
          "                          host's ranks fit its cores, else none (oversubscribed)\n"
          "  --report-bindings       one line per rank on stderr: rank, host, cores and cpus\n"
          "  -genv VAR VAL, -genv VAR=VAL, -env VAR VAL\n"
          "                          set VAR for every rank\n"
          "  -x VAR[=VAL]            export VAR (from mpiexec's environment when no value)\n"
          "  -genvlist, -envlist VAR1,VAR2,...\n"
          "                          export these variables from mpiexec's environment\n"
          "  -genvall, -envall       export all of mpiexec's environment to remote ranks too\n"
          "                          (local ranks always inherit it)\n"
          "  --agent CMD             launch agent for other hosts, run as \"CMD HOST COMMAND\"\n"
          "                          (CMD may hold several words; default: ssh)\n"
          "  -l, --prepend-rank, --tag-output\n"
          "                          prefix every output line with \"[rank] \"\n"
          "  --timeout SECONDS       end the job and fail (exit 124) after SECONDS\n"
          "                          (also MPIEXEC_TIMEOUT)\n"
          "  --pmi-iface IFACE       interface whose IPv4 address remote ranks use to reach mpiexec\n"
          "  --pmi-addr ADDR         that address given directly (default: the first non-loopback\n"
          "                          IPv4 address that is up)\n"
          "  -wdir, -wd DIR          working directory of the ranks (default: the current one)\n"
          "  -v, --verbose           print how each rank is started\n"
          "  -h, --help              this text\n"
          "Options take one dash or two (-np, --np) and --opt=value. An option not listed here\n"
          "(e.g. Open MPI's --mca) stops mpiexec with exit status 2, as does any\n"
          "other usage error.\n"
          "\n"
          "Local ranks get PMI_FD, PMI_RANK and PMI_SIZE; remote ranks PMI_PORT, PMI_ID, PMI_RANK\n"
          "and PMI_SIZE, plus every -genv/-x variable and every RMPI_* variable of mpiexec's\n"
          "environment. Every rank gets the job's random key in RAILMPI_JOB_KEY (remote ranks\n"
          "through the launch agent's stdin, never on a command line); remote ranks prove it to\n"
          "connect to the PMI port, which listens on the --pmi-addr/--pmi-iface address only.\n"
          "Exit status: 0 when every rank exits 0, else the first failing rank's\n"
          "exit code (128+N for signal N), or the code given to abort.\n"
          "\n"
          "Processes started by MPI_Comm_spawn form new worlds of the same job: they take the\n"
          "host slots after the ranks' (this host without -host/-f), or the spawn's info \"host\";\n"
          "info \"wdir\" sets their directory. The job ends when every process of every world\n"
          "has ended; a failure in any world ends all of them. MPI_Publish_name/Lookup_name\n"
          "use one name table for the whole job.\n",
          f);
}

static int parse_count(const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 1000000) {
        fprintf(stderr, "mpiexec: %s expects a non-negative number, not \"%s\".\n", opt, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* A count of at least one (ranks, ranks per host). */
static int parse_positive(const char *opt, const char *s, int *out, const char *what)
{
    if (parse_count(opt, s, out) < 0)
        return -1;
    if (*out == 0) {
        fprintf(stderr, "mpiexec: %s needs at least 1 %s.\n", opt, what);
        return -1;
    }
    return 0;
}

static void add_host(struct mpx_opts *o, const char *name, size_t len, int slots)
{
    o->hosts = realloc(o->hosts, (size_t)(o->nhosts + 1) * sizeof *o->hosts);
    if (!o->hosts) {
        perror("mpiexec");
        exit(1);
    }
    o->hosts[o->nhosts].name = strndup(name, len);
    o->hosts[o->nhosts].slots = slots;
    o->nhosts++;
}

/* "h1,h2:2,h3" */
int mpx_parse_hostlist(const char *list, struct mpx_opts *o)
{
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            const char *colon = memchr(p, ':', len);
            int slots = 1;
            size_t hlen = len;
            if (colon) {
                char num[32];
                size_t nlen = len - (size_t)(colon - p) - 1;
                hlen = (size_t)(colon - p);
                if (nlen == 0 || nlen >= sizeof num) {
                    fprintf(stderr, "mpiexec: bad slot count in host list \"%s\".\n", list);
                    return -1;
                }
                memcpy(num, colon + 1, nlen);
                num[nlen] = '\0';
                if (parse_count("the host list", num, &slots) < 0 || slots == 0) {
                    fprintf(stderr, "mpiexec: host \"%.*s\" needs at least one slot.\n", (int)hlen, p);
                    return -1;
                }
            }
            if (hlen == 0) {
                fprintf(stderr, "mpiexec: empty host name in host list \"%s\".\n", list);
                return -1;
            }
            add_host(o, p, hlen, slots);
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

int mpx_parse_hostfile(const char *path, struct mpx_opts *o)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mpiexec: cannot open hostfile %s: %s.\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0, before = o->nhosts;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *host = strtok_r(line, " \t\r\n", &save);
        if (!host)
            continue;
        int slots = 1;
        char *colon = strchr(host, ':');
        if (colon) {
            *colon = '\0';
            if (parse_count(path, colon + 1, &slots) < 0 || slots == 0 || !*host) {
                fprintf(stderr, "mpiexec: %s:%d: expected \"host:N\" with N >= 1.\n", path, lineno);
                rc = -1;
                break;
            }
        }
        for (char *tok; (tok = strtok_r(NULL, " \t\r\n", &save));) {
            if (strncmp(tok, "slots=", 6) == 0) {
                if (parse_count(path, tok + 6, &slots) < 0 || slots == 0) {
                    fprintf(stderr, "mpiexec: %s:%d: slots= needs a number >= 1.\n", path, lineno);
                    rc = -1;
                    break;
                }
            } else if (strncmp(tok, "max_slots=", 10) == 0) {
                /* Open MPI hostfiles carry it; oversubscription is always allowed here. */
            } else {
                fprintf(stderr,
                        "mpiexec: %s:%d: unexpected \"%s\" (expected \"host\", \"host:N\" or "
                        "\"host slots=N\").\n",
                        path, lineno, tok);
                rc = -1;
                break;
            }
        }
        if (rc == 0)
            add_host(o, host, strlen(host), slots);
    }
    fclose(f);
    if (rc == 0 && o->nhosts == before) {
        fprintf(stderr, "mpiexec: hostfile %s names no host.\n", path);
        rc = -1;
    }
    return rc;
}

static void add_env(struct mpx_opts *o, const char *name, size_t nlen, const char *value)
{
    o->env = realloc(o->env, (size_t)(o->nenv + 1) * sizeof *o->env);
    if (!o->env) {
        perror("mpiexec");
        exit(1);
    }
    o->env[o->nenv].name = strndup(name, nlen);
    o->env[o->nenv].value = value ? strdup(value) : NULL;
    o->nenv++;
}

static int valid_env_name(const char *s, size_t n)
{
    if (n == strlen(RMPI_AUTH_KEY_ENV) && strncmp(s, RMPI_AUTH_KEY_ENV, n) == 0) {
        fprintf(stderr, "mpiexec: %s is made by mpiexec for each job and cannot be set.\n", RMPI_AUTH_KEY_ENV);
        return 0;
    }
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

/* Split the agent command into words on blanks (no quoting: "ip netns exec" style). */
static char **split_words(const char *s)
{
    size_t cap = 4, n = 0;
    char **w = malloc(cap * sizeof *w);
    const char *p = s;
    while (w) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ' ' && *e != '\t')
            e++;
        if (n + 2 > cap)
            w = realloc(w, (cap *= 2) * sizeof *w);
        if (w)
            w[n++] = strndup(p, (size_t)(e - p));
        p = e;
    }
    if (!w) {
        perror("mpiexec");
        exit(1);
    }
    w[n] = NULL;
    return w;
}

int mpx_parse_args(int argc, char **argv, struct mpx_opts *o)
{
    memset(o, 0, sizeof *o);
    o->bind = RMPI_BIND_AUTO;
    o->map = RMPI_MAP_SLOT;
    int i = 1;
    const char *agent = "ssh";
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        /* Accept "-opt" and "--opt"; "--opt=value" for options that take a value. */
        const char *name = a + 1 + (a[1] == '-');
        const char *inl = NULL;
        char namebuf[64];
        if (a[1] == '-' && strchr(name, '=')) {
            size_t nl = (size_t)(strchr(name, '=') - name);
            if (nl >= sizeof namebuf)
                nl = sizeof namebuf - 1;
            memcpy(namebuf, name, nl);
            namebuf[nl] = '\0';
            inl = strchr(name, '=') + 1;
            name = namebuf;
        }
#define OPT(s) (strcmp(name, s) == 0)
#define NEXT_ARG() \
    (inl ? inl     \
         : (i + 1 < argc ? argv[++i] : (fprintf(stderr, "mpiexec: %s needs an argument.\n", a), (const char *)NULL)))
        if (OPT("h") || OPT("help")) {
            mpx_usage(stdout);
            exit(0);
        } else if (OPT("n") || OPT("np")) {
            const char *v = NEXT_ARG();
            if (!v || parse_positive(a, v, &o->nprocs, "rank") < 0)
                return -1;
        } else if (OPT("host") || OPT("hosts") || OPT("H")) {
            const char *v = NEXT_ARG();
            if (!v || mpx_parse_hostlist(v, o) < 0)
                return -1;
        } else if (OPT("hostfile") || OPT("f") || OPT("machinefile")) {
            const char *v = NEXT_ARG();
            if (!v || mpx_parse_hostfile(v, o) < 0)
                return -1;
        } else if (OPT("genv") || OPT("env")) {
            const char *var = NEXT_ARG();
            if (!var)
                return -1;
            const char *eq = strchr(var, '=');
            if (eq) {
                if (!valid_env_name(var, (size_t)(eq - var))) {
                    fprintf(stderr, "mpiexec: %s: \"%s\" is not a valid variable name.\n", a, var);
                    return -1;
                }
                add_env(o, var, (size_t)(eq - var), eq + 1);
            } else {
                if (!valid_env_name(var, strlen(var))) {
                    fprintf(stderr, "mpiexec: %s: \"%s\" is not a valid variable name.\n", a, var);
                    return -1;
                }
                if (i + 1 >= argc) {
                    fprintf(stderr, "mpiexec: %s %s needs a value.\n", a, var);
                    return -1;
                }
                add_env(o, var, strlen(var), argv[++i]);
            }
        } else if (OPT("genvlist") || OPT("envlist")) {
            const char *v = NEXT_ARG();
            if (!v)
                return -1;
            for (const char *p = v; *p;) {
                size_t nl = strcspn(p, ",");
                if (nl && !valid_env_name(p, nl)) {
                    fprintf(stderr, "mpiexec: %s: \"%.*s\" is not a valid variable name.\n", a, (int)nl, p);
                    return -1;
                }
                if (nl)
                    add_env(o, p, nl, NULL);
                p += nl + (p[nl] == ',');
            }
        } else if (OPT("genvall") || OPT("envall")) {
            o->genvall = 1;
        } else if (OPT("ppn") || OPT("perhost") || OPT("npernode") || OPT("N")) {
            const char *v = NEXT_ARG();
            if (!v || parse_positive(a, v, &o->ppn, "rank per host") < 0)
                return -1;
        } else if (OPT("oversubscribe") || OPT("allow-run-as-root")) {
            /* Open MPI users bring these; both are what mpiexec does anyway. */
        } else if (OPT("x")) {
            const char *var = NEXT_ARG();
            if (!var)
                return -1;
            const char *eq = strchr(var, '=');
            size_t nl = eq ? (size_t)(eq - var) : strlen(var);
            if (!valid_env_name(var, nl)) {
                fprintf(stderr, "mpiexec: -x: \"%s\" is not a valid variable name.\n", var);
                return -1;
            }
            add_env(o, var, nl, eq ? eq + 1 : NULL);
        } else if (OPT("agent") || OPT("launcher-exec") || OPT("bootstrap-exec")) {
            if (!(agent = NEXT_ARG()))
                return -1;
        } else if (OPT("l") || OPT("prepend-rank") || OPT("tag-output")) {
            o->prefix = 1;
        } else if (OPT("timeout")) {
            const char *v = NEXT_ARG();
            if (!v || parse_count(a, v, &o->timeout) < 0)
                return -1;
        } else if (OPT("pmi-iface")) {
            const char *v = NEXT_ARG();
            if (!v)
                return -1;
            o->pmi_iface = strdup(v);
        } else if (OPT("pmi-addr")) {
            const char *v = NEXT_ARG();
            if (!v)
                return -1;
            o->pmi_addr = strdup(v);
        } else if (OPT("wdir") || OPT("wd")) {
            const char *v = NEXT_ARG();
            if (!v)
                return -1;
            o->wdir = strdup(v);
        } else if (OPT("bind-to")) {
            const char *v = NEXT_ARG();
            if (!v)
                return -1;
            if ((o->bind = rmpi_cpubind_parse_bind(v)) < 0 || o->bind == RMPI_BIND_AUTO) {
                fprintf(stderr, "mpiexec: %s%s accepts core, numa or none, not \"%s\".\n", a[1] == '-' ? "--" : "-",
                        name, v);
                return -1;
            }
        } else if (OPT("map-by")) {
            const char *v = NEXT_ARG();
            if (!v)
                return -1;
            if ((o->map = rmpi_cpubind_parse_map(v)) < 0) {
                fprintf(stderr, "mpiexec: %s%s accepts core, numa, node or slot, not \"%s\".\n",
                        a[1] == '-' ? "--" : "-", name, v);
                return -1;
            }
        } else if (OPT("report-bindings")) {
            o->report_bindings = 1;
        } else if (OPT("v") || OPT("verbose")) {
            o->verbose = 1;
        } else {
            fprintf(stderr, "mpiexec: unknown option %s; see mpiexec -h.\n", a);
            return -1;
        }
#undef OPT
#undef NEXT_ARG
    }
    if (i >= argc) {
        fprintf(stderr, "mpiexec: no program to run; see mpiexec --help.\n");
        return -1;
    }
    o->argv = argv + i;
    o->agent = split_words(agent);
    if (!o->agent[0]) {
        fprintf(stderr, "mpiexec: --agent is empty.\n");
        return -1;
    }
    if (!o->timeout) {
        const char *t = getenv("MPIEXEC_TIMEOUT");
        if (t && *t && parse_count("MPIEXEC_TIMEOUT", t, &o->timeout) < 0)
            return -1;
    }
    if (!o->nprocs && o->ppn && o->nhosts)
        o->nprocs = o->ppn * o->nhosts;
    if (!o->nprocs) {
        for (int h = 0; h < o->nhosts; h++)
            o->nprocs += o->hosts[h].slots;
        if (!o->nprocs)
            o->nprocs = 1;
    }
    if (!o->wdir) {
        char *cwd = getcwd(NULL, 0);
        o->wdir = cwd ? cwd : strdup("/");
    }
    return 0;
}

const char *mpx_place(const struct mpx_opts *o, int rank)
{
    if (o->nhosts == 0)
        return "localhost";
    if (o->map == RMPI_MAP_NODE)
        return o->hosts[rank % o->nhosts].name;
    if (o->ppn)
        return o->hosts[(rank / o->ppn) % o->nhosts].name;
    int total = 0;
    for (int h = 0; h < o->nhosts; h++)
        total += o->hosts[h].slots;
    int idx = rank % total;
    for (int h = 0; h < o->nhosts; h++) {
        if (idx < o->hosts[h].slots)
            return o->hosts[h].name;
        idx -= o->hosts[h].slots;
    }
    return o->hosts[0].name;
}
