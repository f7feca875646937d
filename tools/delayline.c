/*
 * rmpi_delayline: a user-space delay line between two network interfaces, for kernels
 * without netem (tools/netlab puts one in a "wire" namespace between two veths).
 *
 * Every frame that arrives on one interface is sent out of the other DELAY later, in
 * arrival order (one FIFO per direction). The arrival time is the kernel's receive
 * timestamp, so a late wake-up of this process does not add to the delay; departures are
 * driven by one timerfd armed for the earliest head of the two FIFOs (no busy polling),
 * set early by the timer's measured lateness so that frames leave on time on average.
 * A FIFO is bounded in bytes and frames; a frame that does not fit is dropped (tail drop),
 * as a router's full queue would. Frames are read and written with a virtio-net header
 * (PACKET_VNET_HDR), so GSO super-frames and checksum offload cross the line unchanged.
 *
 * Rate is not this program's business: tools/netlab shapes the endpoints with tc tbf, and
 * rate and delay compose. Exits 0 when an interface goes away (the lab was taken down) or
 * on SIGTERM/SIGINT, printing its counters to stderr; SIGUSR1 prints them too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAX (256 * 1024) /* a GSO frame on veth is at most 64 KiB; room to spare */
#define VNET_LEN ((ssize_t)sizeof(struct virtio_net_hdr))
#define BATCH 64          /* frames read from one socket per wake-up before serving departures */
#define MAX_EARLY 500000u /* ns: the most the timer is set ahead of a departure */

struct frame {
    uint64_t due; /* CLOCK_MONOTONIC ns */
    size_t len;   /* vnet header + frame */
    unsigned char data[];
};

struct dir {
    const char *from, *to;
    int in_fd, out_fd;
    struct frame **ring;
    size_t head, count, bytes;
    uint64_t passed, passed_bytes, dropped_full, dropped_send, truncated;
    int64_t late_sum, late_max; /* ns a departure left after its due time (< 0: early) */
    uint64_t age_sum;           /* ns between the kernel's stamp and our read */
};

static size_t ring_slots = 65536; /* a power of two */
static size_t queue_bytes = 64u << 20;
static volatile sig_atomic_t got_stop, got_stats;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        got_stats = 1;
    else
        got_stop = 1;
}

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "5ms", "250us", "0.5ms", "1s", "100ns"; a bare number is milliseconds. */
static int parse_delay(const char *s, uint64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    double mult = 1e6;
    if (end == s || v < 0)
        return -1;
    if (!strcmp(end, "s"))
        mult = 1e9;
    else if (!strcmp(end, "ms") || !*end)
        mult = 1e6;
    else if (!strcmp(end, "us"))
        mult = 1e3;
    else if (!strcmp(end, "ns"))
        mult = 1;
    else
        return -1;
    *ns = (uint64_t)(v * mult + 0.5);
    return 0;
}

/* "64m", "512k", "1g" or bytes. */
static int parse_bytes(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default: break;
    }
    if (*end || v == 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int open_iface(const char *name)
{
    int ifindex = (int)if_nametoindex(name);
    if (!ifindex) {
        fprintf(stderr, "rmpi_delayline: no interface %s in this namespace\n", name);
        return -1;
    }
    /* Protocol 0 here, ETH_P_ALL at bind: no frame of another interface queues in between. */
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("rmpi_delayline: socket(AF_PACKET) (needs CAP_NET_RAW)");
        return -1;
    }
    int one = 1, big = 8 << 20;
    /* Our own transmissions on this interface must not come back as arrivals. */
    if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) ||
        setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) ||
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one)) {
        perror("rmpi_delayline: setsockopt");
        close(fd);
        return -1;
    }
    /* Best effort: skip this namespace's qdisc; bigger buffers absorb bursts. */
    (void)setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big))
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big))
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex};
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll)) {
        fprintf(stderr, "rmpi_delayline: bind to %s: %s\n", name, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int gone(int err) { return err == ENETDOWN || err == ENXIO || err == ENODEV; }

/* Reads up to BATCH frames; returns -1 when the interface is gone. */
static int take_arrivals(struct dir *d, uint64_t delay, unsigned char *buf)
{
    for (int i = 0; i < BATCH; i++) {
        char ctl[CMSG_SPACE(sizeof(struct timespec))];
        struct iovec iov = {.iov_base = buf, .iov_len = FRAME_MAX};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t n = recvmsg(d->in_fd, &mh, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return 0;
            if (gone(errno))
                return -1;
            fprintf(stderr, "rmpi_delayline: recv on %s: %s\n", d->from, strerror(errno));
            return -1;
        }
        if ((mh.msg_flags & MSG_TRUNC) || n <= VNET_LEN) {
            d->truncated++;
            continue;
        }
        uint64_t mono = now_ns(CLOCK_MONOTONIC), arrival = mono;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(c), sizeof ts);
                uint64_t real = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
                uint64_t real_now = now_ns(CLOCK_REALTIME);
                /* The kernel stamps CLOCK_REALTIME; carry its age over to the monotonic clock. */
                if (real <= real_now && real_now - real < mono) {
                    arrival = mono - (real_now - real);
                    d->age_sum += real_now - real;
                }
            }
        }
        if (d->count == ring_slots || d->bytes + (size_t)n > queue_bytes) {
            d->dropped_full++;
            continue;
        }
        struct frame *f = malloc(sizeof *f + (size_t)n);
        if (!f) {
            d->dropped_full++;
            continue;
        }
        f->due = arrival + delay;
        f->len = (size_t)n;
        memcpy(f->data, buf, (size_t)n);
        d->ring[(d->head + d->count) & (ring_slots - 1)] = f;
        d->count++;
        d->bytes += (size_t)n;
    }
    return 0;
}

