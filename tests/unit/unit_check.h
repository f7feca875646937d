/* Shared helpers for the unit tests: CHECK counts failures and reports file:line with a
 * printf-style message; finish() prints a summary and gives main's exit code. Checks keep
 * going after a failure so one run shows every broken property; CHECK_BAIL stops a function
 * once failures pile up. Also a small fixed-seed PRNG, so every test is deterministic, the
 * SIGALRM watchdog and the singleton setup of tests that start the runtime. */
#ifndef RMPI_UNIT_CHECK_H
#define RMPI_UNIT_CHECK_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int unit_failures;

/* Only the first UNIT_MAX_PRINTED failures are printed; all are counted. */
#define UNIT_MAX_PRINTED 100
#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            if (unit_failures < UNIT_MAX_PRINTED) {                                      \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                            \
                fputc('\n', stderr);                                                     \
            } else if (unit_failures == UNIT_MAX_PRINTED) {                              \
                fprintf(stderr, "(further failed checks are counted, not printed)\n");   \
            }                                                                            \
            unit_failures++;                                                             \
        }                                                                                \
    } while (0)

/* Stop the current function (returning ret) after too many failures: a test that has gone
 * wrong should not print a million lines. */
#define UNIT_MAX_FAILURES 50
#define CHECK_BAIL(ret)                         \
    do {                                        \
        if (unit_failures >= UNIT_MAX_FAILURES) \
            return ret;                         \
    } while (0)

static inline int finish(const char *name)
{
    if (unit_failures) {
        fprintf(stderr, "%s: FAIL (%d failed check%s)\n", name, unit_failures, unit_failures == 1 ? "" : "s");
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

/* xorshift64*: deterministic, seeded per test (unit_seed maps any seed, even 0, to a valid
 * state). */
typedef struct unit_rng {
    uint64_t s;
} unit_rng_t;

static inline unit_rng_t unit_seed(uint64_t seed)
{
    unit_rng_t r = {(seed + 1) * 0x9e3779b97f4a7c15ull};
    if (!r.s)
        r.s = 1;
    return r;
}

static inline uint64_t unit_rand(unit_rng_t *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}
/* Uniform in [lo, hi]. */
static inline uint64_t unit_range(unit_rng_t *r, uint64_t lo, uint64_t hi) { return lo + unit_rand(r) % (hi - lo + 1); }

/* A test that hangs (a ring deadlock, a frame that makes the core spin) must fail with a
 * reason, not sit until ctest's timeout: after secs, SIGALRM prints "<name>: FAIL: timed
 * out after <secs> s (<why>)" and exits 1. Calling it again re-arms it; secs 0 disarms. */
static char unit_watchdog_msg[256];

static void unit_on_alarm(int sig)
{
    (void)sig;
    /* only async-signal-safe calls here: the message was formatted when armed */
    ssize_t n = write(2, unit_watchdog_msg, strlen(unit_watchdog_msg));
    (void)n;
    _exit(1);
}

static inline void unit_watchdog(const char *name, unsigned secs, const char *why)
{
    snprintf(unit_watchdog_msg, sizeof unit_watchdog_msg, "%s: FAIL: timed out after %u s (%s)\n", name, secs, why);
    signal(SIGALRM, unit_on_alarm);
    alarm(secs);
}

/* Tests that initialise the runtime as a singleton (no process manager): whatever launched
 * them must not hand them a PMI connection meant for another process. */
static inline void unit_singleton(void)
{
    static const char *const vars[] = {"PMI_FD", "PMI_PORT", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

#endif
