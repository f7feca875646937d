/* Receive-side memory of the providers by formula (net_mem.h). */
#include "net_mem.h"

#include <stdlib.h>
#include <string.h>

#include "shm/shm.h"
#include "tcp/tcp.h"
#ifdef RMPI_HAVE_OFI
#include "ofi/ofi.h"
#endif

size_t rmpi_shm_ring_stride(size_t ring_size, uint32_t *ncells, size_t *max_frame)
{
    uint32_t n = 4096 / RMPI_SHM_CELL; /* a 4 KiB ring at least */
    while ((uint64_t)n * 2 * RMPI_SHM_CELL <= (uint64_t)ring_size && n < (1u << 20))
        n *= 2;
    *ncells = n;
    *max_frame = rmpi_shm_ring_max_frame(n);
    return (rmpi_shm_ring_bytes(n) + 4095) & ~(size_t)4095;
}

size_t rmpi_shm_shared_layout(rmpi_shm_qlayout_t *l, const uint32_t *csize, int nclass, size_t class_bytes,
                              size_t max_frame)
{
    uint32_t top = csize[nclass - 1];
    /* the largest ring frame must fit in the pool as fragments, with room for a second sender */
    rmpi_shm_qlayout(l, csize, nclass, class_bytes, (uint32_t)(2 * ((max_frame + top - 1) / top)));
    return RMPI_SHM_SEG_HDR + l->bytes;
}

size_t rmpi_shm_shared_bytes(const uint32_t *csize, int nclass, size_t class_bytes, size_t max_frame)
{
    rmpi_shm_qlayout_t l;
    return rmpi_shm_shared_layout(&l, csize, nclass, class_bytes, max_frame);
}

/* "256", "1k", "2m": bytes, or -1 */
static long long size_of(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    int shift = *end == 'k' || *end == 'K' ? 10 : *end == 'm' || *end == 'M' ? 20 : *end == 'g' || *end == 'G' ? 30 : 0;
    if (shift)
        end++;
    return *end ? -1 : v << shift;
}

int rmpi_shm_parse_classes(const char *text, uint32_t *csize)
{
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return -1;
    strcpy(buf, text);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long long v = size_of(tok);
        if (n == RMPI_SHM_MAX_CLASSES || v < 64 || v > (1 << 20) || (n && (uint32_t)((v + 63) & ~63ll) <= csize[n - 1]))
            return -1;
        csize[n++] = (uint32_t)((v + 63) & ~63ll);
    }
    return n ? n : -1;
}

size_t rmpi_tcp_rx_cap(size_t cap, size_t want)
{
    size_t n = cap ? cap : RMPI_TCP_RX_MIN;
    while (n < want && n < RMPI_TCP_RX_MAX)
        n = n < RMPI_TCP_RXBUF && 2 * n > RMPI_TCP_RXBUF && want <= RMPI_TCP_RXBUF ? RMPI_TCP_RXBUF : 2 * n;
    return n < RMPI_TCP_RX_MAX ? n : RMPI_TCP_RX_MAX;
}

size_t rmpi_tcp_peer_bytes(size_t frame)
{
    size_t state = sizeof(rmpi_tcp_peer_t) + sizeof(rmpi_tcp_conn_t);
    return state + (frame ? rmpi_tcp_rx_cap(0, RMPI_TCP_BASE_HDR + frame) : 0);
}

size_t rmpi_tcp_peer_bytes_max(void) { return sizeof(rmpi_tcp_peer_t) + sizeof(rmpi_tcp_conn_t) + RMPI_TCP_RXBUF; }

uint64_t rmpi_tcp_buf_sweep_ns(uint64_t idle_ns)
{
    uint64_t q = idle_ns / 4;
    return q < 100000000ull ? (q ? q : 1) : 100000000ull;
}

uint64_t rmpi_tcp_buf_hold_ns(uint64_t idle_ns) { return idle_ns + 2 * rmpi_tcp_buf_sweep_ns(idle_ns); }

size_t rmpi_ofi_ring_bytes(size_t ring_size, size_t frame, uint32_t *ncells)
{
    uint32_t n = 16;
    while ((size_t)n * RMPI_SHM_CELL < ring_size || (size_t)n / 4 * RMPI_SHM_CELL < frame)
        n *= 2;
    if (ncells)
        *ncells = n;
    return rmpi_shm_ring_bytes(n);
}

#ifdef RMPI_HAVE_OFI
size_t rmpi_ofi_peer_bytes(void) { return sizeof(rmpi_ofi_peer_t); }
int rmpi_ofi_peer_chunk(void) { return RMPI_OFI_PEER_CHUNK; }
size_t rmpi_ofi_peer_table_model(long long n, long long chunks)
{
    size_t index = (size_t)((n + RMPI_OFI_PEER_CHUNK - 1) / RMPI_OFI_PEER_CHUNK) * sizeof(rmpi_ofi_peer_t *);
    return index + (size_t)chunks * RMPI_OFI_PEER_CHUNK * sizeof(rmpi_ofi_peer_t);
}
size_t rmpi_ofi_mrecv_buf_bytes(size_t mrecv, size_t top)
{
    size_t n = RMPI_MAX(mrecv / RMPI_OFI_MRECV_BUFS, 2 * top);
    return (n + 4095) & ~(size_t)4095;
}
size_t rmpi_ofi_rx_buf_bytes(size_t top) { return (top + 63) & ~(size_t)63; }
size_t rmpi_ofi_rail_rx_bytes(long long mrecv, long long rx_bufs)
{
    return mrecv > 0 ? RMPI_OFI_MRECV_BUFS * rmpi_ofi_mrecv_buf_bytes((size_t)mrecv, RMPI_OFI_BUF_SIZE)
                     : (size_t)rx_bufs * rmpi_ofi_rx_buf_bytes(RMPI_OFI_BUF_SIZE);
}
#else
size_t rmpi_ofi_peer_bytes(void) { return 0; }
int rmpi_ofi_peer_chunk(void) { return 1; }
size_t rmpi_ofi_peer_table_model(long long n, long long chunks) { return (void)n, (void)chunks, 0; }
size_t rmpi_ofi_rail_rx_bytes(long long mrecv, long long rx_bufs) { return (void)mrecv, (void)rx_bufs, 0; }
size_t rmpi_ofi_mrecv_buf_bytes(size_t mrecv, size_t top) { return (void)mrecv, (void)top, 0; }
size_t rmpi_ofi_rx_buf_bytes(size_t top) { return (void)top, 0; }
#endif
