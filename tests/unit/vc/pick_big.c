/* Which subchannel a big eager frame takes (vc.c, rmpi_vc_pick_big) under adaptive striping
 * before any striped message fed the weights: the small-frame policy's pick while no rail is
 * measured; once one is, a rail not yet measured counts as fast as the fastest measured one,
 * so it takes frames while the measured rails hold more bytes (a stream of eager frames is
 * the only thing that could measure it); with every rail measured, the rail expected to
 * deliver the frame first. Fake rails whose backlog the test sets; pure logic. */
#include <stdlib.h>
#include <string.h>

#include "vc_unit.h"

static size_t backlog_of[2];

static int fake_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int n)
{
    (void)rail, (void)peer, (void)iov, (void)n;
    return 0;
}

static size_t fake_backlog(rmpi_rail_t *rail, int peer)
{
    (void)peer;
    return backlog_of[rail->index];
}

static const struct rmpi_net_ops fake_ops = {.version = RMPI_NET_OPS_VERSION,
                                             .name = "fake",
                                             .send = fake_send,
                                             .backlog = fake_backlog};
static rmpi_rail_t rails[2];

static void deliver(rmpi_vc_t *vc, const void *frame, size_t len) { (void)vc, (void)frame, (void)len; }

static rmpi_vc_t *make_vc(int stripe_policy)
{
    rmpi_vc_t *vc = calloc(1, sizeof *vc + 64);
    vc->core = vc + 1;
    vc->peer = 1;
    vc->nsub = vc->nup = 2;
    vc->sub[0].rail = &rails[0];
    vc->sub[1].rail = &rails[1];
    /* binding on subchannel 0: the small-frame policy's pick is 0 */
    rmpi_sched_cfg_t cfg = {RMPI_SMALL_POLICY_BINDING, stripe_policy, 1, 0.5, 0.0, 65536, 0, 0.0};
    rmpi_sched_init(&vc->sched, &cfg, 2, NULL);
    return vc;
}

static int pick(rmpi_vc_t *vc, size_t q0, size_t q1)
{
    backlog_of[0] = q0;
    backlog_of[1] = q1;
    return rmpi_vc_pick_big(vc, 65536);
}

int main(void)
{
    if (vc_unit_init(rails, 2, &fake_ops, deliver))
        return 1;

    rmpi_vc_t *vc = make_vc(RMPI_STRIPE_POLICY_ADAPTIVE);
    /* nothing measured: the small-frame policy, whatever the backlogs */
    CHECK(pick(vc, 1 << 20, 0) == 0, "no rate: the small-frame policy's subchannel");
    CHECK(vc->big_t != 0, "a pick marks the VC as picking big frames (the watch samples its rates)");

    /* rail 0 measured at 0.1 B/ns, rail 1 not: rail 1 counts as 0.1 */
    vc->sub[0].rate = 0.1;
    vc->sub[0].est_t = vc->sub[1].est_t = 0;
    CHECK(pick(vc, 1 << 20, 0) == 1, "a rail not measured takes a frame while the measured one holds 1 MiB");
    CHECK(pick(vc, 0, 0) == 0, "equal backlogs: the first rail (a lone frame stays where it was)");
    CHECK(pick(vc, 100000, 200000) == 0, "the unmeasured rail holds more: the measured one");
    CHECK(vc->sub[1].rate == 0, "picks alone do not invent a rate");

    /* both measured, 4:1: the slow rail only when the fast one holds 3 frames' time more */
    vc->sub[1].rate = 0.025;
    CHECK(pick(vc, 100000, 0) == 0, "4:1, fast rail 100 kB behind: still the fast rail");
    CHECK(pick(vc, 300000, 0) == 1, "4:1, fast rail 300 kB behind: the slow rail finishes first");

    /* even striping never explores: it has no rates to go by */
    rmpi_vc_t *even = make_vc(RMPI_STRIPE_POLICY_EVEN);
    even->sub[0].rate = 0.1;
    CHECK(pick(even, 1 << 20, 0) == 0, "even striping: the small-frame policy's subchannel");

    free(vc);
    free(even);
    rmpi_vc_finalize();
    return finish("vc_pick_big");
}
