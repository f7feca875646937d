/* Interface choice (RMPI_TCP_IFACES or the default set) and link speed. */
#include "tcp.h"

#include <arpa/inet.h>
#include <math.h>
#include <limits.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usable(const struct ifaddrs *ifa)
{
    return ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET && (ifa->ifa_flags & IFF_UP) &&
           (ifa->ifa_flags & IFF_RUNNING);
}

/* One address per interface: the first one seen (a second address of an interface would
 * be a second rail with the same name). */
static int iface_add(rmpi_tcp_iface_t *ifs, int n, int max, const struct ifaddrs *ifa)
{
    const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;
    for (int i = 0; i < n; i++)
        if (ifs[i].addr.s_addr == sin->sin_addr.s_addr || strcmp(ifs[i].name, ifa->ifa_name) == 0)
            return n;
    if (n == max || strlen(ifa->ifa_name) >= sizeof(ifs[0].name))
        return n;
    rmpi_tcp_iface_t *f = &ifs[n];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", ifa->ifa_name);
    f->addr = sin->sin_addr;
    if (ifa->ifa_netmask)
        f->mask = ((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr;
    f->loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    f->down = !usable(ifa);
    return n + 1;
}

/* RMPI_TCP_IFACES: names or IPv4 addresses (an address picks its interface). */
static int choose_listed(struct ifaddrs *all, const char *list, rmpi_tcp_iface_t *ifs, int max)
{
    int n = 0;
    char *copy = rmpi_xstrdup(list), *save = NULL;
    for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
        struct in_addr want;
        int is_addr = inet_pton(AF_INET, tok, &want) == 1;
        int found = 0;
        for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next) {
            if (!usable(ifa))
                continue;
            const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;
            if (is_addr ? sin->sin_addr.s_addr == want.s_addr : strcmp(ifa->ifa_name, tok) == 0) {
                n = iface_add(ifs, n, max, ifa);
                found = 1;
            }
        }
        /* A listed interface whose link is down (or without carrier) but which has its IPv4
         * address is expected to come up: it becomes a rail marked down, which the virtual
         * channels probe like a failed rail and use once it answers. Its address still binds
         * (the kernel keeps the local route of an address on a down link). */
        for (struct ifaddrs *ifa = all; ifa && !found && !is_addr; ifa = ifa->ifa_next)
            if (ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET && !(ifa->ifa_flags & IFF_LOOPBACK) &&
                strcmp(ifa->ifa_name, tok) == 0) {
                n = iface_add(ifs, n, max, ifa);
                found = 1;
                rmpi_warn("RMPI_TCP_IFACES names '%s', whose link is not up on host %s; it is used once it "
                          "comes up (tried after RMPI_RAIL_PROBE seconds, then less often up to every "
                          "RMPI_RAIL_PROBE_MAX).",
                          tok, rmpi_topo_hostname());
            }
        /* One list serves every host, so an address of another host is expected here;
         * an unknown interface name is more likely a typo. */
        if (!found && !is_addr)
            rmpi_warn("RMPI_TCP_IFACES names '%s', which is not an IPv4 interface of host %s; "
                      "it is ignored.",
                      tok, rmpi_topo_hostname());
    }
    /* Rails whose link is down need a live one beside them (the VC probes them over it). */
    int up = 0;
    for (int i = 0; i < n; i++)
        up += !ifs[i].down;
    if (up == 0) {
        n = 0;
        rmpi_warn("RMPI_TCP_IFACES=%s names no up IPv4 interface or address of host %s; the TCP "
                  "provider is not used there.",
                  list, rmpi_topo_hostname());
    }
    free(copy);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const rmpi_tcp_iface_t *)a)->name, ((const rmpi_tcp_iface_t *)b)->name);
}

