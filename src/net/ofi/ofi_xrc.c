/* ofi: per-node connections through the verbs provider's XRC mode (seed xrc-scalable,
 * Sec. IV-V: one XRC send QP per destination node and a shared receive queue per process,
 * instead of one RC QP and its receive queue per peer process; Fig. 4: hundreds of MB of
 * connection memory per process at scale for RC, tens for shared XRC).
 *
 * libfabric offers it as a second MSG domain per device, named "<device>-xrc" (protocol
 * FI_PROTO_RDMA_CM_IB_XRC), listed only for devices whose ibv_query_device reports
 * IBV_DEVICE_XRC and only to a caller asking for a shared receive context: ofi_rxm does
 * when FI_OFI_RXM_USE_SRX=1. FI_VERBS_PREFER_XRC=1 lists it before the RC domain
 * (fi_verbs(7), "XRC Transport"). Both are read when libfabric loads its providers, so
 * they are set before the process's first fi_getinfo, and only when a device has XRC:
 * elsewhere the RC path stays as it was (without USE_SRX verbs gives each connection its
 * own receive queue). ofi_rxm keeps the core domain's name, so the rail's domain name is
 * what tells whether it got XRC.
 *
 * The decisions (which domains become rails, and the reason reported per rail) are pure
 * functions of strings, tested in tests/unit/net/ofi_xrc.c with fake provider answers;
 * the device query goes through libibverbs loaded with dlopen, so RailMPI gains no
 * build dependency (libfabric's verbs provider already needs the library). */
#include "ofi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define RMPI_OFI_HAVE_VERBS_H 1
#endif
#endif

#define XRC_SUFFIX "-xrc"
#define XRC_MAX_DEVS 16

size_t rmpi_ofi_xrc_base(const char *domain)
{
    size_t n = strlen(domain), k = sizeof XRC_SUFFIX - 1;
    return n > k && !strcmp(domain + n - k, XRC_SUFFIX) ? n - k : n;
}

int rmpi_ofi_xrc_is(const char *domain) { return rmpi_ofi_xrc_base(domain) != strlen(domain); }

int rmpi_ofi_xrc_same_device(const char *a, const char *b)
{
    size_t n = rmpi_ofi_xrc_base(a);
    return n == rmpi_ofi_xrc_base(b) && !strncmp(a, b, n);
}

int rmpi_ofi_xrc_keep(const char *prov, const char *domain, int mode)
{
    return !(rmpi_ofi_xrc_mode(prov) && mode == RMPI_OFI_XRC_OFF && rmpi_ofi_xrc_is(domain));
}

int rmpi_ofi_xrc_new_rail(const char *prov, const char *domain, const char *const *made, int n, int mode)
{
    int xrc = rmpi_ofi_xrc_mode(prov);
    for (int i = 0; i < n; i++)
        if (xrc ? rmpi_ofi_xrc_same_device(made[i], domain) : !strcmp(made[i], domain))
            return 0;
    return rmpi_ofi_xrc_keep(prov, domain, mode);
}

/* libfabric's boolean parameters: 0/no/false/off turn them off. */
static int env_off(const char *v)
{
    return v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off"));
}

int rmpi_ofi_xrc_judge(const rmpi_ofi_xrc_in_t *in, char *why, size_t len)
{
    size_t dn = rmpi_ofi_xrc_base(in->domain);
    if (!rmpi_ofi_xrc_mode(in->prov)) {
        snprintf(why, len, "no (%s has no XRC mode)", in->prov);
        return 0;
    }
    if (rmpi_ofi_xrc_is(in->domain)) {
        snprintf(why, len, "yes (domain %s: XRC send QPs per node, rxm's shared receive context)", in->domain);
        return 1;
    }
    if (in->mode == RMPI_OFI_XRC_OFF)
        snprintf(why, len, "no (RMPI_OFI_XRC=off)");
    else if (in->dev_xrc == 0)
        snprintf(why, len, "no (device %.*s lacks IBV_DEVICE_XRC in ibv_query_device's device_cap_flags)", (int)dn,
                 in->domain);
    else if (env_off(in->srx))
        snprintf(why, len, "no (FI_OFI_RXM_USE_SRX=%s in the environment: XRC needs rxm's shared receive context)",
                 in->srx);
    else if (env_off(in->prefer))
        snprintf(why, len, "no (FI_VERBS_PREFER_XRC=%s in the environment: the RC domain comes first)", in->prefer);
    else if (in->dev_xrc < 0 && in->mode != RMPI_OFI_XRC_ON)
        snprintf(why, len, "no (XRC not requested: %s)", in->dev_why && *in->dev_why ? in->dev_why : "device unknown");
    else
        snprintf(why, len, "no (libfabric listed no XRC domain for %.*s)", (int)dn, in->domain);
    return 0;
}

#ifdef RMPI_OFI_HAVE_VERBS_H
static int env_true(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on"));
}
#endif

/* ---- the devices, asked once per process ---- */

static struct {
    int done, env_done, ndev, asked;
    char name[XRC_MAX_DEVS][64];
    int xrc[XRC_MAX_DEVS];
    char why[160]; /* when the devices could not be asked */
} devs;

