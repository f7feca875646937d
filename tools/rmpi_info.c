/* rmpi_info: what this RailMPI build is, which providers it has, which rails each would
 * open on this machine, and the knob table.
 *   rmpi_info            everything
 *   rmpi_info --knobs    the knob table with current values
 *   rmpi_info --knobs-md the knob table as markdown (docs/knobs.md is generated from it) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "net/net.h"

static void on_frame(rmpi_rail_t *r, int peer, const void *f, size_t len) {}
static void on_lost(rmpi_rail_t *r, int peer, const char *why) {}

static void rails(void)
{
    /* open the providers as a singleton would, with RMPI_NET forced per provider, to list
     * the rails each offers here */
    rmpi_pm_info_t pm;
    if (rmpi_pmi_init(&pm) || rmpi_topo_init(&pm)) {
        printf("  (could not start a local process-manager context)\n");
        return;
    }
    static const rmpi_net_env_t env = {0, 2, "rmpi_info", on_frame, on_lost};
    const struct rmpi_net_ops *provs[] = {
        &rmpi_self_ops,
        &rmpi_shm_ops,
        &rmpi_tcp_ops,
#ifdef RMPI_HAVE_OFI
        &rmpi_ofi_ops,
#endif
    };
    for (size_t p = 0; p < sizeof provs / sizeof provs[0]; p++) {
        rmpi_rail_t *r[RMPI_NET_MAX_RAILS];
        int n = provs[p]->open(&env, r, RMPI_NET_MAX_RAILS);
        printf("  provider %-5s built, %d rail(s)%s\n", provs[p]->name, n < 0 ? 0 : n,
               n <= 0 ? " (not usable here)" : "");
        for (int i = 0; i < n; i++) {
            const rmpi_net_hints_t *h = &r[i]->hints;
            printf("    rail %-20s scope %-5s bw %s%llu MB/s, latency %u ns, rdma %s, max frame %zu, "
                   "%zu bytes per peer\n",
                   h->name,
                   h->scope == RMPI_SCOPE_SELF    ? "self"
                   : h->scope == RMPI_SCOPE_INTRA ? "intra"
                                                  : "inter",
                   h->bw ? "" : "unknown ", (unsigned long long)(h->bw / 1000000), h->latency_ns,
                   h->rdma_native ? "native" : "emulated", h->max_frame, h->mem_per_peer);
            if (r[i]->ops->describe)
                r[i]->ops->describe(r[i], stdout);
        }
        for (int i = 0; i < n; i++)
            r[i]->ops->close(r[i]);
    }
#ifdef RMPI_HAVE_OFI
    rmpi_ofi_report(stdout);
#else
    printf("  libfabric: not built in (install libfabric-dev and pkg-config, then rebuild)\n");
#endif
}

int main(int argc, char **argv)
{
    rmpi_knobs_init();
    if (argc > 1 && !strcmp(argv[1], "--knobs-md")) {
        rmpi_knobs_print(stdout, 1);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--knobs")) {
        rmpi_knobs_print(stdout, 0);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: rmpi_info [--knobs | --knobs-md]\n");
        return 2;
    }
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, abi_major, abi_minor;
    MPI_Get_library_version(v, &len);
    MPI_Abi_get_version(&abi_major, &abi_minor);
    printf("%s\n", v);
    printf("  MPI %d.%d, ABI %d.%d, built %s %s\n", MPI_VERSION, MPI_SUBVERSION, abi_major, abi_minor, __DATE__,
           __TIME__);
#ifdef RMPI_HAVE_PMIX
    printf("  process managers: PMI-1 (mpiexec, hydra), PMI-2 (srun --mpi=pmi2), PMIx (libpmix: mpirun, "
           "prterun, srun --mpi=pmix); RMPI_PMI picks\n");
#else
    printf("  process managers: PMI-1 (mpiexec, hydra), PMI-2 (srun --mpi=pmi2); PMIx not built in (install "
           "libpmix-dev, then rebuild)\n");
#endif
    rmpi_cpubind_topo_t t;
    if (rmpi_cpubind_topo_load(&t, 1) == 0) {
        char cpus[256];
        rmpi_cpubind_list(&t.allowed, cpus, sizeof cpus);
        printf("  binding (mpiexec --bind-to, RMPI_BIND): %d cores, %d NUMA nodes, cpus %s of %d, read from %s%s\n",
               t.ncores, t.nnuma, cpus, t.host_cpus, t.source,
#ifdef RMPI_HAVE_HWLOC
               "");
#else
               " (hwloc not built in: install libhwloc-dev, then rebuild)");
#endif
        rmpi_cpubind_topo_free(&t);
    }
    printf("providers and the rails they open on this host (%s):\n", "as rank 0 of a job");
    rails();
    printf("knobs (RMPI_<NAME>; current value, default, meaning):\n");
    rmpi_knobs_print(stdout, 0);
    return 0;
}
