/*
 * PMI client check, built from src/rt/pmi.c directly so it runs before the rest of the
 * library links. Modes (argv[1]):
 *   (none)       every rank puts two keys (one with spaces and '=' to exercise the
 *                encoding), fences, reads every rank's keys and a missing one.
 *   abort CODE   rank 1 (rank 0 in a singleton) calls abort; the others wait in a fence.
 *   nofinalize   like (none) but rank 0 exits 0 without PMI finalize.
 *   long         puts and reads back the longest value allowed with encoding.
 */
#include "rt/rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library's knobs.c owns this; the test provides its own. */
const char *rmpi_rt_env(const char *name) { return getenv(name); }

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
    if (rmpi_pmi_init(&pm) != 0) {
        fprintf(stderr, "pmi_exchange: rmpi_pmi_init failed\n");
        return 2;
    }
    int r = pm.rank, n = pm.size, ok = 1;
    printf("pmi_exchange: rank %d size %d singleton %d appnum %d kvsname %s\n", r, n, pm.singleton,
           pm.appnum, pm.kvsname);
    fflush(stdout);

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
    if (strcmp(mode, "long") == 0) {
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
