/* Per-node XRC connections over verbs;ofi_rxm (src/net/ofi/ofi_xrc.c) on fake provider
 * answers: which domains of an fi_getinfo list become rails (one per device, the first of
 * its RC and "-xrc" domains, none of the latter under RMPI_OFI_XRC=off), and the reason
 * each rail reports: XRC when libfabric gave the XRC domain, else the device without
 * IBV_DEVICE_XRC (rdma_rxe), the knob, the user's FI_OFI_RXM_USE_SRX / FI_VERBS_PREFER_XRC,
 * a device libibverbs could not be asked about, a provider without an XRC mode. Then
 * this host's devices: XRC is requested (the two variables set) exactly when one has it. */
#include "../unit_check.h"
#include "net/ofi/ofi.h"

#include <string.h>

/* open's walk over a list of domains, as ofi_ops.c does it: the names that become rails. */
static int pick(const char *prov, const char *const *list, int n, int mode, const char **out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (rmpi_ofi_xrc_new_rail(prov, list[i], out, k, mode))
            out[k++] = list[i];
    return k;
}

static void check_pick(void)
{
    const char *vp = "verbs;ofi_rxm", *out[8];
    /* FI_VERBS_PREFER_XRC=1 (what RailMPI sets on a device with XRC): XRC listed first. */
    const char *prefer[] = {"mlx5_0-xrc", "mlx5_0", "mlx5_1-xrc", "mlx5_1"};
    int k = pick(vp, prefer, 4, RMPI_OFI_XRC_AUTO, out);
    CHECK(k == 2 && !strcmp(out[0], "mlx5_0-xrc") && !strcmp(out[1], "mlx5_1-xrc"), "prefer: %d rails, first %s", k,
          k ? out[0] : "-");
    /* The user's FI_VERBS_PREFER_XRC=0 with FI_OFI_RXM_USE_SRX=1: RC first, one rail each. */
    const char *rc_first[] = {"mlx5_0", "mlx5_0-xrc"};
    k = pick(vp, rc_first, 2, RMPI_OFI_XRC_AUTO, out);
    CHECK(k == 1 && !strcmp(out[0], "mlx5_0"), "rc first: %d rails, first %s", k, k ? out[0] : "-");
    /* RMPI_OFI_XRC=off: the XRC domain is never opened, whatever the order. */
    k = pick(vp, prefer, 4, RMPI_OFI_XRC_OFF, out);
    CHECK(k == 2 && !strcmp(out[0], "mlx5_0") && !strcmp(out[1], "mlx5_1"), "off: %d rails, first %s", k,
          k ? out[0] : "-");
    /* rdma_rxe: no XRC domain at all, the RC domain is the rail. */
    const char *rxe[] = {"rxe0"};
    k = pick(vp, rxe, 1, RMPI_OFI_XRC_AUTO, out);
    CHECK(k == 1 && !strcmp(out[0], "rxe0"), "rxe: %d rails", k);
    /* Other providers keep one rail per distinct domain name, suffix or not. */
    const char *tcp[] = {"lo", "eth0", "lo", "x-xrc", "x"};
    k = pick("tcp;ofi_rxm", tcp, 5, RMPI_OFI_XRC_OFF, out);
    CHECK(k == 4, "tcp: %d rails, want lo eth0 x-xrc x", k);
    CHECK(rmpi_ofi_xrc_base("mlx5_0-xrc") == 6 && rmpi_ofi_xrc_base("-xrc") == 4 && rmpi_ofi_xrc_base("rxe0") == 4,
          "base lengths");
    CHECK(rmpi_ofi_xrc_same_device("mlx5_0", "mlx5_0-xrc") && !rmpi_ofi_xrc_same_device("mlx5_0", "mlx5_01-xrc"),
          "same device");
}

static int judge(const char *prov, const char *dom, int mode, int dev, const char *prefer, const char *srx, char *why)
{
    rmpi_ofi_xrc_in_t in = {prov, dom, mode, dev, "libibverbs.so.1 not loadable", prefer, srx};
    return rmpi_ofi_xrc_judge(&in, why, 200);
}

#define WANT(yes, got, why, text)                                                                            \
    do {                                                                                                     \
        CHECK((got) == (yes) && strstr(why, text) && !strncmp(why, (yes) ? "yes (" : "no (", (yes) ? 5 : 4), \
              "got %d \"%s\", want %d with \"%s\"", got, why, yes, text);                                    \
    } while (0)

