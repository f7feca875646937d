/* rt/pmi.c and rt/topo.c as a singleton: values with spaces, '=', control or non-ASCII
 * bytes, or a leading '~', travel hex-encoded behind '~' (the PMI-1 wire cannot carry them,
 * docs/wire/pmi.md) and come back byte for byte; keys are checked; a value that does not
 * fit the caller's buffer is refused, never cut; the node numbering of one process and of
 * ranks beyond the world (dynamic peers, a node each). */
#include <stdlib.h>

#include "../unit_check.h"
#include "rt/rt.h"

static void round_trip(const char *key, const char *value)
{
    char got[1024];
    memset(got, 'Z', sizeof got);
    CHECK(rmpi_pmi_put(key, value) == 0, "put %s", key);
    CHECK(rmpi_pmi_get(key, got, sizeof got) == 0, "get %s", key);
    CHECK(!strcmp(got, value), "key %s: '%s' came back as '%s'", key, value, got);
    /* exactly strlen + 1 bytes fit, one less does not */
    size_t n = strlen(value) + 1;
    CHECK(rmpi_pmi_get(key, got, n) == 0 && !strcmp(got, value), "key %s: %zu-byte buffer", key, n);
    if (n > 1) {
        memset(got, 'Z', sizeof got);
        CHECK(rmpi_pmi_get(key, got, n - 1) == -1, "key %s: '%s' accepted into %zu bytes", key, value, n - 1);
        CHECK(got[n - 1] == 'Z', "key %s: a refused get wrote past its buffer", key);
    }
}

static void pmi(void)
{
    rmpi_pm_info_t pm;
    CHECK(rmpi_pmi_init(&pm) == 0, "singleton PMI init");
    CHECK(pm.singleton && pm.rank == 0 && pm.size == 1, "singleton %d rank %d size %d", pm.singleton, pm.rank, pm.size);
    round_trip("plain", "abc123-_.:/,");
    round_trip("space", "two words");
    round_trip("equals", "a=b");
    round_trip("tilde", "~41"); /* would decode to "A" were it not encoded itself */
    round_trip("tildeonly", "~");
    round_trip("tab", "a\tb\nc");
    round_trip("high", "caf\xc3\xa9 \x7f\x01");
    round_trip("empty", "");
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = '\0';
    round_trip("allbytes", all);
    /* a put replaces the earlier value */
    round_trip("again", "first value");
    round_trip("again", "second");
    char got[64];
    CHECK(rmpi_pmi_get("nosuchkey", got, sizeof got) == -1, "get of a key never put");
    CHECK(rmpi_pmi_get("plain", got, 0) == -1, "get into no buffer");
    /* keys cannot be encoded: bad ones are refused */
    static const char *const badkeys[] = {"", "a b", "a=b", "~key", "tab\there"};
    for (size_t i = 0; i < sizeof badkeys / sizeof *badkeys; i++)
        CHECK(rmpi_pmi_put(badkeys[i], "v") == -1, "key '%s' accepted", badkeys[i]);
    char longkey[300];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    CHECK(rmpi_pmi_put(longkey, "v") == -1, "a %zu-character key accepted", strlen(longkey));
    CHECK(rmpi_pmi_fence() == 0, "fence of a singleton");
}

static void topo(void)
{
    rmpi_pm_info_t pm = {0};
    pm.size = 1;
    pm.singleton = 1;
    CHECK(rmpi_topo_init(&pm) == 0, "topology of a singleton");
    CHECK(rmpi_topo_my_node() == 0 && rmpi_topo_node_of(0) == 0, "node %d / %d", rmpi_topo_my_node(),
          rmpi_topo_node_of(0));
    CHECK(rmpi_topo_local_rank(0) == 0 && rmpi_topo_local_size(0) == 1, "local rank %d size %d",
          rmpi_topo_local_rank(0), rmpi_topo_local_size(0));
    /* ranks beyond the world: one node each, after the world's nodes, alone on it */
    for (int r = 1; r < 10; r++) {
        CHECK(rmpi_topo_node_of(r) == r, "dynamic rank %d on node %d", r, rmpi_topo_node_of(r));
        CHECK(rmpi_topo_local_rank(r) == 0, "dynamic rank %d local rank %d", r, rmpi_topo_local_rank(r));
        CHECK(rmpi_topo_local_size(rmpi_topo_node_of(r)) == 1, "dynamic rank %d's node size", r);
    }
    const char *h = rmpi_topo_hostname();
    CHECK(h && *h, "no host name");
    CHECK(rmpi_rt_job_key() != NULL, "a singleton has no job key after topology init");
    uint32_t tag = rmpi_topo_node_tag();
    rmpi_topo_finalize();
    CHECK(rmpi_topo_init(&pm) == 0 && rmpi_topo_node_tag() == tag, "node tag not stable across init");
    rmpi_topo_finalize();
}

int main(void)
{
    unit_singleton();
    unsetenv("RMPI_TOPO_FAKE_NODES");
    rmpi_knobs_init();
    pmi();
    topo();
    rmpi_pmi_finalize();
    return finish("rt_pmi_topo");
}