/* Sends every frame due by now + early; returns -1 when the interface is gone. */
static int send_due(struct dir *d, uint64_t early)
{
    while (d->count) {
        struct frame *f = d->ring[d->head];
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (f->due > now + early)
            break;
        /* A full send buffer or peer backlog (EAGAIN, ENOBUFS) drops the frame, as a
         * full transmit queue would; retrying would need a wake-up we cannot time. */
        ssize_t n = send(d->out_fd, f->data, f->len, MSG_DONTWAIT);
        if (n < 0 && gone(errno))
            return -1;
        if (n < 0) {
            d->dropped_send++;
        } else {
            int64_t late = (int64_t)(now - f->due);
            d->late_sum += late;
            if (late > d->late_max)
                d->late_max = late;
            d->passed++;
            d->passed_bytes += f->len - (size_t)VNET_LEN;
        }
        d->ring[d->head] = NULL;
        d->head = (d->head + 1) & (ring_slots - 1);
        d->count--;
        d->bytes -= f->len;
        free(f);
    }
    return 0;
}

static void print_stats(const struct dir *d, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(stderr,
                "rmpi_delayline: %s -> %s: %llu frames (%llu bytes) passed, %llu dropped (queue full), "
                "%llu send errors, %llu truncated, %zu queued; read %.1f us after arrival, "
                "sent %.1f us late on average (max %.1f us)\n",
                d[i].from, d[i].to, (unsigned long long)d[i].passed, (unsigned long long)d[i].passed_bytes,
                (unsigned long long)d[i].dropped_full, (unsigned long long)d[i].dropped_send,
                (unsigned long long)d[i].truncated, d[i].count, d[i].passed ? d[i].age_sum / 1e3 / d[i].passed : 0.0,
                d[i].passed ? (double)d[i].late_sum / 1e3 / (double)d[i].passed : 0.0, (double)d[i].late_max / 1e3);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: rmpi_delayline [-d DELAY] [-q BYTES] [-r PRIO] [-p PIDFILE] [-D] IF_A IF_B\n"
                "  Forwards every frame between IF_A and IF_B DELAY later (one way), in order.\n"
                "  -d DELAY   one-way delay: 5ms, 250us, 0.5ms, 1s (default 0)\n"
                "  -q BYTES   queue bound per direction, tail drop beyond (default 64m)\n"
                "  -r PRIO    SCHED_FIFO priority for accurate departures (0: normal scheduling;\n"
                "             falls back to normal scheduling when not permitted)\n"
                "  -p FILE    write the pid to FILE\n"
                "  -D         detach once both interfaces are open (the caller's wait ends there)\n");
}

