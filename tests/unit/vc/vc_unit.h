/* What a VC unit test sets up before its VCs: fake rails, the knob table, this process as a
 * singleton (its topology: one local rank), and the VC layer as rank 0 of 2. */
#ifndef RMPI_TEST_VC_UNIT_H
#define RMPI_TEST_VC_UNIT_H

#include "../unit_check.h"
#include "vc/vc.h"

/* 0, or 1 when the runtime could not start */
static inline int vc_unit_init(rmpi_rail_t *rails, int n, const struct rmpi_net_ops *ops, rmpi_vc_deliver_fn deliver)
{
    for (int i = 0; i < n; i++) {
        rails[i].ops = ops;
        rails[i].index = i;
    }
    /* vc_init reads the knob table and this process's local rank (a singleton here) */
    unit_singleton();
    rmpi_knobs_init();
    rmpi_pm_info_t pm;
    if (rmpi_pmi_init(&pm) || rmpi_topo_init(&pm))
        return 1;
    rmpi_vc_init(0, 2, deliver, 64);
    return 0;
}

#endif
