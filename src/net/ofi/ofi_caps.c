/* ofi: which libfabric provider to use, from a table of capability sets per provider (as
 * MPICH's ofi netmod keeps one) checked against what fi_getinfo reports at start.
 *
 * The table says what a provider is (hardware or software, whether it reaches other
 * nodes, which utility layer gives it an RDM endpoint); fi_getinfo says what this host's
 * instance can do (RMA, atomics, mr_mode, sizes). Selection never tests provider names in
 * code paths: it walks the table in order of preference. */
#include "ofi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ofi_caps_row {
    const char *core;      /* core provider (fi_info prov_name before ';') */
    const char *rdm;       /* what RailMPI asks for: the core provider or core;utility */
    uint8_t hardware;      /* drives a NIC: RMPI_NET=auto uses it between nodes */
    uint8_t inter;         /* reaches other nodes (shm does not) */
    uint8_t keys;          /* the target checks remote keys (shm 1.17 reads through CMA and does not) */
    const char *eager_env; /* variable bounding the utility layer's eager messages (bigger ones
                              go through its own segmentation or rendezvous); NULL: none */
    size_t max_rma;        /* longest single fi_read/fi_write worth posting (longer ones are cut);
                              0: the endpoint's max_msg_size */
    size_t zcopy;          /* smallest frame sent from the caller's memory (send_zc) when the
                              domain needs no local registration; 0: frames are always copied */
    size_t inject;         /* fi_inject limit asked for (tx_attr inject_size); 0: the provider's */
    uint8_t mrecv;         /* multi-receive buffers (FI_MULTI_RECV with FI_OPT_MIN_MULTI_RECV) work */
    uint8_t lingers;       /* a connection outlives a cut link (TCP keeps it, ofi_rxd retransmits):
                              an RDMA read it accepted may land any time later, never fails */
    uint8_t tagged;        /* size classes as tagged receives (RMPI_OFI_CLASSES) work */
    uint8_t xrc;           /* the core lists per-node XRC domains ("-xrc") under this RDM form
                              (ofi_xrc.c; verbs under ofi_rxm, fi_verbs(7) "XRC Transport") */
} ofi_caps_row_t;

#define RXM_EAGER "FI_OFI_RXM_BUFFER_SIZE"

/* Order of preference. */
static const ofi_caps_row_t table[] = {
    {"opx", "opx", 1, 1, 1, NULL, 0, 0, 0, 1, 0, 1, 0},
    {"cxi", "cxi", 1, 1, 1, NULL, 0, 0, 0, 1, 0, 1, 0},
    {"psm3", "psm3", 1, 1, 1, NULL, 0, 0, 0, 1, 0, 1, 0},
    {"efa", "efa", 1, 1, 1, NULL, 0, 0, 0, 1, 0, 1, 0},
    {"psm2", "psm2", 1, 1, 1, NULL, 0, 0, 0, 1, 0, 1, 0},
    {"verbs", "verbs;ofi_rxm", 1, 1, 1, RXM_EAGER, 0, 0, 0, 1, 0, 1, 1},
    /* tcp: one 1 MiB read took 217-221 us a ping-pong, two 512 KiB reads in turn 138-151 */
    /* tcp;ofi_rxm: frames up to 256 bytes injected (rxm bounces those past tcp's 64, but
     * there is no completion to handle: 64 B stream sender 3472 -> 2295 instructions a
     * message), longer ones sent from the caller's buffer (rxm's direct send: no copy) */
    {"tcp", "tcp;ofi_rxm", 0, 1, 1, RXM_EAGER, 512 * 1024, 256, 256, 1, 1, 1, 0},
    /* udp;ofi_rxd with tagged size classes: tests/mpi/chan/switch at 4 ranks hung in 2 of 5
     * runs and once failed a receive with FI_ETRUNC (libfabric 1.17); its multi-receive
     * buffers pass every run */
    {"udp", "udp;ofi_rxd", 0, 1, 1, NULL, 0, 0, 0, 1, 1, 0, 0},
    {"sockets", "sockets", 0, 1, 1, NULL, 0, 0, 0, 1, 1, 1, 0},
    {"net", "net", 0, 1, 1, NULL, 0, 0, 0, 1, 1, 1, 0},
    /* shm: frames past its 4 KiB inject go by CMA from the caller's buffer (fi_sendv), no
     * bounce copy: bandwidth 8 KiB 2.7-3.0 -> 4.6-5.2 GB/s, 16 KiB 4.7-4.9 -> 7.5-8.1 */
    /* ... and no multi-receive buffers: libfabric 1.17's shm crashed in fi_setopt(FI_OPT_MIN_MULTI_RECV) */
    {"shm", "shm", 0, 0, 0, NULL, 0, 4096, 0, 0, 0, 1, 0},
};

