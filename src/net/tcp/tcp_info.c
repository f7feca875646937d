/*
 * The peer's advertised receive window of a socket, from the kernel's TCP_INFO. It is in a
 * file of its own because the provider includes glibc's <netinet/tcp.h>, whose struct
 * tcp_info stops before tcpi_snd_wnd (Linux 5.4), and the two headers do not mix.
 */
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp.h"

long rmpi_tcp_snd_wnd(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_snd_wnd) + sizeof ti.tcpi_snd_wnd)
        return -1;
    return (long)ti.tcpi_snd_wnd;
}

uint64_t rmpi_tcp_min_rtt(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_min_rtt) + sizeof ti.tcpi_min_rtt || ti.tcpi_min_rtt == ~0u)
        return 0;
    return (uint64_t)ti.tcpi_min_rtt * 1000u;
}
