/*
 * libFuzzer harness of the one-sided target (src/rma/target.c: am_check, target_base and
 * the handlers behind them), reached the real way: the input, minus its first byte, is sent
 * as an active message (tag 0 on the window's context, docs/wire/rma.md) to this
 * singleton's own window, whose progress hook receives and handles it. Byte 0 picks the
 * window: even, 4 KiB made by MPI_Win_create; odd, a dynamic window with 4 KiB attached.
 * Answers (get data, acknowledgements) are received and dropped. A malformed message must
 * cut its sender off (recorded here; in a job it ends the job), never crash, hang or exit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "core/core_impl.h"
#include "rma/rma.h"
#include "fuzz_singleton.h"

static MPI_Win wins[2];
static char mem[2][4096];
static unsigned long long cuts;
static char answer[1 << 16];

static void on_cut(rmpi_vc_t *v, const char *why) { cuts++; }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_singleton();
    MPI_Init(argc, argv);
    rmpi_vc_on_cut = on_cut;
    MPI_Win_create(mem[0], sizeof mem[0], 1, MPI_INFO_NULL, MPI_COMM_SELF, &wins[0]);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_SELF, &wins[1]);
    MPI_Win_attach(wins[1], mem[1], sizeof mem[1]);
    return 0;
}

/* Receive and drop every answer waiting on ctx (tag 0 is the target's own). */
static void drain(uint32_t ctx)
{
    rmpi_unexp_t *u;
    while ((u = rmpi_core_probe_find(ctx, MPI_ANY_SOURCE, MPI_ANY_TAG)) != NULL && u->tag != 0) {
        rmpi_core_unexp_take(u);
        rmpi_req_t r;
        rmpi_req_init_stack(&r, RMPI_REQ_RECV);
        r.buf = answer;
        r.len = sizeof answer;
        r.ctx = ctx;
        rmpi_core_mrecv(&r, u);
        for (int i = 0; i < 1000 && !r.done; i++)
            rmpi_core_progress();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    rmpi_win_t *w = rmpi_win_get(wins[data[0] & 1]);
    uint32_t ctx = w->comm->ctx;
    rmpi_req_t s;
    rmpi_req_init_stack(&s, RMPI_REQ_SEND);
    s.buf = (void *)(data + 1);
    s.len = size - 1;
    s.rank = 0;
    s.ctx = ctx;
    s.tag = 0;
    s.src = 0;
    s.mode = RMPI_MODE_STD;
    rmpi_core_isend(&s);
    /* the frame arrives at the first progress, the hook handles it at the same or the next */
    for (int i = 0; i < 1000 && (i < 2 || !s.done || !rmpi_list_empty(&w->incoming) ||
                                 rmpi_core_probe_find(ctx, MPI_ANY_SOURCE, 0));
         i++) {
        rmpi_core_progress();
        drain(ctx);
    }
    drain(ctx);
    rmpi_vc_get(0)->cut = 0;
    return 0;
}
