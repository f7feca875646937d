/* Channel kinds per peer: find the provider that carries a peer and ask it. */
#include "chan.h"

_Static_assert((int)RMPI_CHAN_SHARED == RMPI_NET_CHAN_SHARED && (int)RMPI_CHAN_DEDICATED == RMPI_NET_CHAN_DEDICATED,
               "chan.h and net.h number the channel kinds alike");

static rmpi_rail_t *chan_rail(int peer)
{
    rmpi_rail_t *r[RMPI_NET_MAX_RAILS];
    int n = rmpi_net_rails_for(peer, r, RMPI_NET_MAX_RAILS);
    for (int i = 0; i < n; i++)
        if (r[i]->ops->chan_kind)
            return r[i];
    return NULL;
}

rmpi_chan_kind_t rmpi_chan_kind(int peer)
{
    rmpi_rail_t *r = chan_rail(peer);
    return r && r->ops->chan_kind(r, peer) == RMPI_NET_CHAN_SHARED ? RMPI_CHAN_SHARED : RMPI_CHAN_DEDICATED;
}

int rmpi_chan_switch(int peer, rmpi_chan_kind_t to)
{
    rmpi_rail_t *r = chan_rail(peer);
    return r ? r->ops->chan_switch(r, peer, (int)to) : -1;
}

int rmpi_chan_by_target(int peer)
{
    rmpi_rail_t *r = chan_rail(peer);
    return r && r->hints.rdma_by_target;
}

rmpi_net_chan_stats_t rmpi_chan_stats(void)
{
    rmpi_net_chan_stats_t sum = {0};
    for (int i = 0; i < rmpi_net_nrails(); i++) {
        rmpi_rail_t *r = rmpi_net_rail(i);
        if (!r || !r->ops->chan_stats)
            continue;
        rmpi_net_chan_stats_t st;
        r->ops->chan_stats(r, &st);
        for (int k = 0; k < 2; k++) {
            sum.rx_bytes[k] += st.rx_bytes[k];
            sum.tx_bytes[k] += st.tx_bytes[k];
            sum.rx_frames[k] += st.rx_frames[k];
            sum.buf_bytes[k] += st.buf_bytes[k];
            sum.mem[k] += st.mem[k];
            sum.mem_peak[k] += st.mem_peak[k];
        }
        sum.switches += st.switches;
        sum.switch_ns += st.switch_ns;
        sum.dedicated_now += st.dedicated_now;
        sum.rings_asked += st.rings_asked;
    }
    return sum;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 1.0; }

double rmpi_chan_buffer_efficiency(const rmpi_net_chan_stats_t *st)
{
    return ratio(st->rx_bytes[0] + st->rx_bytes[1], st->buf_bytes[0] + st->buf_bytes[1]);
}

void rmpi_chan_report(FILE *f, int rank, int nprocs, int json)
{
    rmpi_net_chan_stats_t st = rmpi_chan_stats();
    double eff = rmpi_chan_buffer_efficiency(&st);
    if (json) {
        fprintf(f,
                "{\"rank\": %d, \"channel_bytes\": {\"dedicated\": %zu, \"shared\": %zu}, \"switches\": %llu, "
                "\"buffer_efficiency\": %.4f, \"buffer_efficiency_by_kind\": {\"dedicated\": %.4f, \"shared\": "
                "%.4f}, \"channel_bytes_now\": {\"dedicated\": %zu, \"shared\": %zu}, \"received_bytes\": "
                "{\"dedicated\": %llu, \"shared\": %llu}, \"sent_bytes\": {\"dedicated\": %llu, \"shared\": %llu}, "
                "\"dedicated_peers\": %d, \"switch_ns\": %llu, \"dedicated_ranks\": [",
                rank, st.mem_peak[1], st.mem_peak[0], (unsigned long long)st.switches, eff,
                ratio(st.rx_bytes[1], st.buf_bytes[1]), ratio(st.rx_bytes[0], st.buf_bytes[0]), st.mem[1], st.mem[0],
                (unsigned long long)st.rx_bytes[1], (unsigned long long)st.rx_bytes[0],
                (unsigned long long)st.tx_bytes[1], (unsigned long long)st.tx_bytes[0], st.dedicated_now,
                (unsigned long long)st.switch_ns);
        /* the peers of this node on a dedicated channel now (tcp and libfabric peers have no kind) */
        int node = rmpi_topo_my_node(), sep = 0;
        for (int p = 0; p < nprocs; p++)
            if (p != rank && rmpi_topo_node_of(p) == node && chan_rail(p) && rmpi_chan_kind(p) == RMPI_CHAN_DEDICATED)
                fprintf(f, "%s%d", sep++ ? ", " : "", p);
        fputc(']', f);
        return;
    }
    fprintf(f,
            "[rmpi report] rank %d: channels: received %llu bytes dedicated + %llu shared, sent %llu + %llu, "
            "%llu switches, buffer efficiency %.3f (dedicated %.3f, shared %.3f), receive memory %zu dedicated + "
            "%zu shared bytes (peak %zu + %zu), %d peers dedicated\n",
            rank, (unsigned long long)st.rx_bytes[1], (unsigned long long)st.rx_bytes[0],
            (unsigned long long)st.tx_bytes[1], (unsigned long long)st.tx_bytes[0], (unsigned long long)st.switches,
            eff, ratio(st.rx_bytes[1], st.buf_bytes[1]), ratio(st.rx_bytes[0], st.buf_bytes[0]), st.mem[1], st.mem[0],
            st.mem_peak[1], st.mem_peak[0], st.dedicated_now);
}
