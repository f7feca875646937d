#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Node numbering: ranks share a node when they have the same host name AND the same kernel
 * boot id (two machines that happen to share a name are told apart; network namespaces of
 * one machine with the same name share /dev/shm, so treating them as one node is right).
 * Nodes are numbered in order of their lowest rank, so every rank computes the same table. */
static int *node_of, *local_rank, *node_size;
static int nranks, my_rank, my_node, nnodes_all;
static char hostname[256];
static char shm_prefix[RMPI_SHM_PREFIX_MAX];
static uint32_t node_tag;
static int node_cpus;                 /* CPUs the ranks of this node may run on, together */
static int over;                      /* more ranks on this kernel than CPUs they may run on */
static int kernel_ranks, kernel_cpus; /* the ranks on this kernel (boot id), their CPUs */
static char bind_text[512];           /* how RMPI_BIND left this rank, for RMPI_REPORT */
static int *site_of, nsites = 1, sites_pending;

/* RMPI_BIND (set by mpiexec for ranks on other hosts, or by hand under srun): bind this
 * rank as mpiexec binds local ones, unless someone already did (Slurm's task/affinity, a
 * taskset around the launcher): a mask narrower than the host is respected. index < 0:
 * the rank's place among its node's ranks, known only after the host exchange. */
static void bind_self(int rank, int bind, int map, int index, int count, int report)
{
    rmpi_cpubind_topo_t t;
    const char *slurm = getenv("SLURM_CPU_BIND_TYPE");
    cpu_set_t set;
    if (rmpi_cpubind_topo_load(&t, 1) < 0) {
        rmpi_warn("RMPI_BIND=%s: cannot read this host's cores (%s); running unbound.", rmpi_knobs.BIND,
                  strerror(errno));
        return;
    }
    int bound = 0;
    if (slurm && *slurm && !strstr(slurm, "none")) {
        snprintf(bind_text, sizeof bind_text, "left as Slurm bound it (%s)", slurm);
    } else if (CPU_COUNT(&t.allowed) < t.host_cpus && bind != RMPI_BIND_NONE) {
        char cpus[256];
        rmpi_cpubind_list(&t.allowed, cpus, sizeof cpus);
        snprintf(bind_text, sizeof bind_text, "left as started (already bound to cpus %s)", cpus);
    } else {
        bound = rmpi_cpubind_plan(&t, bind, map, index, count, &set);
        if (bound && sched_setaffinity(0, sizeof set, &set) < 0) {
            rmpi_warn("RMPI_BIND=%s: this host refuses to bind rank %d (%s); running unbound.", rmpi_knobs.BIND, rank,
                      strerror(errno));
            bound = 0;
            set = t.allowed;
        }
        rmpi_cpubind_describe(&t, bound, &set, bind_text, sizeof bind_text);
    }
    if (report)
        fprintf(stderr, "report-bindings: rank %d on %s %s\n", rank, hostname, bind_text);
    rmpi_cpubind_topo_free(&t);
}

static void sites_log(int rank, const char *how)
{
    if (rank != 0 || nsites < 2)
        return;
    size_t need = rmpi_site_format(site_of, nranks, NULL, 0) + 1;
    char *text = rmpi_xmalloc(need);
    rmpi_site_format(site_of, nranks, text, need);
    rmpi_log(1, "%d sites (%s): %s", nsites, how, text);
    free(text);
}

/* Whether the rank of host card `card` ("host/boot id") runs on the kernel of boot id
 * `boot`; without a boot id, whether it is on this node (same_node). */
static int same_kernel(const char *card, const char *boot, int same_node)
{
    if (!boot[0])
        return same_node;
    const char *b = strrchr(card, '/');
    return b && !strcmp(b + 1, boot);
}

/* RMPI_SITES (rt.h): given, one, or auto (measured later, after the network is up).
 * names: the host cards, "host/boot id". */
static void sites_given(int rank, char **names)
{
    const char *spec = rmpi_knobs.SITES;
    if (!(rmpi_knobs.SITE_GAP > 1))
        rmpi_fatal("RMPI_SITE_GAP=%g must be a ratio above 1.", rmpi_knobs.SITE_GAP);
    if (!(rmpi_knobs.SITE_RTT_MIN > 0))
        rmpi_fatal("RMPI_SITE_RTT_MIN=%g must be a positive number of microseconds.", rmpi_knobs.SITE_RTT_MIN);
    site_of = rmpi_xcalloc((size_t)nranks, sizeof *site_of);
    nsites = 1;
    if (!strcmp(spec, "auto")) {
        sites_pending = nnodes_all > 1 && rmpi_knobs.WAN_TUNE;
        return;
    }
    if (!strcmp(spec, "one"))
        return;
    char why[256];
    for (int r = 0; r < nranks; r++)
        names[r][strcspn(names[r], "/")] = '\0';
    nsites = rmpi_site_parse(spec, nranks, (const char *const *)names, site_of, why, sizeof why);
    if (nsites < 0)
        rmpi_fatal("RMPI_SITES=%s: %s. Write sites as world ranks, ranges or host names, sites separated by ':' "
                   "(e.g. 0-3:4-7 or nodeA*:nodeB*), or auto, or one.",
                   spec, why);
    sites_log(rank, "RMPI_SITES");
}