int main(int argc, char **argv)
{
    uint64_t delay = 0;
    int prio = 0, detach = 0, opt;
    const char *pidfile = NULL;
    while ((opt = getopt(argc, argv, "d:q:r:p:Dh")) != -1) {
        switch (opt) {
        case 'd':
            if (parse_delay(optarg, &delay)) {
                fprintf(stderr, "rmpi_delayline: bad delay '%s' (e.g. 5ms, 250us)\n", optarg);
                return 2;
            }
            break;
        case 'q':
            if (parse_bytes(optarg, &queue_bytes)) {
                fprintf(stderr, "rmpi_delayline: bad queue size '%s' (e.g. 64m)\n", optarg);
                return 2;
            }
            break;
        case 'r': prio = atoi(optarg); break;
        case 'p': pidfile = optarg; break;
        case 'D': detach = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (argc - optind != 2) {
        usage(stderr);
        return 2;
    }

    struct dir d[2] = {{.from = argv[optind], .to = argv[optind + 1]}, {.from = argv[optind + 1], .to = argv[optind]}};
    int fa = open_iface(d[0].from), fb = fa < 0 ? -1 : open_iface(d[0].to);
    if (fa < 0 || fb < 0)
        return 1;
    d[0].in_fd = fa, d[0].out_fd = fb;
    d[1].in_fd = fb, d[1].out_fd = fa;
    for (int i = 0; i < 2; i++) {
        d[i].ring = calloc(ring_slots, sizeof *d[i].ring);
        if (!d[i].ring) {
            fprintf(stderr, "rmpi_delayline: out of memory\n");
            return 1;
        }
    }
    unsigned char *buf = malloc(FRAME_MAX);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (!buf || tfd < 0) {
        perror("rmpi_delayline: timerfd_create");
        return 1;
    }

    /* Departures should leave when due, not up to 50 us later (the default slack). */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (prio > 0) {
        struct sched_param sp = {.sched_priority = prio};
        if (sched_setscheduler(0, SCHED_FIFO, &sp))
            fprintf(stderr, "rmpi_delayline: SCHED_FIFO %d not permitted (%s); normal scheduling\n", prio,
                    strerror(errno));
    }

    if (detach) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("rmpi_delayline: fork");
            return 1;
        }
        if (pid > 0) {
            if (pidfile) {
                FILE *f = fopen(pidfile, "w");
                if (!f || fprintf(f, "%ld\n", (long)pid) < 0 || fclose(f)) {
                    perror("rmpi_delayline: pid file");
                    kill(pid, SIGTERM);
                    return 1;
                }
            }
            return 0;
        }
        setsid();
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            close(null);
        }
    } else if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (f) {
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
    }

    sigset_t block, none;
    sigemptyset(&block);
    sigemptyset(&none);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, NULL);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);

    fprintf(stderr, "rmpi_delayline: %s <-> %s, one-way delay %.3f ms, queue %zu bytes per direction\n", d[0].from,
            d[0].to, delay / 1e6, queue_bytes);
    /* The timer fires some tens of microseconds after the time it is set for (more in a
     * virtual machine); it is set that much early, by a running estimate of the lateness,
     * so departures leave on time on average instead of always late. */
    uint64_t armed = 0, early = 0;
    int rc = 0;
    while (!got_stop) {
        if (got_stats) {
            got_stats = 0;
            print_stats(d, 2);
        }
        if (send_due(&d[0], early) || send_due(&d[1], early))
            break;
        uint64_t next = 0;
        for (int i = 0; i < 2; i++)
            if (d[i].count && (!next || d[i].ring[d[i].head]->due < next))
                next = d[i].ring[d[i].head]->due;
        if (next)
            next -= early < next ? early : 0;
        if (next != armed) {
            struct itimerspec its = {0};
            if (next) {
                its.it_value.tv_sec = (time_t)(next / 1000000000u);
                its.it_value.tv_nsec = (long)(next % 1000000000u);
            }
            timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
            armed = next;
        }
        struct pollfd pfd[3] = {{.fd = fa, .events = POLLIN},
                                {.fd = fb, .events = POLLIN},
                                {.fd = tfd, .events = POLLIN}};
        if (ppoll(pfd, 3, NULL, &none) < 0) {
            if (errno == EINTR)
                continue;
            perror("rmpi_delayline: ppoll");
            rc = 1;
            break;
        }
        if (pfd[2].revents & POLLIN) {
            uint64_t ticks, woke = now_ns(CLOCK_MONOTONIC);
            (void)!read(tfd, &ticks, sizeof ticks);
            if (armed && woke > armed) {
                uint64_t late = woke - armed;
                if (late > MAX_EARLY)
                    late = MAX_EARLY;
                early = (early * 7 + late) / 8;
            }
            armed = 0;
        }
        if ((pfd[0].revents & (POLLIN | POLLERR)) && take_arrivals(&d[0], delay, buf))
            break;
        if ((pfd[1].revents & (POLLIN | POLLERR)) && take_arrivals(&d[1], delay, buf))
            break;
        if ((pfd[0].revents | pfd[1].revents) & (POLLHUP | POLLNVAL))
            break;
    }
    print_stats(d, 2);
    if (pidfile)
        unlink(pidfile);
    return rc;
}
