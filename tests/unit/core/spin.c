/* The socket wait's spin (core/spin.h) on synthetic yields: it falls to nothing while
 * yields hand the core to the peer, climbs back to its limit while they lose the core to
 * another process, and yields nobody took, or that brought nothing, change nothing. */
#include "../unit_check.h"
#include "core/spin.h"

int main(void)
{
    rmpi_spin_t s;
    rmpi_spin_init(&s, 50000);
    CHECK(s.ns == 50000, "starts at the limit, got %llu", (unsigned long long)s.ns);

    /* a yield nobody took (sub-microsecond), with or without data: no change */
    rmpi_spin_learn(&s, 400, 1);
    rmpi_spin_learn(&s, 1999, 1);
    rmpi_spin_learn(&s, 400, 0);
    CHECK(s.ns == 50000 && s.halved == 0 && s.doubled == 0, "untaken yields changed the spin to %llu",
          (unsigned long long)s.ns);

    /* someone ran briefly but the data did not come: not the peer's hand-over */
    rmpi_spin_learn(&s, 20000, 0);
    CHECK(s.ns == 50000, "a brief yield without data changed the spin to %llu", (unsigned long long)s.ns);

    /* hand-overs to the peer: RMPI_SPIN_HANDOFFS in a row halve it; it reaches 0, not a
     * trickle of nanoseconds */
    for (int i = 0; i < RMPI_SPIN_HANDOFFS - 1; i++)
        rmpi_spin_learn(&s, 8000, 1);
    CHECK(s.ns == 50000, "halved before %d hand-overs in a row: %llu", RMPI_SPIN_HANDOFFS, (unsigned long long)s.ns);
    rmpi_spin_learn(&s, 3000000, 1); /* a lost core in between starts the count again */
    CHECK(s.ns == 50000, "a lost core below the limit left %llu", (unsigned long long)s.ns);
    for (int i = 0; i < RMPI_SPIN_HANDOFFS - 1; i++)
        rmpi_spin_learn(&s, 8000, 1);
    CHECK(s.ns == 50000, "the count was not restarted by the lost core: %llu", (unsigned long long)s.ns);
    uint64_t prev = s.ns;
    int steps = 0;
    rmpi_spin_learn(&s, 8000, 1);
    while (steps < 64) {
        steps++;
        CHECK(s.ns == 0 || s.ns == prev / 2, "step %d: %llu after %llu", steps, (unsigned long long)s.ns,
              (unsigned long long)prev);
        prev = s.ns;
        if (s.ns == 0)
            break;
        for (int i = 0; i < RMPI_SPIN_HANDOFFS; i++)
            rmpi_spin_learn(&s, 8000, 1);
    }
    CHECK(s.ns == 0 && steps <= 8, "spin %llu after %d halvings", (unsigned long long)s.ns, steps);
    CHECK(s.halved == (uint64_t)steps, "halved counted %llu of %d", (unsigned long long)s.halved, steps);

    /* losing the core for a slice: grows from 0 and stops at the limit, data or not */
    rmpi_spin_learn(&s, 3000000, 1);
    CHECK(s.ns == 1000, "first loss: %llu", (unsigned long long)s.ns);
    for (int i = 0; i < 20; i++)
        rmpi_spin_learn(&s, 1000000, i & 1);
    CHECK(s.ns == 50000, "losses left the spin at %llu, not the limit", (unsigned long long)s.ns);
    CHECK(s.doubled == 22, "doubled counted %llu", (unsigned long long)s.doubled);

    /* a limit of 0 (RMPI_SPIN_TIME_NET=0) stays 0 */
    rmpi_spin_init(&s, 0);
    rmpi_spin_learn(&s, 5000000, 0);
    CHECK(s.ns == 0, "limit 0 grew to %llu", (unsigned long long)s.ns);
    return finish("core_spin");
}
