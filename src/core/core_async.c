/* The asynchronous progress thread (RMPI_ASYNC_PROGRESS): one thread per process that runs
 * the progress engine while the application computes outside MPI, so that what other ranks
 * asked of this one (passive-target one-sided operations served by the target's progress,
 * rendezvous, collective schedules) advances without it calling MPI. */
#include "core_impl.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A sleep on descriptors is bounded: providers keep timers (connect retries, stall checks,
 * buffer sweeps) that only a progress call looks at. */
#define ASYNC_POLL_MS 10
/* Rails without a descriptor (shm's rings, libfabric's completion queues) are looked at
 * after a sleep that doubles from BACKOFF_MIN_NS while nothing happens, up to BACKOFF_MAX_NS:
 * at most about a thousand passes of a few microseconds a second when idle. */
#define BACKOFF_MIN_NS 50000
#define BACKOFF_MAX_NS 1000000
/* The scheduler slice the thread asks for (async_short_slice). */
#define ASYNC_SLICE_NS 100000

static pthread_t async_thread;
static int async_running;
static int async_stop;        /* set by rmpi_core_async_stop, read by the thread (atomic) */
static int wake_fd = -1;      /* eventfd: the stop wakes the thread from its poll at once */
static uint64_t async_passes; /* progress passes the thread made (RMPI_REPORT) */

/* Sleeps until a rail's descriptor is readable, the stop is asked, or timeout_ns passed. */
static void async_sleep(const int *fds, int nfd, uint64_t timeout_ns)
{
    struct pollfd p[RMPI_NET_MAX_RAILS + 1];
    for (int i = 0; i < nfd; i++)
        p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
    p[nfd] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u), .tv_nsec = (long)(timeout_ns % 1000000000u)};
    ppoll(p, (nfds_t)nfd + 1, &ts, NULL);
}

/* Asks for a short scheduler slice (EEVDF's custom slice of a SCHED_OTHER thread, Linux
 * 6.12 on; no privilege needed): a thread woken with a short slice has an early deadline
 * and preempts a thread that computes, where with the default slice it waited for the
 * end of that thread's slice. On 2 cores busy with the target's computation and the
 * origin's wait, a fetch-and-op served by the thread took 1.4 ms, 0.13 ms with 100 us
 * (docs/results/osc.md). Older kernels refuse it and nothing changes. */
static void async_short_slice(void)
{
#ifdef SYS_sched_setattr
    struct { /* the kernel's struct sched_attr (its header clashes with glibc's sched.h) */
        uint32_t size, sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime, sched_deadline, sched_period;
    } a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.sched_policy = SCHED_OTHER;
    a.sched_runtime = ASYNC_SLICE_NS;
    if (syscall(SYS_sched_setattr, 0, &a, 0) != 0)
        rmpi_log(1, "RMPI_ASYNC_PROGRESS: the kernel kept the default slice for the progress thread (%s).",
                 strerror(errno));
#endif
}

static void *async_main(void *arg)
{
    (void)arg;
    async_short_slice();
    int fds[RMPI_NET_MAX_RAILS];
    uint64_t backoff = 0;
    unsigned app_polls = 0;
    while (!__atomic_load_n(&async_stop, __ATOMIC_ACQUIRE)) {
        unsigned p = __atomic_load_n(&rmpi_core_app_polls, __ATOMIC_RELAXED);
        if (p != app_polls) {
            /* An application thread waits inside MPI and polls: a pass of ours would only
             * take the lock from it (a round trip over tcp with the target in a wait took
             * twice as long). Look again after a short sleep. */
            app_polls = p;
            async_sleep(NULL, 0, BACKOFF_MIN_NS);
            continue;
        }
        /* One pass under the library lock, released before any sleep or yield, so an
         * application thread entering MPI waits at most one pass for it. */
        pthread_mutex_lock(&rmpi_big_lock);
        int n = rmpi_core_progress();
        int nfd = -1;
        if (n == 0) {
            if (RMPI_UNLIKELY(rmpi_core_coal_near != 0))
                rmpi_core_coal_idle();
            nfd = rmpi_net_queued() ? -1 : rmpi_net_wait_fds(fds, RMPI_NET_MAX_RAILS);
        }
        async_passes++;
        pthread_mutex_unlock(&rmpi_big_lock);
        if (n != 0) {
            backoff = 0;
            sched_yield(); /* a thread waiting for the lock gets it before our next pass */
            continue;
        }
        if (nfd >= 0) {
            async_sleep(fds, nfd, ASYNC_POLL_MS * 1000000ull);
            continue;
        }
        backoff = backoff ? (backoff * 2 < BACKOFF_MAX_NS ? backoff * 2 : BACKOFF_MAX_NS) : BACKOFF_MIN_NS;
        async_sleep(NULL, 0, backoff);
    }
    return NULL;
}

int rmpi_core_async_wanted(void) { return rmpi_knobs.ASYNC_PROGRESS != 0; }

int rmpi_core_async_start(void)
{
    if (async_running || !rmpi_core_async_wanted())
        return 0;
    if (!rmpi_thread_multiple)
        rmpi_fatal("RMPI_ASYNC_PROGRESS=1: the progress thread needs the library lock on (internal error).");
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd < 0) {
        rmpi_warn("RMPI_ASYNC_PROGRESS=1: eventfd failed (%s); no progress thread.", strerror(errno));
        return -1;
    }
    __atomic_store_n(&async_stop, 0, __ATOMIC_RELEASE);
    /* Signals stay the application's: the thread is created with every signal blocked. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&async_thread, NULL, async_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        rmpi_warn("RMPI_ASYNC_PROGRESS=1: the progress thread could not start (%s); none runs.", strerror(rc));
        close(wake_fd);
        wake_fd = -1;
        return -1;
    }
    async_running = 1;
    return 0;
}

void rmpi_core_async_stop(void)
{
    if (!async_running)
        return;
    __atomic_store_n(&async_stop, 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(wake_fd, &one, sizeof one) < 0) {
        /* the thread still sees the flag within one sleep (at most ASYNC_POLL_MS) */
    }
    pthread_join(async_thread, NULL);
    close(wake_fd);
    wake_fd = -1;
    async_running = 0;
    if (rmpi_knobs.REPORT == RMPI_REPORT_ON)
        fprintf(stderr, "[rmpi report] rank %d: progress thread made %llu passes\n", rmpi_core_rank,
                (unsigned long long)async_passes);
}