int rmpi_topo_init(const rmpi_pm_info_t *pm)
{
    char key[64];
    nranks = pm->size;
    my_rank = pm->rank;
    rmpi_shm_job_prefix(pm->kvsname, shm_prefix, sizeof shm_prefix);
    if (gethostname(hostname, sizeof hostname - 1))
        snprintf(hostname, sizeof hostname, "unknown");
    char card[sizeof hostname + 48 + 512] = "";
    char boot[40] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = 0;
        fclose(f);
        boot[strcspn(boot, "\n")] = 0;
    }
    snprintf(card, sizeof card, "%s/%s", hostname, boot);
    node_tag = 2166136261u;
    for (const char *s = card; *s; s++)
        node_tag = (node_tag ^ (uint8_t)*s) * 16777619u;
    int bind = -1, map, bindex, bcount, report;
    if (rmpi_knobs.BIND[0] && rmpi_cpubind_env_parse(rmpi_knobs.BIND, &bind, &map, &bindex, &bcount, &report) < 0)
        rmpi_fatal("RMPI_BIND=%s is not BIND[:MAP[:INDEX:COUNT]][:report] (BIND core|numa|none|auto, "
                   "MAP core|numa|node|slot, INDEX < COUNT).",
                   rmpi_knobs.BIND);
    /* auto (mpiexec's default) places a rank by its index among the ranks of its host
     * name; hosts that are containers or network namespaces of one machine (the lab's
     * "hosts") then put all their first ranks on the same core, and two ranks taking
     * turns on one core made a lab ping-pong 9 us one way instead of 5.6 on a core each
     * (docs/results/multirail.md). So auto waits for the exchange and counts the ranks
     * that share this kernel (boot id), which on separate machines is the same count. */
    int by_kernel = bind == RMPI_BIND_AUTO && boot[0];
    if (bind >= 0 && bindex >= 0 && !by_kernel)
        bind_self(pm->rank, bind, map, bindex, bcount, report);
    /* The card carries this rank's affinity mask after '|': the node's ranks together may
     * use the union of them, which says whether they are more than its CPUs. */
    cpu_set_t mine;
    char list[1024];
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    rmpi_cpubind_list(&mine, list, sizeof list);
    /* PMI-2 values hold 1024 bytes: a scattered mask that makes the card longer than half
     * that is left out, and the node's CPUs then fall back to this rank's own mask. */
    if (strlen(card) + strlen(list) + 1 < 512)
        snprintf(card + strlen(card), sizeof card - strlen(card), "|%s", list);
    snprintf(key, sizeof key, "host-%d", pm->rank);
    if (rmpi_pmi_put(key, card))
        return -1;
    int key_from_kvs = !rmpi_rt_job_key() && !pm->singleton;
    uint8_t jk[RMPI_AUTH_KEY_BYTES];
    char jkhex[2 * RMPI_AUTH_KEY_BYTES + 1];
    if (!rmpi_rt_job_key() && (pm->singleton || pm->rank == 0)) {
        if (rmpi_auth_random(jk, sizeof jk))
            rmpi_fatal("getrandom failed; no job key can be made.");
        rmpi_rt_set_job_key(jk);
        if (!pm->singleton) {
            rmpi_auth_hex(jk, sizeof jk, jkhex);
            if (rmpi_pmi_put("rmpi-jobkey", jkhex))
                return -1;
        }
    }
    if (rmpi_pmi_fence())
        return -1;
    if (key_from_kvs && pm->rank != 0) {
        if (rmpi_pmi_get("rmpi-jobkey", jkhex, sizeof jkhex) || rmpi_auth_unhex(jkhex, jk, sizeof jk))
            rmpi_fatal("the process manager has no valid job key from rank 0.");
        rmpi_rt_set_job_key(jk);
    }
    char **names = rmpi_xcalloc((size_t)nranks, sizeof *names);
    node_of = rmpi_xcalloc((size_t)nranks, sizeof *node_of);
    local_rank = rmpi_xcalloc((size_t)nranks, sizeof *local_rank);
    node_size = rmpi_xcalloc((size_t)nranks, sizeof *node_size);
    cpu_set_t *mask = rmpi_xcalloc((size_t)nranks, sizeof *mask);
    int nnodes = 0, masks_known = 1;
    for (int r = 0; r < nranks; r++) {
        char val[sizeof card];
        snprintf(key, sizeof key, "host-%d", r);
        if (r == pm->rank)
            snprintf(val, sizeof val, "%s", card);
        else if (rmpi_pmi_get(key, val, sizeof val))
            rmpi_fatal("the process manager has no host name for rank %d.", r);
        char *bar = strchr(val, '|');
        if (bar)
            *bar = '\0';
        if (!bar || rmpi_cpubind_parse_list(bar + 1, &mask[r]) < 0)
            masks_known = 0;
        names[r] = rmpi_xstrdup(val);
        int n = -1;
        for (int q = 0; q < r && n < 0; q++)
            if (!strcmp(names[q], val))
                n = node_of[q];
        if (n < 0)
            n = nnodes++;
        node_of[r] = n;
        local_rank[r] = node_size[n]++;
    }
    long long fake = rmpi_knobs.TOPO_FAKE_NODES;
    if (fake > 0) { /* RMPI_TOPO_FAKE_NODES: pretend nodes for tests of node-aware paths */
        memset(node_size, 0, (size_t)nranks * sizeof *node_size);
        for (int r = 0; r < nranks; r++) {
            node_of[r] = (int)((long long)r * (fake < nranks ? fake : nranks) / nranks);
            local_rank[r] = node_size[node_of[r]]++;
        }
    }
    my_node = node_of[pm->rank];
    cpu_set_t all, kall;
    CPU_ZERO(&all);
    CPU_ZERO(&kall);
    int kranks = 0;
    for (int r = 0; r < nranks; r++) {
        if (node_of[r] == my_node)
            CPU_OR(&all, &all, &mask[r]);
        if (same_kernel(names[r], boot, node_of[r] == my_node)) {
            CPU_OR(&kall, &kall, &mask[r]);
            kranks++;
        }
    }
    node_cpus = CPU_COUNT(masks_known ? &all : &mine);
    /* Contention for CPUs is a matter of the kernel, not of the host name: the lab's
     * namespaces (and RMPI_TOPO_FAKE_NODES) are "nodes" of one rank each on one machine,
     * and four of them on two cores wait for each other as four ranks of one node do. */
    int kcpus = CPU_COUNT(masks_known ? &kall : &mine);
    if (kcpus <= 0)
        kcpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    over = kcpus > 0 && kranks > kcpus;
    kernel_ranks = kranks;
    kernel_cpus = kcpus;
    free(mask);
    if (by_kernel) {
        int kindex = 0, kcount = 0;
        for (int r = 0; r < nranks; r++)
            if (same_kernel(names[r], boot, 0)) {
                kcount++;
                kindex += r < pm->rank;
            }
        bind_self(pm->rank, bind, map, kindex, kcount, report);
    } else if (bind >= 0 && bindex < 0)
        bind_self(pm->rank, bind, map, local_rank[pm->rank], node_size[my_node], report);
    if (!bind_text[0] && sched_getaffinity(0, sizeof mine, &mine) == 0) {
        char cpus[256];
        rmpi_cpubind_list(&mine, cpus, sizeof cpus);
        snprintf(bind_text, sizeof bind_text, "as started (cpus %s; %d of the node's ranks share %d cpus)", cpus,
                 node_size[my_node], node_cpus);
    }
    nnodes_all = 0;
    for (int r = 0; r < nranks; r++)
        nnodes_all = node_of[r] >= nnodes_all ? node_of[r] + 1 : nnodes_all;
    sites_given(pm->rank, names);
    for (int r = 0; r < nranks; r++)
        free(names[r]);
    free(names);
    return 0;
}

