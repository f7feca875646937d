/*
 * chan: the kind of channel that carries each peer's eager frames (the adaptive-transport-
 * selection seed): shared (one receive structure per process for all its peers, buffers in
 * size classes as in the xrc-scalable seed) or dedicated (a per-peer fast path).
 *
 * Who calls: the selection (select.[ch]) and the core's report; tests through
 * RMPI_CHAN_FORCE_SWITCH_MS. Ownership: the channels belong to the providers (src/net, the
 * optional chan_* operations of struct rmpi_net_ops); this layer finds the provider that
 * carries a peer and asks it. A provider without channel kinds (tcp: one connection per
 * peer) reports every peer dedicated and refuses switches.
 * Threading: caller holds the library lock. Progress: a switch completes inside
 * rmpi_net_progress; frames keep MPI's order throughout (J1-J5, src/chan/README.md).
 *
 * The selection half lives in select.h/select.c (pure, linked alone by the scale
 * simulator); this header is the layer's contract.
 */
#ifndef RMPI_CHAN_H
#define RMPI_CHAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../net/net.h"

#include "kind.h"

/* ---- mechanism (chan.c) ---- */

/* The channel kind peer's eager frames to this process travel on now (the receiver
 * decides it; a switch in progress reports where it is going). A peer reached over several
 * rails with channel kinds (two ofi domains) has a channel on each, switched together:
 * dedicated while any of them is. */
rmpi_chan_kind_t rmpi_chan_kind(int peer);
/* Start moving peer's frames to this process onto kind to, on every rail with channel
 * kinds that reaches it; returns at once (0 started or already there on each rail that
 * can, 1 a switch of peer still in progress on one of them: ask again later, -1
 * impossible: no channel kinds or RMPI_CHANNELS is not adaptive). */
int rmpi_chan_switch(int peer, rmpi_chan_kind_t to);
/* How many rails with channel kinds reach peer (each gives it a ring when dedicated). */
int rmpi_chan_rails(int peer);
/* The receive memory a dedicated channel of peer takes: a ring on each of those rails. */
size_t rmpi_chan_ring_bytes(int peer);
/* Peers holding rings in this process (in use, asked for or being left): per provider the
 * rail holding the most (a dedicated peer has a ring on each rail of its provider), summed
 * over the providers. The selector's cap h counts these. */
int rmpi_chan_rings_held(void);
/* 1 when peer's dedicated channel to this process would be written with RDMA that this
 * process's own progress serves (the rail's hint rdma_by_target: a libfabric software
 * provider such as tcp;ofi_rxm, or emulated RDMA), so a ring saves the receiver no work;
 * 0 otherwise (hardware RDMA, a shared-memory ring, no channel kinds). After rmpi_net_ready. */
int rmpi_chan_by_target(int peer);
/* This process's channel accounting, summed over the providers that have channel kinds. */
rmpi_net_chan_stats_t rmpi_chan_stats(void);
/* Payload bytes received / receive-buffer bytes consumed (1 when nothing was received). */
double rmpi_chan_buffer_efficiency(const rmpi_net_chan_stats_t *st);
/* RMPI_REPORT lines (json: the keys of the rank's JSON object, docs/report.md, from its
 * opening brace on, left open for the core to add the others' keys and close it). */
void rmpi_chan_report(FILE *f, int rank, int nprocs, int json);

#endif
