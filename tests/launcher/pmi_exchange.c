/*
 * PMI client check, built from src/rt/pmi.c directly so it runs before the rest of the
 * library links. Modes (argv[1]):
 *   (none)       every rank puts two keys (one with spaces and '=' to exercise the
 *                encoding), fences, reads every rank's keys and a missing one.
 *   abort CODE   rank 1 (rank 0 in a singleton) calls abort; the others wait in a fence.
 *   nofinalize   like (none) but rank 0 exits 0 without PMI finalize.
 *   long         puts and reads back the longest value allowed with encoding.
 *   initdie      does what MPI_Init does up to its first fence (the topology exchange),
 *                waits a second (the other ranks, real MPI programs, go on into their
 *                network setup) and dies by SIGKILL; "initdie stall" sleeps instead.
 *   dup          (remote ranks) after init, a second TCP connection claims this rank's PMI
 *                id again; it must be refused (one connection per id, the first wins).
 *   spawn [abort] rank 0 spawns one world of two commands (1 process "child A", 2 processes
 *                "child B") with a preput key and info wdir=/, then exercises the name
 *                service; the children check their world, appnum, arguments, directory,
 *                the preput key and that their key-value space is their own. With abort,
 *                the child of rank 2 aborts: the whole job must end.
 */
#include "rt/rt.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The library's knobs.c owns these; the test provides its own (only what pmi.c reads). */
const char *rmpi_rt_env(const char *name) { return getenv(name); }
struct rmpi_knobs rmpi_knobs;

static void knobs_init(void)
{
    const char *pmi = getenv("RMPI_PMI"), *t = getenv("RMPI_PMI_TIMEOUT");
    static const char *const kinds[] = {"auto", "pmi1", "pmi2", "pmix"}; /* knobs.def's order */
    rmpi_knobs.PMI = RMPI_PMI_AUTO;
    for (int k = 0; pmi && k < 4; k++)
        if (!strcmp(pmi, kinds[k]))
            rmpi_knobs.PMI = k;
    rmpi_knobs.PMI_TIMEOUT = t && *t ? atof(t) : 60;
}

/* A second connection to PMI_PORT (numeric IPv4) claiming PMI_ID: the server's first reply. */
static void claim_again(char *reply, size_t len)
{
    const char *port = getenv("PMI_PORT"), *id = getenv("PMI_ID");
    char addr[64];
    snprintf(reply, len, "(no reply)");
    const char *colon = port ? strrchr(port, ':') : NULL;
    if (!colon || !id || (size_t)(colon - port) >= sizeof addr)
        return;
    snprintf(addr, sizeof addr, "%.*s", (int)(colon - port), port);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return;
    char cmd[64];
    int n = snprintf(cmd, sizeof cmd, "cmd=initack pmiid=%s\n", id);
    if (write(fd, cmd, (size_t)n) == n) {
        ssize_t got = read(fd, reply, len - 1);
        reply[got > 0 ? got : 0] = '\0';
        reply[strcspn(reply, "\n")] = '\0';
    }
    close(fd);
}

/* Whether /proc/self/environ (what other processes of the user see) still holds a job key. */
static int key_in_environ(void)
{
    static char env[1 << 16];
    FILE *f = fopen("/proc/self/environ", "r");
    if (!f)
        return 0;
    size_t n = fread(env, 1, sizeof env - 1, f);
    env[n] = '\0';
    fclose(f);
    const size_t pl = strlen(RMPI_AUTH_KEY_ENV "=");
    for (size_t i = 0; i < n; i += strlen(env + i) + 1) {
        if (strncmp(env + i, RMPI_AUTH_KEY_ENV "=", pl) == 0 && strspn(env + i + pl, "0") != strlen(env + i + pl))
            return 1;
    }
    return 0;
}

