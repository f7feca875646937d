/* chan: the kinds of channel, alone, so the selection (select.[ch], linked without the
 * library by the scale simulator) names them without the providers' headers. */
#ifndef RMPI_CHAN_KIND_H
#define RMPI_CHAN_KIND_H

/* The kinds a peer's receive channel can be (seed adaptive-transport-selection sec. 3.1:
 * shared plays DC-sendrecv, one receive structure for every peer; dedicated plays
 * RC-RDMA, a per-peer ring polled by the receiver). */
typedef enum rmpi_chan_kind { RMPI_CHAN_SHARED = 0, RMPI_CHAN_DEDICATED = 1 } rmpi_chan_kind_t;

#endif