static void check_judge(void)
{
    char why[200];
    const char *vp = "verbs;ofi_rxm";
    int y = judge(vp, "mlx5_0-xrc", RMPI_OFI_XRC_AUTO, 1, "1", "1", why);
    WANT(1, y, why, "domain mlx5_0-xrc");
    /* libfabric's answer decides, even if the user forced it past a device query */
    y = judge(vp, "mlx5_0-xrc", RMPI_OFI_XRC_ON, -1, NULL, NULL, why);
    WANT(1, y, why, "XRC send QPs");
    y = judge(vp, "rxe0", RMPI_OFI_XRC_AUTO, 0, NULL, NULL, why);
    WANT(0, y, why, "device rxe0 lacks IBV_DEVICE_XRC");
    y = judge(vp, "mlx5_0", RMPI_OFI_XRC_OFF, 1, NULL, NULL, why);
    WANT(0, y, why, "RMPI_OFI_XRC=off");
    y = judge(vp, "mlx5_0", RMPI_OFI_XRC_AUTO, 1, "1", "0", why);
    WANT(0, y, why, "FI_OFI_RXM_USE_SRX=0");
    y = judge(vp, "mlx5_0", RMPI_OFI_XRC_AUTO, 1, "no", "1", why);
    WANT(0, y, why, "FI_VERBS_PREFER_XRC=no");
    y = judge(vp, "mlx5_0", RMPI_OFI_XRC_AUTO, -1, NULL, NULL, why);
    WANT(0, y, why, "not requested: libibverbs.so.1 not loadable");
    y = judge(vp, "mlx5_0", RMPI_OFI_XRC_ON, -1, "1", "1", why);
    WANT(0, y, why, "listed no XRC domain for mlx5_0");
    y = judge(vp, "mlx5_0", RMPI_OFI_XRC_AUTO, 1, "1", "1", why);
    WANT(0, y, why, "listed no XRC domain for mlx5_0");
    y = judge("tcp;ofi_rxm", "lo", RMPI_OFI_XRC_AUTO, -1, NULL, NULL, why);
    WANT(0, y, why, "tcp;ofi_rxm has no XRC mode");
    /* verbs under ofi_rxd runs over datagrams: no XRC, even on an "-xrc"-looking name */
    y = judge("verbs;ofi_rxd", "mlx5_0-xrc", RMPI_OFI_XRC_AUTO, 1, NULL, NULL, why);
    WANT(0, y, why, "verbs;ofi_rxd has no XRC mode");
    CHECK(rmpi_ofi_xrc_mode("verbs;ofi_rxm") && !rmpi_ofi_xrc_mode("verbs") && !rmpi_ofi_xrc_mode("shm"),
          "the table's xrc column");
}

/* This host: the variables are set exactly when XRC is requested, and under auto only
 * when libibverbs reports a device with IBV_DEVICE_XRC. */
static void check_host(void)
{
    int user = getenv("FI_VERBS_PREFER_XRC") || getenv("FI_OFI_RXM_USE_SRX");
    char buf[1024] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    rmpi_ofi_xrc_report(f);
    fclose(f);
    printf("this host:%s", buf + 1);
    int asked = strstr(buf, "; requested") != NULL, has = strstr(buf, "has IBV_DEVICE_XRC") != NULL;
    CHECK(strstr(buf, "XRC (per-node connections"), "report: %s", buf);
    if (rmpi_knobs.OFI_XRC == RMPI_OFI_XRC_AUTO && !*rmpi_knobs.OFI_PROVIDER)
        CHECK(asked == has, "auto asked %d with a device with XRC %d", asked, has);
    if (asked && !user) {
        const char *p = getenv("FI_VERBS_PREFER_XRC"), *s = getenv("FI_OFI_RXM_USE_SRX");
        CHECK(p && s && !strcmp(p, "1") && !strcmp(s, "1"), "requested but not set");
    }
    if (!asked && !user)
        CHECK(!getenv("FI_VERBS_PREFER_XRC") && !getenv("FI_OFI_RXM_USE_SRX"), "not requested but set");
}

int main(void)
{
    rmpi_knobs_init();
    check_pick();
    check_judge();
    check_host();
    return finish("net/ofi_xrc");
}
