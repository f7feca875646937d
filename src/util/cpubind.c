#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef RMPI_HAVE_HWLOC
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#endif

/* Process binding, shared by mpiexec (local ranks, bound in the forked child) and the
 * library (remote ranks, bound at MPI_Init from RMPI_BIND). Only the CPUs of the caller's
 * own affinity mask count: a cgroup cpuset or a taskset around the launcher narrows the
 * host, and binding outside it would fail with EINVAL. */

static const char *const bind_names[] = {"none", "core", "numa", "auto"};
static const char *const map_names[] = {"core", "numa", "node", "slot"};

static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

int rmpi_cpubind_parse_bind(const char *s) { return name_index(bind_names, 4, s); }
int rmpi_cpubind_parse_map(const char *s) { return name_index(map_names, 4, s); }
const char *rmpi_cpubind_bind_name(int b) { return b >= 0 && b < 4 ? bind_names[b] : "?"; }
const char *rmpi_cpubind_map_name(int m) { return m >= 0 && m < 4 ? map_names[m] : "?"; }

static void add_set(cpu_set_t **arr, int *n, const cpu_set_t *s)
{
    cpu_set_t *a = rmpi_xrealloc(*arr, (size_t)(*n + 1) * sizeof *a);
    a[*n] = *s;
    *arr = a;
    (*n)++;
}

/* A kernel cpu list ("0-3,8,10-11") into a set; -1 when malformed. */
int rmpi_cpubind_parse_list(const char *s, cpu_set_t *out)
{
    CPU_ZERO(out);
    const char *p = s;
    while (*p && *p != '\n') {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a >= CPU_SETSIZE)
            return -1;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a || b >= CPU_SETSIZE)
                return -1;
            p = end;
        }
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, out);
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -1;
    }
    return 0;
}

void rmpi_cpubind_list(const cpu_set_t *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, s))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, s))
            e++;
        int n = e > c ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", c, e)
                      : snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
        c = e;
    }
}

static int read_list(const char *path, cpu_set_t *out)
{
    char line[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    return ok ? rmpi_cpubind_parse_list(line, out) : -1;
}

/* Without hwloc: the kernel's own view in sysfs. A core is the set of its thread
 * siblings; a NUMA node is /sys/devices/system/node/nodeN/cpulist. */
static void load_sysfs(rmpi_cpubind_topo_t *t)
{
    cpu_set_t seen;
    CPU_ZERO(&seen);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &t->allowed) || CPU_ISSET(c, &seen))
            continue;
        char path[128];
        cpu_set_t sib;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
        if (read_list(path, &sib) < 0) {
            CPU_ZERO(&sib);
            CPU_SET(c, &sib);
        }
        CPU_AND(&sib, &sib, &t->allowed);
        CPU_SET(c, &sib);
        CPU_OR(&seen, &seen, &sib);
        add_set(&t->core, &t->ncores, &sib);
    }
    for (int n = 0; n < 4096; n++) {
        char path[128];
        cpu_set_t s;
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", n);
        if (access(path, R_OK) != 0) {
            if (n > 0 && access("/sys/devices/system/node", R_OK) == 0)
                continue; /* node numbers may have holes */
            break;
        }
        if (read_list(path, &s) < 0)
            continue;
        CPU_AND(&s, &s, &t->allowed);
        if (CPU_COUNT(&s))
            add_set(&t->numa, &t->nnuma, &s);
    }
}

#ifdef RMPI_HAVE_HWLOC
static int load_hwloc(rmpi_cpubind_topo_t *t)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0)
        return -1;
    if (hwloc_topology_load(topo) < 0) {
        hwloc_topology_destroy(topo);
        return -1;
    }
    static const hwloc_obj_type_t types[2] = {HWLOC_OBJ_CORE, HWLOC_OBJ_NUMANODE};
    for (int k = 0; k < 2; k++) {
        int n = hwloc_get_nbobjs_by_type(topo, types[k]);
        for (int i = 0; i < n; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(topo, types[k], (unsigned)i);
            cpu_set_t s;
            if (!o || !o->cpuset || hwloc_cpuset_to_glibc_sched_affinity(topo, o->cpuset, &s, sizeof s) < 0)
                continue;
            CPU_AND(&s, &s, &t->allowed);
            if (CPU_COUNT(&s))
                add_set(k ? &t->numa : &t->core, k ? &t->nnuma : &t->ncores, &s);
        }
    }
    hwloc_topology_destroy(topo);
    return t->ncores > 0 ? 0 : -1;
}
#endif

