/*
 * Receive-side memory of RailMPI's providers, by formula: what one process sets up for its
 * peers. The providers size their structures with these functions, and bench/scalesim (the
 * scale simulator, which links this file alone as the static library rmpi_net_mem) models a
 * job of 2^16 processes with the same numbers, so no size is written twice.
 * Dependencies: libc, and the providers' headers for the sizes of their per-peer state.
 */
#ifndef RMPI_NET_MEM_H
#define RMPI_NET_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm_queue.h" /* rmpi_shm_qlayout_t, RMPI_SHM_MAX_CLASSES */

/* The header page of a process's shm segment (before its shared queue and rings). */
#define RMPI_SHM_SEG_HDR 4096u

/* A dedicated ring for RMPI_SHM_RING_SIZE bytes: its cells (*ncells), its largest frame
 * (*max_frame) and the bytes it takes in the segment (page-rounded), which is what a peer
 * switched onto a ring costs. */
size_t rmpi_shm_ring_stride(size_t ring_size, uint32_t *ncells, size_t *max_frame);
/* The shared channel of a process: segment header plus the size-class queue (nclass
 * classes of csize[] bytes, about class_bytes each, enough of the largest for two ring
 * frames of max_frame in pieces). Its size does not depend on the number of peers. */
size_t rmpi_shm_shared_bytes(const uint32_t *csize, int nclass, size_t class_bytes, size_t max_frame);
/* The same, also laying the queue out in *l. */
size_t rmpi_shm_shared_layout(rmpi_shm_qlayout_t *l, const uint32_t *csize, int nclass, size_t class_bytes,
                              size_t max_frame);
/* Parses a RMPI_CHAN_CLASSES list ("256,1k,2k,4k,8k") into csize[] (rounded up to 64 bytes):
 * the number of classes, or -1 when the list is not up to RMPI_SHM_MAX_CLASSES ascending
 * sizes from 64 bytes to 1 MiB. */
int rmpi_shm_parse_classes(const char *text, uint32_t *csize);

/* tcp (src/net/tcp/README.md, "Receive buffer"): a connected peer costs the library's state
 * (peer and socket objects) plus its receive buffer, which is freed while the peer is quiet
 * and sized by rmpi_tcp_rx_cap while it sends. */
/* The receive buffer's next capacity for want bytes from cap (0: none yet): cap when it
 * fits, else doubled from cap (RMPI_TCP_RX_MIN, 4 KiB, when none) until want fits, the step
 * past a LAN frame's room (RMPI_TCP_RXBUF) stopping there, never past the largest frame's. */
size_t rmpi_tcp_rx_cap(size_t cap, size_t want);
/* A peer's memory when the largest DATA frame (bytes after tcp's header) it sent since it was
 * last quiet is frame bytes and it never filled a read; frame 0: a quiet peer (no buffer). */
size_t rmpi_tcp_peer_bytes(size_t frame);
/* A peer streaming LAN-sized frames (the inter eager limit): what every peer cost while the
 * buffers did not shrink, and the most a peer costs unless RMPI_WAN_TUNE raised its eager limit. */
size_t rmpi_tcp_peer_bytes_max(void);
/* How often the provider looks for quiet buffers with RMPI_TCP_BUF_IDLE = idle_ns, and the
 * longest a buffer can stay allocated after its last byte (idle plus two sweeps). */
uint64_t rmpi_tcp_buf_sweep_ns(uint64_t idle_ns);
uint64_t rmpi_tcp_buf_hold_ns(uint64_t idle_ns);
/* libfabric: the library's state per peer (allocated at first contact, by chunks: below), and the receive
 * buffers pre-posted per rail, shared by every peer: RMPI_OFI_MRECV bytes of multi-receive
 * buffers (mrecv > 0, the provider has FI_MULTI_RECV), else RMPI_OFI_RX_BUFS buffers of
 * the largest frame's size (at most 64 KiB; this bound counts 64 KiB); 0 and 0 when the
 * provider is not built in. The provider's own per-peer memory is not
 * counted. */
size_t rmpi_ofi_peer_bytes(void);
/* The peer table is sparse (src/net/ofi/README.md, "Peer table"): an index of a pointer per
 * rmpi_ofi_peer_chunk() ranks, and chunks of that many peers' state allocated as one of them
 * is first contacted. Its bytes for a job of n ranks with chunks allocated; the chunk a rank
 * falls in is rank / rmpi_ofi_peer_chunk() (0 and 1 without the provider). */
size_t rmpi_ofi_peer_table_model(long long n, long long chunks);
int rmpi_ofi_peer_chunk(void);
size_t rmpi_ofi_rail_rx_bytes(long long mrecv, long long rx_bufs);
/* One single receive buffer (without multi-receive) for frames of up to top bytes. */
size_t rmpi_ofi_rx_buf_bytes(size_t top);
/* One of the rail's multi-receive buffers for mrecv bytes in all, when a frame takes up to
 * top bytes: at least two frames each, so a released buffer wastes at most half of itself. */
size_t rmpi_ofi_mrecv_buf_bytes(size_t mrecv, size_t top);
/* A dedicated ring written with fi_write for RMPI_OFI_RING_SIZE bytes when a ring frame
 * (cell header, ofi header and the provider's largest frame) takes frame bytes: its cells
 * (*ncells, if not NULL), at least ring_size bytes and four frames (the writer never waits
 * on a reader that gives credit every quarter ring), and the bytes it takes. */
size_t rmpi_ofi_ring_bytes(size_t ring_size, size_t frame, uint32_t *ncells);

#endif