static const ofi_caps_row_t *row_of(const char *prov_name)
{
    size_t n = strcspn(prov_name, ";");
    for (size_t i = 0; i < RMPI_ARRAY_LEN(table); i++)
        if (strlen(table[i].core) == n && !strncmp(table[i].core, prov_name, n))
            return &table[i];
    return NULL;
}

/* ofi_rxm's bounce buffers are 16 KiB by default: a 16 KiB message plus our headers did not
 * fit and went through rxm's segmentation (24 us a ping-pong over tcp instead of 12). 128
 * more bytes let it go eagerly, with room for rxm's own header. Bigger buffers (64 KiB) would take every frame eagerly but
 * cost rxm 63 MB more per connection (measured: 8 ranks, 162 -> 606 MB resident). */
#define RMPI_OFI_EAGER_BUF (16384 + 128)

void rmpi_ofi_eager_env(void)
{
    char v[24];
    snprintf(v, sizeof v, "%d", RMPI_OFI_EAGER_BUF);
    for (size_t i = 0; i < RMPI_ARRAY_LEN(table); i++)
        if (table[i].eager_env)
            rmpi_rt_setenv_default(table[i].eager_env, v);
}

size_t rmpi_ofi_eager_max(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    const char *v = t && t->eager_env ? rmpi_rt_env(t->eager_env) : NULL;
    long long n = v ? atoll(v) : 0;
    return n > 0 ? (size_t)n : 0;
}

int rmpi_ofi_mrecv(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return !t || t->mrecv;
}

int rmpi_ofi_tagged(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return !t || t->tagged;
}

size_t rmpi_ofi_inject(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return t ? t->inject : 0;
}

size_t rmpi_ofi_zcopy(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return t ? t->zcopy : 0;
}

size_t rmpi_ofi_max_rma(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return t ? t->max_rma : 0;
}

int rmpi_ofi_lingers(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return !t || t->lingers;
}

int rmpi_ofi_xrc_mode(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return t && t->xrc && !strcmp(prov_name, t->rdm);
}

int rmpi_ofi_reaches_nodes(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return !t || t->inter;
}

int rmpi_ofi_hardware(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return !t || t->hardware;
}

int rmpi_ofi_checks_keys(const char *prov_name)
{
    const ofi_caps_row_t *t = row_of(prov_name);
    return !t || t->keys;
}

/* The RDM providers this host offers with what RailMPI needs (rma: FI_RMA too), one line each. */
static struct fi_info *probe(int rma)
{
    struct fi_info *hints = rmpi_ofi_hints(NULL, 0, rma), *list = NULL;
    int rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, hints, &list);
    fi_freeinfo(hints);
    return rc ? NULL : list;
}

static int offered(struct fi_info *list, const char *rdm)
{
    for (struct fi_info *fi = list; fi; fi = fi->next)
        if (!strcmp(fi->fabric_attr->prov_name, rdm))
            return 1;
    return 0;
}

int rmpi_ofi_choose(int auto_mode, char *prov, size_t len, char *why, size_t wlen)
{
    const char *dl;
    if (!rmpi_ofi_dl_ready(1, &dl)) { /* loaded here, the first time one is wanted */
        snprintf(why, wlen, "%s", dl);
        return 0;
    }
    const char *want = rmpi_knobs.OFI_PROVIDER;
    if (*want) {
        snprintf(prov, len, "%s", want);
        snprintf(why, wlen, "RMPI_OFI_PROVIDER=%s", want);
        return 1;
    }
    /* Without FI_RMA a provider still serves: get/put are then emulated with messages. */
    struct fi_info *list = probe(0);
    if (!list) {
        snprintf(why, wlen, "libfabric offers no RDM provider with FI_MSG here");
        return 0;
    }
    int any = auto_mode ? rmpi_knobs.OFI_AUTO == RMPI_OFI_AUTO_ANY : 1;
    int found = 0;
    for (size_t i = 0; i < RMPI_ARRAY_LEN(table) && !found; i++) {
        const ofi_caps_row_t *t = &table[i];
        if (!t->inter || (!t->hardware && !any) || !offered(list, t->rdm))
            continue;
        snprintf(prov, len, "%s", t->rdm);
        snprintf(why, wlen, "%s: the first %s provider of the table found here", t->rdm,
                 t->hardware ? "hardware" : "inter-node");
        found = 1;
    }
    if (!found) {
        int off = snprintf(why, wlen, "no %s provider among those found:", any ? "inter-node" : "hardware");
        for (struct fi_info *fi = list; fi && off > 0 && (size_t)off < wlen; fi = fi->next)
            if (!strstr(why, fi->fabric_attr->prov_name))
                off += snprintf(why + off, wlen - (size_t)off, " %s", fi->fabric_attr->prov_name);
    }
    fi_freeinfo(list);
    return found;
}