int rmpi_cpubind_topo_load(rmpi_cpubind_topo_t *t, int use_hwloc)
{
    memset(t, 0, sizeof *t);
    if (sched_getaffinity(0, sizeof t->allowed, &t->allowed) < 0)
        return -1;
    cpu_set_t online;
    t->host_cpus = read_list("/sys/devices/system/cpu/online", &online) == 0 ? CPU_COUNT(&online)
                                                                             : (int)sysconf(_SC_NPROCESSORS_ONLN);
    t->source = "sysfs";
#ifdef RMPI_HAVE_HWLOC
    if (use_hwloc && load_hwloc(t) == 0)
        t->source = "hwloc";
    else
#endif
        load_sysfs(t);
    if (t->nnuma == 0)
        add_set(&t->numa, &t->nnuma, &t->allowed);
    return t->ncores > 0 ? 0 : -1;
}

void rmpi_cpubind_topo_free(rmpi_cpubind_topo_t *t)
{
    free(t->core);
    free(t->numa);
    t->core = t->numa = NULL;
    t->ncores = t->nnuma = 0;
}

int rmpi_cpubind_plan(const rmpi_cpubind_topo_t *t, int bind, int map, int index, int count, cpu_set_t *out)
{
    *out = t->allowed;
    if (bind == RMPI_BIND_AUTO)
        bind = count <= t->ncores ? RMPI_BIND_CORE : RMPI_BIND_NONE;
    if (bind == RMPI_BIND_NONE || t->ncores == 0)
        return 0;
    int core = index % t->ncores;
    if (map == RMPI_MAP_NUMA && t->nnuma > 1) {
        /* Round robin over the NUMA nodes, then the k-th core inside the node. */
        const cpu_set_t *node = &t->numa[index % t->nnuma];
        int want = index / t->nnuma, inside = 0;
        for (int c = 0; c < t->ncores; c++) {
            cpu_set_t x;
            CPU_AND(&x, &t->core[c], node);
            inside += CPU_COUNT(&x) > 0;
        }
        want %= inside ? inside : 1;
        for (int c = 0; c < t->ncores; c++) {
            cpu_set_t x;
            CPU_AND(&x, &t->core[c], node);
            if (CPU_COUNT(&x) && want-- == 0) {
                core = c;
                break;
            }
        }
    }
    *out = t->core[core];
    if (bind == RMPI_BIND_NUMA) {
        for (int n = 0; n < t->nnuma; n++) {
            cpu_set_t x;
            CPU_AND(&x, &t->numa[n], &t->core[core]);
            if (CPU_COUNT(&x)) {
                *out = t->numa[n];
                break;
            }
        }
    }
    return 1;
}

void rmpi_cpubind_cores(const rmpi_cpubind_topo_t *t, const cpu_set_t *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < t->ncores; c++) {
        cpu_set_t x;
        CPU_AND(&x, &t->core[c], s);
        if (!CPU_COUNT(&x))
            continue;
        int n = snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
}

void rmpi_cpubind_describe(const rmpi_cpubind_topo_t *t, int bound, const cpu_set_t *s, char *buf, size_t len)
{
    char cores[1024], cpus[1024];
    rmpi_cpubind_cores(t, s, cores, sizeof cores);
    rmpi_cpubind_list(s, cpus, sizeof cpus);
    if (bound)
        snprintf(buf, len, "bound to %s %s (cpus %s)", strchr(cores, ',') ? "cores" : "core", cores, cpus);
    else
        snprintf(buf, len, "not bound (cpus %s)", cpus);
}

int rmpi_cpubind_env_parse(const char *s, int *bind, int *map, int *index, int *count, int *report)
{
    char buf[128], *save = NULL;
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    *bind = -1;
    *map = RMPI_MAP_SLOT;
    *index = *count = -1;
    *report = 0;
    int field = 0;
    for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save), field++) {
        char *end;
        long v;
        if (strcmp(tok, "report") == 0) {
            *report = 1;
            continue;
        }
        switch (field) {
        case 0: *bind = rmpi_cpubind_parse_bind(tok); break;
        case 1: *map = rmpi_cpubind_parse_map(tok); break;
        case 2:
        case 3:
            v = strtol(tok, &end, 10);
            if (end == tok || *end || v < 0 || v > 1000000)
                return -1;
            *(field == 2 ? index : count) = (int)v;
            break;
        default: return -1;
        }
    }
    if (*bind < 0 || *map < 0 || (*index < 0) != (*count < 0))
        return -1;
    return *count < 0 || *index < *count ? 0 : -1;
}
