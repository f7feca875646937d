/*
 * chan: which kind of channel carries a peer's eager traffic (dedicated or shared), the
 * statistics and the search that decide it, and the switch between kinds (seeds
 * adaptive-transport-selection and xrc-scalable). The layer sits beside vc, above net.
 * The selection half lives in select.h/select.c (pure, linked alone by the scale
 * simulator); this header is the layer's contract.
 */
#ifndef RMPI_CHAN_H
#define RMPI_CHAN_H

/* The kinds a peer's receive channel can be (seed adaptive-transport-selection sec. 3.1:
 * shared plays DC-sendrecv, one receive structure for every peer; dedicated plays
 * RC-RDMA, a per-peer ring polled by the receiver). */
typedef enum rmpi_chan_kind { RMPI_CHAN_SHARED = 0, RMPI_CHAN_DEDICATED = 1 } rmpi_chan_kind_t;

#endif