/* Whether list (asked with FI_RMA) holds prov's domain. */
static int has_rma(struct fi_info *list, const char *prov, const char *domain)
{
    for (struct fi_info *fi = list; fi; fi = fi->next)
        if (!strcmp(fi->fabric_attr->prov_name, prov) && (!domain || !strcmp(fi->domain_attr->name, domain)))
            return 1;
    return 0;
}

/* How get/put would go over prov: fi_read/fi_write, or messages and why. */
static const char *rma_how(struct fi_info *rma, const char *prov, const char *domain)
{
    if (!has_rma(rma, prov, domain))
        return "no (get/put emulated with messages)";
    if (rmpi_knobs.OFI_RMA == RMPI_OFI_RMA_EMULATE)
        return "yes, unused (RMPI_OFI_RMA=emulate: get/put emulated with messages)";
    return "yes";
}

void rmpi_ofi_report(void *file)
{
    FILE *f = file;
    const char *dl;
    rmpi_ofi_xrc_env(); /* before the first fi_getinfo, as a job's ranks do */
    if (!rmpi_ofi_dl_ready(1, &dl)) {
        fprintf(f, "  libfabric: not used: %s\n", dl);
        return;
    }
    struct fi_info *list = probe(0), *rma = probe(1);
    fprintf(f, "  libfabric %d.%d: RDM providers with FI_MSG on this host:%s\n", FI_MAJOR(fi_version()),
            FI_MINOR(fi_version()), list ? "" : " none");
    for (struct fi_info *fi = list; fi; fi = fi->next) {
        int dup = 0;
        for (struct fi_info *g = list; g != fi; g = g->next)
            dup |= !strcmp(g->fabric_attr->prov_name, fi->fabric_attr->prov_name) &&
                   !strcmp(g->domain_attr->name, fi->domain_attr->name);
        if (dup)
            continue;
        const ofi_caps_row_t *t = row_of(fi->fabric_attr->prov_name);
        fprintf(f, "    %-16s domain %-12s %s, %s, RMA %s%s, atomics %s, max message %zu\n", fi->fabric_attr->prov_name,
                fi->domain_attr->name,
                !t            ? "not in the table"
                : t->hardware ? "hardware"
                              : "software",
                t && !t->inter ? "this node only" : "reaches other nodes",
                rma_how(rma, fi->fabric_attr->prov_name, fi->domain_attr->name),
                t && !t->keys ? " (remote keys not checked)" : "",
                (fi->caps & FI_ATOMIC) ? "yes" : "no (would be done by the target's progress engine)",
                fi->ep_attr->max_msg_size);
    }
    fi_freeinfo(list);
    char prov[64], why[512];
    if (rmpi_knobs.NET == RMPI_NET_OFI) {
        rmpi_ofi_choose(0, prov, sizeof prov, why, sizeof why);
        fprintf(f, "  RMPI_NET=ofi: every peer over %s (%s); RMA %s\n", prov, why, rma_how(rma, prov, NULL));
    } else if (rmpi_knobs.NET == RMPI_NET_AUTO && rmpi_ofi_choose(1, prov, sizeof prov, why, sizeof why)) {
        fprintf(f, "  RMPI_NET=auto: between nodes over %s (%s), RMA %s; shm within a node\n", prov, why,
                rma_how(rma, prov, NULL));
    } else if (rmpi_knobs.NET == RMPI_NET_AUTO) {
        fprintf(f,
                "  RMPI_NET=auto: between nodes over RailMPI's tcp provider, not libfabric (%s; "
                "RMPI_OFI_AUTO=%s)\n",
                why, rmpi_knob_text("OFI_AUTO"));
    } else {
        fprintf(f, "  RMPI_NET=%s: libfabric not used\n", rmpi_knob_text("NET"));
    }
    fi_freeinfo(rma);
    rmpi_ofi_xrc_report(f);
}
