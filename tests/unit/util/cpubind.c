/* util/cpubind.c: the binding plan mpiexec and RMPI_BIND share, on a made-up host (2 NUMA
 * nodes of 4 cores, 2 hardware threads each: core c is cpus c and c+8), the cpu list
 * grammar both ways, RMPI_BIND's grammar, and this host read through hwloc and sysfs
 * (the two must agree). */
#include "../unit_check.h"
#include "util/util.h"

static cpu_set_t cores[8], numas[2];

static rmpi_cpubind_topo_t fake_host(void)
{
    rmpi_cpubind_topo_t t = {.host_cpus = 16, .ncores = 8, .nnuma = 2, .core = cores, .numa = numas};
    CPU_ZERO(&t.allowed);
    for (int c = 0; c < 8; c++) {
        CPU_ZERO(&cores[c]);
        CPU_SET(c, &cores[c]);
        CPU_SET(c + 8, &cores[c]);
        CPU_OR(&t.allowed, &t.allowed, &cores[c]);
    }
    for (int n = 0; n < 2; n++) {
        CPU_ZERO(&numas[n]);
        for (int c = 4 * n; c < 4 * n + 4; c++)
            CPU_OR(&numas[n], &numas[n], &cores[c]);
    }
    return t;
}

static const char *list(const cpu_set_t *s)
{
    static char buf[256];
    rmpi_cpubind_list(s, buf, sizeof buf);
    return buf;
}

