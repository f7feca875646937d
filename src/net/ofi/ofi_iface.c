/* ofi: a domain named in RMPI_OFI_DOMAINS whose interface's link is down at launch.
 *
 * libfabric's IP providers (tcp, udp, under ofi_rxm/ofi_rxd) make one domain per interface
 * whose link is up (IFF_UP and IFF_RUNNING), named after the interface, in a fabric named
 * after its network ("10.201.1.0/24"), its address the interface's. A listed interface whose
 * link is down is not offered, so the job ran without it even after it came up. Its address
 * is still the host's while the link is down (the kernel keeps it, and binding to it works),
 * so the domain the provider would list is built here from one it does list (the template:
 * same provider, same attributes) with that interface's name, network and address; its
 * endpoint then listens there from launch and its card goes in the PMI exchange like any
 * other, so the wire and the PMI keys are unchanged. The rail starts marked down
 * (hints.down): the virtual channels probe it and use it once a connection is made.
 *
 * Only where the template proves the provider names its domains this way (its own
 * interface's network is its fabric name, its address an IPv4 socket address): for any
 * other provider nothing is built and the name is warned about as before.
 * rmpi_ofi_net_name is pure (tests/unit/net/ofi_iface.c). */
#include "ofi.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int rmpi_ofi_net_name(struct in_addr addr, struct in_addr mask, char *buf, size_t len)
{
    uint32_t m = ntohl(mask.s_addr);
    int bits = 0;
    for (uint32_t b = m; b & 0x80000000u; b <<= 1)
        bits++;
    /* libfabric counts the leading ones of the mask, the network is the address masked */
    struct in_addr net = {.s_addr = addr.s_addr & mask.s_addr};
    char a[INET_ADDRSTRLEN];
    if (!inet_ntop(AF_INET, &net, a, sizeof a))
        return -1;
    int n = snprintf(buf, len, "%s/%d", a, bits);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rmpi_ofi_iface(const char *name, struct sockaddr_in *addr, char *net, size_t len, int *up)
{
    struct ifaddrs *all;
    if (!name || getifaddrs(&all))
        return -1;
    int rc = -1;
    for (struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next) {
        if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !ifa->ifa_netmask ||
            (ifa->ifa_flags & IFF_LOOPBACK) || strcmp(ifa->ifa_name, name))
            continue;
        const struct sockaddr_in *sa = (const struct sockaddr_in *)ifa->ifa_addr;
        const struct sockaddr_in *sm = (const struct sockaddr_in *)ifa->ifa_netmask;
        if (addr)
            *addr = *sa;
        if (up)
            *up = (ifa->ifa_flags & IFF_UP) && (ifa->ifa_flags & IFF_RUNNING);
        rc = net ? rmpi_ofi_net_name(sa->sin_addr, sm->sin_addr, net, len) : 0;
        break;
    }
    freeifaddrs(all);
    return rc;
}

struct fi_info *rmpi_ofi_down_info(const struct fi_info *tmpl, const char *name)
{
    char net[64], tnet[64];
    struct sockaddr_in sa;
    int up = 0;
    if (!tmpl || !tmpl->src_addr || tmpl->src_addrlen != sizeof(struct sockaddr_in) ||
        ((const struct sockaddr *)tmpl->src_addr)->sa_family != AF_INET || !tmpl->fabric_attr->name ||
        !tmpl->domain_attr->name)
        return NULL;
    /* the provider names the template after its interface and that interface's network */
    if (rmpi_ofi_iface(tmpl->domain_attr->name, NULL, tnet, sizeof tnet, NULL) || strcmp(tnet, tmpl->fabric_attr->name))
        return NULL;
    if (rmpi_ofi_iface(name, &sa, net, sizeof net, &up) || up)
        return NULL; /* no IPv4 address there, or up (then the provider would have listed it) */
    struct fi_info *fi = fi_dupinfo(tmpl);
    struct sockaddr_in *src = calloc(1, sizeof *src);
    char *fab = strdup(net), *dom = strdup(name);
    if (!fi || !src || !fab || !dom) {
        fi_freeinfo(fi);
        free(src);
        free(fab);
        free(dom);
        return NULL;
    }
    if (fi->nic) { /* the template's device, not this interface's */
        fi_close(&fi->nic->fid);
        fi->nic = NULL;
    }
    src->sin_family = AF_INET;
    src->sin_addr = sa.sin_addr; /* port 0: the provider picks one, published in the card */
    free(fi->src_addr);
    fi->src_addr = src;
    fi->src_addrlen = sizeof *src;
    free(fi->fabric_attr->name);
    fi->fabric_attr->name = fab;
    free(fi->domain_attr->name);
    fi->domain_attr->name = dom;
    return fi;
}
