/* The rendezvous completion filter's FIN side: a request that moved data over k
 * subchannels completes on the k-th FIN, whatever order they come in, and never before. */
#include <stdlib.h>

#include "../unit_check.h"
#include "core/core_impl.h"

int main(void)
{
    rmpi_core_info_t info;
    if (rmpi_core_init(&info))
        return 1;
    rmpi_vc_t *vc = rmpi_vc_get(0);
    static char buf[1 << 16];
    for (uint32_t k = 1; k <= RMPI_VC_MAX_SUB; k++) {
        rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
        uint64_t rkeys[RMPI_VC_MAX_SUB];
        rmpi_rndv_register(r, vc, buf, sizeof buf, rkeys);
        for (uint32_t f = 1; f < k; f++) {
            rmpi_rndv_fin(r, k);
            CHECK(!r->done, "k=%u: done after %u FINs", k, f);
        }
        rmpi_rndv_fin(r, k);
        CHECK(r->done, "k=%u: not done after all %u FINs", k, k);
        CHECK(r->rv == NULL, "k=%u: registrations kept after completion", k);
        rmpi_req_release(r);
    }
    CHECK(rmpi_core_finalize() == 0, "finalize");
    return finish("core_fin_filter");
}