int rmpi_tcp_iface_choose(rmpi_tcp_iface_t *ifs, int max, int size, int *listed)
{
    struct ifaddrs *all;
    *listed = 0;
    if (getifaddrs(&all) != 0) {
        rmpi_warn("tcp: getifaddrs failed; the TCP provider is not usable on this host.");
        return 0;
    }
    const char *list = rmpi_knobs.TCP_IFACES;
    int n = 0;
    if (list && *list) {
        *listed = 1;
        n = choose_listed(all, list, ifs, max);
    } else {
        /* Loopback serves only peers on this node: alone when every rank is here (RMPI_NET=tcp
         * on one host), beside the other interfaces when TCP also carries traffic within a
         * node, and when it is all this host has. */
        int here = rmpi_topo_local_size(rmpi_topo_my_node());
        int everyone_here = here >= size, tcp_within = rmpi_knobs.NET == RMPI_NET_TCP && here > 1;
        if (!everyone_here)
            for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next)
                if (usable(ifa) && !(ifa->ifa_flags & IFF_LOOPBACK))
                    n = iface_add(ifs, n, max, ifa);
        if (everyone_here || tcp_within || n == 0)
            for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next)
                if (usable(ifa) && (ifa->ifa_flags & IFF_LOOPBACK))
                    n = iface_add(ifs, n, max, ifa);
        if (n == 0)
            for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next)
                if (usable(ifa))
                    n = iface_add(ifs, n, max, ifa);
    }
    freeifaddrs(all);
    /* Rail order is interface-name order on every host, so both ends of a pair agree. */
    qsort(ifs, (size_t)n, sizeof(*ifs), by_name);
    return n;
}

uint64_t rmpi_tcp_iface_speed(const char *name)
{
    char path[128];
    snprintf(path, sizeof(path), "/sys/class/net/%s/speed", name);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long mbps = -1;
    if (fscanf(f, "%ld", &mbps) != 1)
        mbps = -1;
    fclose(f);
    return mbps > 0 ? (uint64_t)mbps * 125000u : 0;
}

/* Twice the BDP: the kernel counts its bookkeeping of every queued segment in the buffer
 * (about as much again, see rmpi_tcp_window), and a pipelined stream of medium messages
 * needs the whole round trip's bytes queued behind the ones in flight. Below 64 KiB the
 * kernel's own start (tcp_wmem's default, grown with the window) is not smaller. Nothing
 * when the kernel would cap the request (net.core.wmem_max, 208 KiB unless raised): a
 * fixed buffer below the BDP is worse than autotuning, which grows to tcp_wmem's maximum. */
int rmpi_tcp_far_sndbuf(double rtt_ns, double rate, long long cap, long long grant)
{
    if (cap <= 0 || !(rtt_ns > 0) || !isfinite(rtt_ns))
        return 0;
    double want = rate > 0 && isfinite(rate) ? 2 * rate * rtt_ns * 1e-9 : (double)cap;
    if (want > (double)cap)
        want = (double)cap;
    if (want > INT_MAX)
        want = INT_MAX;
    int bytes = (int)want; /* whole bytes before comparing: 2 x 125e6 x 2e-3 is 500000.00000001 */
    return bytes < 65536 || (grant > 0 && bytes > grant) ? 0 : bytes;
}

long long rmpi_tcp_wmem_max(void)
{
    FILE *f = fopen("/proc/sys/net/core/wmem_max", "r");
    if (!f)
        return 0;
    long long v = 0;
    if (fscanf(f, "%lld", &v) != 1 || v < 0)
        v = 0;
    fclose(f);
    return v;
}

/* The third field (the autotuning maximum) of /proc/sys/net/ipv4/<name>; 0 when unknown. */
static long long sysctl_max(const char *name)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/sys/net/ipv4/%s", name);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long long lo, dflt, hi;
    int n = fscanf(f, "%lld %lld %lld", &lo, &dflt, &hi);
    fclose(f);
    return n == 3 && hi > 0 ? hi : 0;
}

size_t rmpi_tcp_window(int sndbuf)
{
    if (sndbuf > 0)
        return (size_t)sndbuf; /* the kernel doubles what it is given, for its bookkeeping */
    /* The sender's buffer holds the bytes in flight plus the kernel's bookkeeping of them:
     * one stream through tools/netlab at 10 ms one way (BBR) carried 0.72 and 0.70 of a 1 and
     * 2 MiB tcp_wmem maximum per round trip. The receiver advertises about half of its
     * buffer (tcp_adv_win_scale, or the measured payload share on newer kernels). */
    long long w = sysctl_max("tcp_wmem") * 7 / 10, r = sysctl_max("tcp_rmem") / 2;
    return (size_t)(w && r ? RMPI_MIN(w, r) : w ? w : r);
}