static void query_devices(void)
{
    devs.done = 1;
#ifdef RMPI_OFI_HAVE_VERBS_H
    void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(devs.why, sizeof devs.why, "libibverbs.so.1 not loadable");
        return;
    }
    /* The real symbols: <infiniband/verbs.h> wraps ibv_get_device_list in a macro. */
    struct ibv_device **(*get_list)(int *) = (struct ibv_device * *(*)(int *)) dlsym(lib, "ibv_get_device_list");
    void (*free_list)(struct ibv_device **) = (void (*)(struct ibv_device **))dlsym(lib, "ibv_free_device_list");
    const char *(*dev_name)(struct ibv_device *) =
        (const char *(*)(struct ibv_device *))dlsym(lib, "ibv_get_device_name");
    struct ibv_context *(*open_dev)(struct ibv_device *) =
        (struct ibv_context * (*)(struct ibv_device *)) dlsym(lib, "ibv_open_device");
    int (*close_dev)(struct ibv_context *) = (int (*)(struct ibv_context *))dlsym(lib, "ibv_close_device");
    int (*query)(struct ibv_context *, struct ibv_device_attr *) =
        (int (*)(struct ibv_context *, struct ibv_device_attr *))dlsym(lib, "ibv_query_device");
    int (*fork_init)(void) = (int (*)(void))dlsym(lib, "ibv_fork_init");
    if (!get_list || !free_list || !dev_name || !open_dev || !close_dev || !query || !fork_init) {
        snprintf(devs.why, sizeof devs.why, "libibverbs.so.1 lacks ibv_query_device & co");
        dlclose(lib);
        return;
    }
    /* ibv_fork_init must come before any other verbs call, and libfabric's verbs provider
     * makes it first unless FI_VERBS_FORK_UNSAFE says not to: made here in its place, or
     * opening a device could leave libfabric's own call refused (EINVAL). */
    if (!env_true(rmpi_rt_env("FI_VERBS_FORK_UNSAFE")))
        fork_init();
    int n = 0;
    struct ibv_device **list = get_list(&n);
    for (int i = 0; list && i < n && devs.ndev < XRC_MAX_DEVS; i++) {
        struct ibv_context *ctx = open_dev(list[i]);
        struct ibv_device_attr a;
        int k = devs.ndev++;
        snprintf(devs.name[k], sizeof devs.name[k], "%s", dev_name(list[i]));
        devs.xrc[k] = ctx && !query(ctx, &a) ? !!(a.device_cap_flags & IBV_DEVICE_XRC) : -1;
        if (ctx)
            close_dev(ctx);
    }
    if (list)
        free_list(list);
    /* libibverbs stays loaded: libfabric's verbs provider links it anyway. */
    if (!devs.ndev)
        snprintf(devs.why, sizeof devs.why, "libibverbs found no RDMA device");
#else
    snprintf(devs.why, sizeof devs.why, "built without <infiniband/verbs.h>");
#endif
}

int rmpi_ofi_xrc_device(const char *domain)
{
    if (!devs.done)
        query_devices();
    size_t n = rmpi_ofi_xrc_base(domain);
    for (int i = 0; i < devs.ndev; i++)
        if (strlen(devs.name[i]) == n && !strncmp(devs.name[i], domain, n))
            return devs.xrc[i];
    return -1;
}

void rmpi_ofi_xrc_env(void)
{
    if (devs.env_done)
        return;
    devs.env_done = 1;
    /* Devices are opened only when a verbs rail may follow: not under RMPI_OFI_XRC=off or
     * =on, nor with another provider named. */
    const char *want = rmpi_knobs.OFI_PROVIDER;
    int verbs_may = !*want || rmpi_ofi_xrc_mode(want), any = 0;
    if (rmpi_knobs.OFI_XRC == RMPI_OFI_XRC_AUTO && verbs_may && !devs.done)
        query_devices();
    for (int i = 0; i < devs.ndev; i++)
        any |= devs.xrc[i] == 1;
    devs.asked = rmpi_knobs.OFI_XRC == RMPI_OFI_XRC_ON || (rmpi_knobs.OFI_XRC == RMPI_OFI_XRC_AUTO && any && verbs_may);
    if (!devs.asked)
        return;
    rmpi_rt_setenv_default("FI_VERBS_PREFER_XRC", "1");
    rmpi_rt_setenv_default("FI_OFI_RXM_USE_SRX", "1");
}

void rmpi_ofi_xrc_note(const char *prov, const char *domain, int *yes, char *why, size_t len)
{
    rmpi_ofi_xrc_in_t in = {prov,
                            domain,
                            rmpi_knobs.OFI_XRC,
                            rmpi_ofi_xrc_mode(prov) ? rmpi_ofi_xrc_device(domain) : -1,
                            devs.why,
                            rmpi_rt_env("FI_VERBS_PREFER_XRC"),
                            rmpi_rt_env("FI_OFI_RXM_USE_SRX")};
    char dev[96];
    if (in.dev_xrc < 0 && !*devs.why) {
        snprintf(dev, sizeof dev, "libibverbs does not list device %.*s", (int)rmpi_ofi_xrc_base(domain), domain);
        in.dev_why = dev;
    }
    *yes = rmpi_ofi_xrc_judge(&in, why, len);
}

void rmpi_ofi_xrc_report(void *file)
{
    FILE *f = file;
    rmpi_ofi_xrc_env();
    if (!devs.done)
        query_devices();
    fprintf(f, "  XRC (per-node connections over verbs;ofi_rxm, RMPI_OFI_XRC=%s): ", rmpi_knob_text("OFI_XRC"));
    if (!devs.ndev)
        fprintf(f, "%s", devs.why);
    for (int i = 0; i < devs.ndev; i++)
        fprintf(f, "%s%s %s", i ? ", " : "devices ", devs.name[i],
                devs.xrc[i] > 0    ? "has IBV_DEVICE_XRC"
                : devs.xrc[i] == 0 ? "lacks IBV_DEVICE_XRC"
                                   : "not queried (ibv_open_device/ibv_query_device failed)");
    fprintf(f, "; %s\n",
            devs.asked ? "requested (FI_VERBS_PREFER_XRC, FI_OFI_RXM_USE_SRX)" : "not requested (RC per peer)");
}
