/* How long a waiting rank whose idle polls are system calls (sockets) spins before it
 * yields the CPU, learned from what its yields bring. Pure logic: no clock, no I/O.
 *
 * Two ranks the scheduler put on one core (two namespaces or loopback on a loaded host)
 * hand it over only when one yields, so every spin is paid in full by each message (8 B
 * ping-pong between two lab namespaces: 60 us one way spinning 64 socket polls, 5 us
 * yielding at once). A rank that shares its core with an unrelated busy process gives
 * that process the core for its whole slice (milliseconds) when it yields, so there the
 * spin should outlast a round trip. A yield tells which case it is: one that let someone
 * else run briefly (RMPI_SPIN_HANDOFF_NS .. RMPI_SPIN_STRANGER_NS) and was followed at once
 * by the awaited data handed the core to the peer; RMPI_SPIN_HANDOFFS of them in a row
 * halve the spin. One that lost the core for longer doubles it, up to the limit, and
 * starts the count again: losing the core costs milliseconds, a spin too long at most the
 * limit, so a brief stranger whose run happened to cover the data's arrival must not
 * shorten it alone. A yield nobody took (it returns in about a microsecond) says nothing. */
#ifndef RMPI_CORE_SPIN_H
#define RMPI_CORE_SPIN_H

#include <stdint.h>

#define RMPI_SPIN_HANDOFF_NS 2000ull    /* a yield longer than this ran someone else */
#define RMPI_SPIN_STRANGER_NS 500000ull /* ... longer than this, someone who is not the peer */
#define RMPI_SPIN_HANDOFFS 8            /* hand-overs in a row that halve the spin */
#define RMPI_SPIN_FLOOR_NS 500ull       /* a spin below this is none */

typedef struct {
    uint64_t ns;              /* current spin before yielding */
    uint64_t max;             /* RMPI_SPIN_TIME_NET */
    unsigned run;             /* hand-overs in a row */
    uint64_t halved, doubled; /* counts, for tests and reports */
} rmpi_spin_t;

static inline void rmpi_spin_init(rmpi_spin_t *s, uint64_t max_ns)
{
    s->ns = s->max = max_ns;
    s->run = 0;
    s->halved = s->doubled = 0;
}

/* One yield of yield_ns; data: the first poll after it made progress. */
static inline void rmpi_spin_learn(rmpi_spin_t *s, uint64_t yield_ns, int data)
{
    if (yield_ns >= RMPI_SPIN_STRANGER_NS) {
        uint64_t n = s->ns * 2 + 1000;
        s->ns = n < s->max ? n : s->max;
        s->doubled++;
        s->run = 0;
    } else if (yield_ns >= RMPI_SPIN_HANDOFF_NS && data && ++s->run >= RMPI_SPIN_HANDOFFS) {
        s->run = 0;
        s->ns /= 2;
        if (s->ns < RMPI_SPIN_FLOOR_NS)
            s->ns = 0;
        s->halved++;
    }
}

#endif