static int check(int ok, int rank, const char *what)
{
    if (!ok)
        fprintf(stderr, "pmi_exchange: rank %d: %s\n", rank, what);
    return ok;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exchange";
    rmpi_pm_info_t pm;
    int key_before = key_in_environ();
    knobs_init();
    if (rmpi_pmi_init(&pm) != 0) {
        fprintf(stderr, "pmi_exchange: rmpi_pmi_init failed\n");
        return 2;
    }
    int r = pm.rank, n = pm.size, ok = 1;
    ok &= check(!key_before || !key_in_environ(), r, "the job key is still readable in /proc/self/environ after init");
    printf("pmi_exchange: wire %d rank %d size %d singleton %d appnum %d kvsname %s\n", pm.kind, r, n, pm.singleton,
           pm.appnum, pm.kvsname);
    fflush(stdout);

    if (strcmp(mode, "initdie") == 0) {
        char hkey[32];
        snprintf(hkey, sizeof hkey, "host-%d", r);
        rmpi_pmi_put(hkey, "initdie/0");
        rmpi_pmi_fence();
        if (argc > 2 && strcmp(argv[2], "stall") == 0) {
            printf("pmi_exchange: rank %d pid %d stalls\n", r, (int)getpid());
            fflush(stdout);
            sleep(60);
        }
        sleep(1);
        raise(SIGKILL);
    }
    if (strcmp(mode, "abort") == 0) {
        int code = argc > 2 ? atoi(argv[2]) : 1;
        if (r == (n > 1 ? 1 : 0))
            rmpi_pmi_abort(code, "pmi_exchange: test abort");
        rmpi_pmi_fence();
        rmpi_pmi_fence();
        fprintf(stderr, "pmi_exchange: rank %d passed a fence that should never complete\n", r);
        return 3;
    }

    char key[64], val[2048], got[2048];
    if (strcmp(mode, "child") == 0) {
        /* argv: child A|B [two words] [abort] */
        int a = strcmp(argv[2], "A") == 0;
        char cwd[256] = "";
        ok &= check(n == 3 && pm.appnum == (a ? 0 : 1), r, "child world size or appnum wrong");
        ok &= check(r == 0 ? a : !a, r, "child commands not in rank order");
        ok &= check(!a || (argc == 4 && strcmp(argv[3], "two words") == 0), r, "child argument wrong");
        ok &= check(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0, r, "info wdir not honoured");
        ok &= check(rmpi_pmi_get("PARENT_ROOT_PORT_NAME", got, sizeof got) == 0 && !strcmp(got, "port-of-0"), r,
                    "preput key missing in the spawned world");
        ok &= check(rmpi_pmi_get("card0", got, sizeof got) != 0, r, "the parents' key is visible to a child");
        if (argc > 3 && strcmp(argv[argc - 1], "abort") == 0 && r == 2)
            rmpi_pmi_abort(5, "pmi_exchange: child abort");
        snprintf(key, sizeof key, "child%d", r);
        ok &= check(rmpi_pmi_put(key, argv[2]) == 0 && rmpi_pmi_fence() == 0, r, "child put/fence failed");
        for (int p = 0; p < n; p++) {
            snprintf(key, sizeof key, "child%d", p);
            ok &= check(rmpi_pmi_get(key, got, sizeof got) == 0 && !strcmp(got, p ? "B" : "A"), r,
                        "a child's key differs");
        }
        ok &= check(rmpi_pmi_finalize() == 0, r, "finalize failed");
        printf("pmi_exchange: child %d of %d: %s\n", r, n, ok ? "ok" : "FAILED");
        return ok ? 0 : 1;
    }
    if (strcmp(mode, "spawn") == 0) {
        int abort_child = argc > 2 && strcmp(argv[2], "abort") == 0;
        ok &= check(rmpi_pmi_put("card0", "parent") == 0, r, "put failed");
        ok &= check(rmpi_pmi_fence() == 0, r, "fence failed");
        if (r == 0) {
            char *a0[] = {"child", "A", "two words", NULL}, *a1[] = {"child", "B", abort_child ? "abort" : NULL, NULL};
            const char *ik[] = {"wdir"}, *iv[] = {"/"};
            rmpi_pmi_spawn_cmd_t cmds[2] = {{argv[0], a0, 1, 1, ik, iv}, {argv[0], a1, 2, 1, ik, iv}};
            const char *pk[] = {"PARENT_ROOT_PORT_NAME"}, *pv[] = {"port-of-0"};
            ok &= check(rmpi_pmi_spawn(2, cmds, 1, pk, pv) == 0, r, "spawn failed");
            ok &= check(rmpi_pmi_publish("svc", "p1") == 0, r, "publish failed");
            ok &= check(rmpi_pmi_publish("svc", "p2") == 1, r, "a second publish of a name succeeded");
            ok &= check(rmpi_pmi_lookup("svc", got, sizeof got) == 0 && !strcmp(got, "p1"), r, "lookup failed");
            ok &= check(rmpi_pmi_unpublish("svc") == 0, r, "unpublish failed");
            ok &= check(rmpi_pmi_lookup("svc", got, sizeof got) == 1, r, "lookup after unpublish succeeded");
            ok &= check(rmpi_pmi_unpublish("svc") == 1, r, "a second unpublish succeeded");
        }
        ok &= check(rmpi_pmi_fence() == 0, r, "fence after spawn failed");
    } else if (strcmp(mode, "dup") == 0) {
        claim_again(got, sizeof got);
        printf("pmi_exchange: rank %d: second claim got: %s\n", r, got);
    } else if (strcmp(mode, "long") == 0) {
        /* Hydra and our mpiexec announce vallen_max 1024: 511 encoded chars fit. */
        size_t len = 511;
        for (size_t i = 0; i < len; i++)
            val[i] = (char)(' ' + (i * 7 + (size_t)r) % 95);
        val[len] = '\0';
        snprintf(key, sizeof key, "long%d", r);
        ok &= check(rmpi_pmi_put(key, val) == 0, r, "put of a 511-character value failed");
        ok &= check(rmpi_pmi_fence() == 0, r, "fence failed");
        for (int p = 0; p < n; p++) {
            snprintf(key, sizeof key, "long%d", p);
            for (size_t i = 0; i < len; i++)
                val[i] = (char)(' ' + (i * 7 + (size_t)p) % 95);
            ok &= check(rmpi_pmi_get(key, got, sizeof got) == 0 && strcmp(got, val) == 0, r,
                        "long value read back differs");
        }
        memset(val, 'x', 1500);
        val[1500] = '\0';
        ok &= check(rmpi_pmi_put("toolong", val) != 0, r, "put of a 1500-byte value succeeded");
    } else {
        snprintf(key, sizeof key, "card%d", r);
        snprintf(val, sizeof val, "rank %d of %d: a=b ~tilde", r, n);
        ok &= check(rmpi_pmi_put(key, val) == 0, r, "put of an encoded value failed");
        snprintf(key, sizeof key, "plain%d", r);
        snprintf(val, sizeof val, "plain-%d", r * 31);
        ok &= check(rmpi_pmi_put(key, val) == 0, r, "put of a plain value failed");
        ok &= check(rmpi_pmi_fence() == 0, r, "fence failed");
        for (int p = 0; p < n; p++) {
            snprintf(key, sizeof key, "card%d", p);
            snprintf(val, sizeof val, "rank %d of %d: a=b ~tilde", p, n);
            ok &= check(rmpi_pmi_get(key, got, sizeof got) == 0 && strcmp(got, val) == 0, r,
                        "encoded value of another rank differs");
            snprintf(key, sizeof key, "plain%d", p);
            snprintf(val, sizeof val, "plain-%d", p * 31);
            ok &= check(rmpi_pmi_get(key, got, sizeof got) == 0 && strcmp(got, val) == 0, r,
                        "plain value of another rank differs");
        }
        ok &= check(rmpi_pmi_get("no_such_key", got, sizeof got) != 0, r, "get of a missing key succeeded");
        ok &= check(rmpi_pmi_get("card0", got, 4) != 0, r, "get into a too-small buffer succeeded");
        ok &= check(rmpi_pmi_fence() == 0, r, "second fence failed");
        if (strcmp(mode, "nofinalize") == 0 && r == 0) {
            printf("pmi_exchange: rank 0 exits without finalize\n");
            return 0;
        }
    }
    ok &= check(rmpi_pmi_finalize() == 0, r, "finalize failed");
    printf("pmi_exchange: rank %d of %d: %s\n", r, n, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
