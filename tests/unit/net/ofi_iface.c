/* ofi: the network name libfabric's IP providers give a fabric, as src/net/ofi/ofi_iface.c
 * predicts it for a domain whose link is down at launch (it must equal what the provider
 * lists once the link is up, or the two ranks' cards would not match and the rails would
 * sort apart), and the cases where no such domain is built: no template, a template of
 * another address family or not named after its interface, an interface without an IPv4
 * address. Building one for real needs an interface whose link is down (the netns test
 * netns/multirail/adaptive-binding-late-ofi). */
#include "net/ofi/ofi.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../unit_check.h"

static void name_of(const char *addr, const char *mask, const char *want)
{
    struct in_addr a, m;
    char buf[64];
    inet_pton(AF_INET, addr, &a);
    inet_pton(AF_INET, mask, &m);
    int rc = rmpi_ofi_net_name(a, m, buf, sizeof buf);
    CHECK(rc == 0 && !strcmp(buf, want), "%s/%s: '%s' (rc %d), want '%s'", addr, mask, rc ? "" : buf, rc, want);
}

int main(void)
{
    name_of("10.201.1.1", "255.255.255.0", "10.201.1.0/24");
    name_of("10.201.1.2", "255.255.255.0", "10.201.1.0/24");
    name_of("192.168.77.130", "255.255.255.128", "192.168.77.128/25");
    name_of("172.16.5.9", "255.240.0.0", "172.16.0.0/12");
    name_of("10.0.0.7", "255.255.255.255", "10.0.0.7/32");
    name_of("10.0.0.7", "0.0.0.0", "0.0.0.0/0");
    struct in_addr a = {0}, m = {0};
    char small[8];
    CHECK(rmpi_ofi_net_name(a, m, small, 4) == -1, "a buffer too small is refused");

    /* interfaces: loopback and unknown names have no usable IPv4 address */
    int up = -1;
    CHECK(rmpi_ofi_iface("lo", NULL, NULL, 0, &up) == -1, "loopback is never a rail built down");
    CHECK(rmpi_ofi_iface("no-such-if0", NULL, NULL, 0, &up) == -1 && up == -1, "an unknown interface");
    CHECK(rmpi_ofi_iface(NULL, NULL, NULL, 0, NULL) == -1, "no name");

    /* templates that prove nothing build nothing */
    CHECK(rmpi_ofi_down_info(NULL, "rail1") == NULL, "no template");
    struct fi_info *t = fi_allocinfo();
    t->fabric_attr->name = strdup("10.201.0.0/24");
    t->domain_attr->name = strdup("no-such-if0");
    CHECK(rmpi_ofi_down_info(t, "rail1") == NULL, "a template without an address");
    struct sockaddr_in6 *s6 = calloc(1, sizeof *s6);
    s6->sin6_family = AF_INET6;
    t->src_addr = s6;
    t->src_addrlen = sizeof *s6;
    CHECK(rmpi_ofi_down_info(t, "rail1") == NULL, "an IPv6 template");
    free(t->src_addr);
    struct sockaddr_in *s4 = calloc(1, sizeof *s4);
    s4->sin_family = AF_INET;
    t->src_addr = s4;
    t->src_addrlen = sizeof *s4;
    CHECK(rmpi_ofi_down_info(t, "rail1") == NULL, "a template not named after an interface of this host");
    free(t->domain_attr->name);
    t->domain_attr->name = strdup("lo");
    CHECK(rmpi_ofi_down_info(t, "rail1") == NULL, "a loopback template");
    fi_freeinfo(t);
    return finish("ofi_iface");
}
