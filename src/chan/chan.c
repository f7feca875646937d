/* Channel kinds per peer: find the provider that carries a peer and ask it. */
#include "chan.h"
#include "select.h"

_Static_assert((int)RMPI_CHAN_SHARED == RMPI_NET_CHAN_SHARED && (int)RMPI_CHAN_DEDICATED == RMPI_NET_CHAN_DEDICATED,
               "chan.h and net.h number the channel kinds alike");

/* The rails reaching peer whose provider has channel kinds: r[0..n). A peer reached over
 * several (two ofi domains) has a channel of each kind on each: the VC spreads its frames
 * over the rails, so a ring on one rail alone would carry only that rail's share. */
static int chan_rails(int peer, rmpi_rail_t **r)
{
    int n = rmpi_net_rails_for(peer, r, RMPI_NET_MAX_RAILS), k = 0;
    for (int i = 0; i < n; i++)
        if (r[i]->ops->chan_kind)
            r[k++] = r[i];
    return k;
}

static rmpi_rail_t *chan_rail(int peer)
{
    rmpi_rail_t *r[RMPI_NET_MAX_RAILS];
    return chan_rails(peer, r) ? r[0] : NULL;
}

int rmpi_chan_rails(int peer)
{
    rmpi_rail_t *r[RMPI_NET_MAX_RAILS];
    return chan_rails(peer, r);
}

size_t rmpi_chan_ring_bytes(int peer)
{
    rmpi_rail_t *r[RMPI_NET_MAX_RAILS];
    int n = chan_rails(peer, r);
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
        rmpi_net_chan_stats_t st = {0}; /* a provider fills only what it has */
        if (r[i]->ops->chan_stats) {
            r[i]->ops->chan_stats(r[i], &st);
            sum += st.ring_bytes;
        }
    }
    return sum;
}

/* Dedicated while any of its rails has it on a ring (the rails move together; one refused
 * keeps its kind until the selector's next run asks again); no such rail: dedicated (tcp). */
rmpi_chan_kind_t rmpi_chan_kind(int peer)
{
    rmpi_rail_t *r[RMPI_NET_MAX_RAILS];
    int n = chan_rails(peer, r);
    for (int i = 0; i < n; i++)
        if (r[i]->ops->chan_kind(r[i], peer) != RMPI_NET_CHAN_SHARED)
            return RMPI_CHAN_DEDICATED;
    return n ? RMPI_CHAN_SHARED : RMPI_CHAN_DEDICATED;
}

/* Each rail runs its own J1-J5 (its frames ordered by its own sequence numbers); frames of
 * different rails are put back in order by the VC's sequence numbers, whichever channel
 * carried them. */
int rmpi_chan_switch(int peer, rmpi_chan_kind_t to)
{
    rmpi_rail_t *r[RMPI_NET_MAX_RAILS];
    int n = chan_rails(peer, r), ok = 0, busy = 0;
    for (int i = 0; i < n; i++) {
        int rc = r[i]->ops->chan_switch(r[i], peer, (int)to);
        if (rc == 0 || (rc == 1 && r[i]->ops->chan_kind(r[i], peer) == (int)to))
            ok++;
        else if (rc == 1)
            busy++; /* an earlier switch of the peer on this rail is still under way */
    }
    return busy ? 1 : ok ? 0 : -1;
}

int rmpi_chan_by_target(int peer)
{
    rmpi_rail_t *r = chan_rail(peer);
    return r && r->hints.rdma_by_target;
}

/* The accounting summed over the rails. *held: rings held, counted per peer: a peer has a
 * ring on each rail of its provider (two ofi domains), so per provider the rail holding
 * the most, summed over the providers (shm's for this node, ofi's for the others). */
