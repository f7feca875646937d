/*
 * The peer's advertised receive window and the smallest round trip of a socket, from the
 * kernel's TCP_INFO. They are in a file of their own because the provider includes glibc's
 * <netinet/tcp.h>, whose struct tcp_info stops before tcpi_min_rtt (Linux 4.6) and
 * tcpi_snd_wnd (Linux 5.4), and the two headers do not mix.
 */
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp.h"

/* TCP_INFO of fd; its length, or 0 when it cannot be read. */
static socklen_t info(int fd, struct tcp_info *ti)
{
    socklen_t len = sizeof *ti;
    memset(ti, 0, sizeof *ti);
    return getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len) == 0 ? len : 0;
}

long rmpi_tcp_snd_wnd(int fd)
{
    struct tcp_info ti;
    if (info(fd, &ti) < offsetof(struct tcp_info, tcpi_snd_wnd) + sizeof ti.tcpi_snd_wnd)
        return -1;
    return (long)ti.tcpi_snd_wnd;
}

uint64_t rmpi_tcp_min_rtt_ns(int fd)
{
    struct tcp_info ti;
    /* ~0u: no sample yet */
    if (info(fd, &ti) < offsetof(struct tcp_info, tcpi_min_rtt) + sizeof ti.tcpi_min_rtt || ti.tcpi_min_rtt == ~0u)
        return 0;
    return (uint64_t)ti.tcpi_min_rtt * 1000u;
}