void rmpi_topo_sites_measured(const double *rtt)
{
    int *node_site = rmpi_xmalloc((size_t)nnodes_all * sizeof *node_site);
    nsites = rmpi_site_cluster(rtt, nnodes_all, rmpi_knobs.SITE_RTT_MIN * 1e3, rmpi_knobs.SITE_GAP, node_site);
    for (int r = 0; r < nranks; r++)
        site_of[r] = node_site[node_of[r]];
    free(node_site);
    sites_pending = 0;
    sites_log(my_rank, "measured round trips");
}

int rmpi_topo_nnodes(void) { return nnodes_all; }
int rmpi_topo_site_of(int rank) { return rank < nranks ? site_of[rank] : nsites + rank - nranks; }
int rmpi_topo_nsites(void) { return nsites; }
int rmpi_topo_sites_pending(void) { return sites_pending; }

int rmpi_topo_node_of(int rank) { return rank < nranks ? node_of[rank] : nnodes_all + rank - nranks; }
int rmpi_topo_my_node(void) { return my_node; }
int rmpi_topo_local_rank(int rank) { return rank < nranks ? local_rank[rank] : 0; }
int rmpi_topo_local_size(int node) { return node < nnodes_all ? node_size[node] : 1; }
uint32_t rmpi_topo_node_tag(void) { return node_tag; }
int rmpi_topo_node_cpus(void) { return node_cpus; }
int rmpi_topo_oversubscribed(void) { return over; }
void rmpi_topo_kernel_share(int *ranks, int *cpus)
{
    *ranks = kernel_ranks;
    *cpus = kernel_cpus;
}
const char *rmpi_topo_binding(void) { return bind_text; }
const char *rmpi_topo_hostname(void) { return hostname; }

const char *rmpi_topo_shm_prefix(void) { return shm_prefix; }

void rmpi_topo_finalize(void)
{
    free(node_of);
    free(local_rank);
    free(node_size);
    free(site_of);
    node_of = local_rank = node_size = site_of = NULL;
    nsites = 1;
    sites_pending = 0;
}