static rmpi_net_chan_stats_t stats_sum(int *held)
{
    rmpi_net_chan_stats_t sum = {0};
    const struct rmpi_net_ops *ops[RMPI_NET_MAX_RAILS];
    int most[RMPI_NET_MAX_RAILS], nops = 0;
    for (int i = 0; i < rmpi_net_nrails(); i++) {
        rmpi_rail_t *r = rmpi_net_rail(i);
        if (!r || !r->ops->chan_stats)
            continue;
        rmpi_net_chan_stats_t st = {0}; /* a provider fills only what it has */
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
        for (int c = 0; c < st.ncls; c++) {
            int j = 0;
            while (j < sum.ncls && sum.cls_size[j] != st.cls_size[c])
                j++;
            if (j == RMPI_NET_MAX_CLASSES)
                continue;
            sum.ncls += j == sum.ncls;
            sum.cls_size[j] = st.cls_size[c];
            sum.cls_frames[j] += st.cls_frames[c];
            sum.cls_bytes[j] += st.cls_bytes[c];
        }
        int k = 0;
        while (k < nops && ops[k] != r->ops)
            k++;
        if (k == nops) {
            ops[nops] = r->ops;
            most[nops++] = 0;
        }
        most[k] = RMPI_MAX(most[k], st.dedicated_now + st.rings_asked);
    }
    *held = 0;
    for (int k = 0; k < nops; k++)
        *held += most[k];
    return sum;
}

rmpi_net_chan_stats_t rmpi_chan_stats(void)
{
    int held;
    return stats_sum(&held);
}

int rmpi_chan_rings_held(void)
{
    int held;
    stats_sum(&held);
    return held;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 1.0; }

double rmpi_chan_buffer_efficiency(const rmpi_net_chan_stats_t *st)
{
    return ratio(st->rx_bytes[0] + st->rx_bytes[1], st->buf_bytes[0] + st->buf_bytes[1]);
}

static double class_eff(const rmpi_net_chan_stats_t *st, int c)
{
    return ratio(st->cls_bytes[c], st->cls_frames[c] * st->cls_size[c]);
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
                "\"switch_ns\": %llu, \"dedicated_ranks\": [",
                rank, st.mem_peak[1], st.mem_peak[0], (unsigned long long)st.switches, eff,
                ratio(st.rx_bytes[1], st.buf_bytes[1]), ratio(st.rx_bytes[0], st.buf_bytes[0]), st.mem[1], st.mem[0],
                (unsigned long long)st.rx_bytes[1], (unsigned long long)st.rx_bytes[0],
                (unsigned long long)st.tx_bytes[1], (unsigned long long)st.tx_bytes[0],
                (unsigned long long)st.switch_ns);
        /* the peers on a dedicated channel now (shm or libfabric; tcp peers have no kind) */
        int sep = 0;
        for (int p = 0; p < nprocs; p++)
            if (p != rank && chan_rail(p) && rmpi_chan_kind(p) == RMPI_CHAN_DEDICATED)
                fprintf(f, "%s%d", sep++ ? ", " : "", p);
        fprintf(f, "], \"dedicated_peers\": %d", sep);
        rmpi_chan_totals_t sel;
        rmpi_chan_lib_totals(&sel);
        fprintf(f, ", \"selection\": {\"runs\": %llu, \"trigger_runs\": %llu, \"skipped\": %llu}",
                (unsigned long long)sel.runs, (unsigned long long)sel.trigger_runs, (unsigned long long)sel.skipped);
        if (st.ncls) {
            fprintf(f, ", \"shared_classes\": [");
            for (int c = 0; c < st.ncls; c++)
                fprintf(f, "%s{\"bytes\": %u, \"frames\": %llu, \"efficiency\": %.4f}", c ? ", " : "", st.cls_size[c],
                        (unsigned long long)st.cls_frames[c], class_eff(&st, c));
            fprintf(f, "]");
        }
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
    for (int c = 0; c < st.ncls; c++)
        fprintf(f, "[rmpi report] rank %d: shared class %u bytes: %llu frames, buffer efficiency %.3f\n", rank,
                st.cls_size[c], (unsigned long long)st.cls_frames[c], class_eff(&st, c));
}
