/* The ofi provider's sparse peer table (src/net/ofi/ofi_peer.c) on a rail of 2^16 ranks
 * that is never opened (no libfabric call): nothing is allocated for a peer until it is
 * touched; touching one allocates its chunk alone, zeroed and shared by its neighbours but
 * counted as touched once; the loops that visit peers (rmpi_ofi_peer_next) see the allocated
 * chunks only; the bytes reported are the index plus the chunks held, which is the model
 * bench/scalesim uses (rmpi_ofi_peer_table_model), and far below the flat array's n x 208 B. */
#include "net/ofi/ofi.h"
#include "net/net_mem.h"

#include <stdlib.h>

#include "../unit_check.h"

#define N (1 << 16)

int main(void)
{
    rmpi_ofi_rail_t *r = calloc(1, sizeof *r);
    r->env.size = N;
    r->env.rank = 3;
    rmpi_ofi_peer_table_init(r);
    size_t index = (size_t)(N / RMPI_OFI_PEER_CHUNK) * sizeof(void *);
    CHECK(rmpi_ofi_peer_table_bytes(r) == index, "empty table: %zu bytes, expected the index's %zu",
          rmpi_ofi_peer_table_bytes(r), index);
    CHECK(rmpi_ofi_peer_next(r, -1) == -1, "an empty table has a peer to visit");
    for (int i = 0; i < N; i += 997)
        CHECK(rmpi_ofi_peer_find(r, i) == NULL, "rank %d found before any contact", i);

    /* first contact with two far-apart peers and one neighbour of the first */
    int a = 5, b = 40000, c = 6;
    rmpi_ofi_peer_t *pa = rmpi_ofi_peer_touch(r, a);
    pa->tx_seq = 17;
    rmpi_ofi_peer_touch(r, b);
    CHECK(rmpi_ofi_peer_find(r, a) == pa && rmpi_ofi_peer(r, a) == pa, "lookups disagree on rank %d", a);
    CHECK(rmpi_ofi_peer_touch(r, a) == pa && pa->tx_seq == 17, "a second touch moved or cleared rank %d", a);
    rmpi_ofi_peer_t *pc = rmpi_ofi_peer_find(r, c);
    CHECK(pc && !pc->touched && pc->state == 0 && pc->sw.kind == RMPI_NET_CHAN_SHARED && pc->ring == NULL,
          "rank %d, in rank %d's chunk, is not a zeroed untouched peer", c, a);
    CHECK(rmpi_ofi_peer_find(r, 100) == NULL && rmpi_ofi_peer_find(r, b - RMPI_OFI_PEER_CHUNK) == NULL &&
              rmpi_ofi_peer_find(r, N - 1) == NULL,
          "a peer outside the touched chunks is allocated");
    CHECK(r->peers_touched == 2 && r->peer_chunks == 2, "touched %d, chunks %d: expected 2 and 2", r->peers_touched,
          r->peer_chunks);
    rmpi_ofi_peer_touch(r, c);
    CHECK(r->peers_touched == 3 && r->peer_chunks == 2, "a neighbour's touch: touched %d, chunks %d", r->peers_touched,
          r->peer_chunks);

    /* the loops visit the two chunks' peers only, in order */
    int visits = 0, prev = -1, saw_a = 0, saw_b = 0;
    for (int i = -1; (i = rmpi_ofi_peer_next(r, i)) >= 0; visits++) {
        CHECK(i > prev && rmpi_ofi_peer_find(r, i), "visited rank %d (after %d), not allocated or out of order", i,
              prev);
        saw_a |= i == a, saw_b |= i == b;
        prev = i;
    }
    CHECK(visits == 2 * RMPI_OFI_PEER_CHUNK && saw_a && saw_b, "%d visits (a %d, b %d), expected %d", visits, saw_a,
          saw_b, 2 * RMPI_OFI_PEER_CHUNK);

    /* honest accounting: index + 2 chunks, as the simulator models it */
    size_t held = index + 2 * RMPI_OFI_PEER_CHUNK * sizeof(rmpi_ofi_peer_t);
    CHECK(rmpi_ofi_peer_table_bytes(r) == held && rmpi_ofi_peer_table_model(N, 2) == held,
          "table %zu bytes, model %zu, expected %zu", rmpi_ofi_peer_table_bytes(r), rmpi_ofi_peer_table_model(N, 2),
          held);
    CHECK(rmpi_ofi_peer_bytes() == sizeof(rmpi_ofi_peer_t) && rmpi_ofi_peer_chunk() == RMPI_OFI_PEER_CHUNK,
          "net_mem's sizes differ from the provider's");
    CHECK(held * 100 < (size_t)N * sizeof(rmpi_ofi_peer_t), "%zu bytes for 3 peers is not far below the flat %zu", held,
          (size_t)N * sizeof(rmpi_ofi_peer_t));

    /* the last, partial chunk of a job whose size is not a multiple of the chunk */
    rmpi_ofi_peer_table_free(r);
    r->env.size = 2 * RMPI_OFI_PEER_CHUNK + 3;
    rmpi_ofi_peer_table_init(r);
    rmpi_ofi_peer_touch(r, r->env.size - 1);
    visits = 0;
    for (int i = -1; (i = rmpi_ofi_peer_next(r, i)) >= 0; visits++)
        CHECK(i >= 2 * RMPI_OFI_PEER_CHUNK && i < r->env.size, "visited rank %d of %d", i, r->env.size);
    CHECK(visits == 3, "%d visits in the partial chunk, expected 3", visits);
    rmpi_ofi_peer_table_free(r);
    free(r);
    return finish("ofi_peers");
}