static void plans(void)
{
    rmpi_cpubind_topo_t t = fake_host();
    cpu_set_t s;
    /* auto: one core each while the ranks fit the cores, nobody bound past that */
    for (int i = 0; i < 8; i++) {
        CHECK(rmpi_cpubind_plan(&t, RMPI_BIND_AUTO, RMPI_MAP_SLOT, i, 8, &s) == 1, "auto 8: rank %d unbound", i);
        CHECK(CPU_EQUAL(&s, &cores[i]), "auto 8: rank %d on %s", i, list(&s));
    }
    for (int i = 0; i < 9; i++) {
        CHECK(rmpi_cpubind_plan(&t, RMPI_BIND_AUTO, RMPI_MAP_SLOT, i, 9, &s) == 0, "auto 9: rank %d bound", i);
        CHECK(CPU_EQUAL(&s, &t.allowed), "auto 9: rank %d on %s, not every cpu", i, list(&s));
    }
    CHECK(rmpi_cpubind_plan(&t, RMPI_BIND_NONE, RMPI_MAP_CORE, 0, 1, &s) == 0 && CPU_EQUAL(&s, &t.allowed),
          "none binds");
    /* core, asked for, wraps around when oversubscribed */
    CHECK(rmpi_cpubind_plan(&t, RMPI_BIND_CORE, RMPI_MAP_CORE, 9, 10, &s) == 1 && CPU_EQUAL(&s, &cores[1]),
          "core 9 of 10: %s", list(&s));
    /* map numa: the nodes in turn, then the next core inside each */
    static const int want[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    for (int i = 0; i < 8; i++) {
        rmpi_cpubind_plan(&t, RMPI_BIND_CORE, RMPI_MAP_NUMA, i, 8, &s);
        CHECK(CPU_EQUAL(&s, &cores[want[i]]), "map numa: rank %d on %s, expected core %d", i, list(&s), want[i]);
    }
    /* bind numa: the whole node of the core the map picks */
    rmpi_cpubind_plan(&t, RMPI_BIND_NUMA, RMPI_MAP_CORE, 5, 8, &s);
    CHECK(CPU_EQUAL(&s, &numas[1]), "bind numa, rank 5: %s", list(&s));
    rmpi_cpubind_plan(&t, RMPI_BIND_NUMA, RMPI_MAP_NUMA, 2, 8, &s);
    CHECK(CPU_EQUAL(&s, &numas[0]), "bind numa map numa, rank 2: %s", list(&s));
    char text[256];
    rmpi_cpubind_describe(&t, 1, &cores[3], text, sizeof text);
    CHECK(!strcmp(text, "bound to core 3 (cpus 3,11)"), "describe: %s", text);
    rmpi_cpubind_describe(&t, 1, &numas[1], text, sizeof text);
    CHECK(!strcmp(text, "bound to cores 4,5,6,7 (cpus 4-7,12-15)"), "describe: %s", text);
    rmpi_cpubind_describe(&t, 0, &t.allowed, text, sizeof text);
    CHECK(!strcmp(text, "not bound (cpus 0-15)"), "describe: %s", text);
}

static void lists(void)
{
    static const char *const ok[] = {"0", "0-3", "0-3,8,10-11", "1,3,5", "1023"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        cpu_set_t s;
        CHECK(rmpi_cpubind_parse_list(ok[i], &s) == 0 && !strcmp(list(&s), ok[i]), "list \"%s\" -> \"%s\"", ok[i],
              list(&s));
    }
    cpu_set_t s;
    CHECK(rmpi_cpubind_parse_list("0,1,2,3\n", &s) == 0 && !strcmp(list(&s), "0-3"), "sysfs line: %s", list(&s));
    static const char *const bad[] = {"x", "3-1", "-1", "0-", "1,,2", "0;1", "99999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(rmpi_cpubind_parse_list(bad[i], &s) < 0, "list \"%s\" accepted", bad[i]);
}

static void env_values(void)
{
    int b, m, i, n, r;
    CHECK(rmpi_cpubind_env_parse("core:numa:1:4:report", &b, &m, &i, &n, &r) == 0 && b == RMPI_BIND_CORE &&
              m == RMPI_MAP_NUMA && i == 1 && n == 4 && r == 1,
          "full form");
    CHECK(rmpi_cpubind_env_parse("auto:slot:0:2", &b, &m, &i, &n, &r) == 0 && b == RMPI_BIND_AUTO && r == 0,
          "as mpiexec sends it");
    CHECK(rmpi_cpubind_env_parse("numa", &b, &m, &i, &n, &r) == 0 && b == RMPI_BIND_NUMA && m == RMPI_MAP_SLOT &&
              i == -1 && n == -1,
          "short form (srun)");
    CHECK(rmpi_cpubind_env_parse("core:report", &b, &m, &i, &n, &r) == 0 && r == 1 && i == -1, "core:report");
    static const char *const bad[] = {"",
                                      "sideways",
                                      "core:diagonal",
                                      "core:slot:2:2",
                                      "core:slot:1",
                                      "core:slot:-1:2",
                                      "core:slot:0:2:3",
                                      "core:slot:0:2:extra",
                                      "core:slot:x:2"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        CHECK(rmpi_cpubind_env_parse(bad[k], &b, &m, &i, &n, &r) < 0, "RMPI_BIND=\"%s\" accepted", bad[k]);
}

/* This host, both ways: the same cores and nodes (without hwloc both are sysfs). */
static void this_host(void)
{
    rmpi_cpubind_topo_t h, s;
    CHECK(rmpi_cpubind_topo_load(&h, 1) == 0 && rmpi_cpubind_topo_load(&s, 0) == 0, "cannot read this host");
    CHECK(h.ncores == s.ncores && h.ncores > 0, "%s finds %d cores, sysfs %d", h.source, h.ncores, s.ncores);
    for (int c = 0; c < h.ncores && c < s.ncores; c++)
        CHECK(CPU_EQUAL(&h.core[c], &s.core[c]), "core %d: %s has cpus %s", c, h.source, list(&h.core[c]));
    CHECK(h.nnuma == s.nnuma, "%s finds %d NUMA nodes, sysfs %d", h.source, h.nnuma, s.nnuma);
    CHECK(CPU_COUNT(&h.allowed) <= h.host_cpus, "allowed %d > host %d", CPU_COUNT(&h.allowed), h.host_cpus);
    rmpi_cpubind_topo_free(&h);
    rmpi_cpubind_topo_free(&s);
}

int main(void)
{
    plans();
    lists();
    env_values();
    this_host();
    return finish("util_cpubind");
}
