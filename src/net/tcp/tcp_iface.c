/* Interface choice (RMPI_TCP_IFACES), link speed, and the address card peers publish. */
#include "tcp.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iface_add(rmpi_tcp_iface_t *ifs, int n, int max, const struct ifaddrs *ifa)
{
    const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;
    for (int i = 0; i < n; i++)
        if (ifs[i].addr.s_addr == sin->sin_addr.s_addr)
            return n;
    if (n == max)
        return n;
    rmpi_tcp_iface_t *f = &ifs[n];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", ifa->ifa_name);
    f->addr = sin->sin_addr;
    if (ifa->ifa_netmask)
        f->mask = ((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr;
    f->loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    return n + 1;
}

static int usable(const struct ifaddrs *ifa)
{
    return ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET && (ifa->ifa_flags & IFF_UP) &&
           (ifa->ifa_flags & IFF_RUNNING);
}

/* RMPI_TCP_IFACES: names or IPv4 addresses, in the order given. */
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
        /* One list serves every host, so an address of another host is expected here;
         * an unknown interface name is more likely a typo. */
        if (!found && !is_addr)
            rmpi_warn("RMPI_TCP_IFACES names '%s', which is not an up IPv4 interface of host %s; "
                      "it is ignored.", tok, rmpi_topo_hostname());
    }
    if (n == 0)
        rmpi_warn("RMPI_TCP_IFACES=%s names no up IPv4 interface or address of host %s; the TCP "
                  "provider is not used there.", list, rmpi_topo_hostname());
    free(copy);
    return n;
}

int rmpi_tcp_iface_choose(rmpi_tcp_iface_t *ifs, int max)
{
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0) {
        rmpi_warn("tcp: getifaddrs failed; the TCP provider is not usable on this host.");
        return 0;
    }
    const char *list = rmpi_knobs.TCP_IFACES;
    int n = 0;
    if (list && *list) {
        n = choose_listed(all, list, ifs, max);
    } else {
        for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next)
            if (usable(ifa) && !(ifa->ifa_flags & IFF_LOOPBACK))
                n = iface_add(ifs, n, max, ifa);
        /* Loopback only serves peers on this node, so it is listed only if there are some
         * (RMPI_NET=tcp within a node) or if it is all this host has. */
        int node_peers = rmpi_topo_local_size(rmpi_topo_my_node()) > 1;
        if (node_peers || n == 0)
            for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next)
                if (usable(ifa) && (ifa->ifa_flags & IFF_LOOPBACK))
                    n = iface_add(ifs, n, max, ifa);
    }
    freeifaddrs(all);
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

int rmpi_tcp_card_parse(const char *card, struct sockaddr_in *addrs, int max)
{
    int n = 0;
    char *copy = rmpi_xstrdup(card), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon)
            goto bad;
        *colon = '\0';
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end || port <= 0 || port > 65535)
            goto bad;
        memset(&addrs[n], 0, sizeof(addrs[n]));
        addrs[n].sin_family = AF_INET;
        addrs[n].sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, tok, &addrs[n].sin_addr) != 1)
            goto bad;
        n++;
    }
    free(copy);
    return n;
bad:
    free(copy);
    return -1;
}
