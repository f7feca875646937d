/*
 * A far peer's send buffer (src/net/tcp/tcp_iface.c: rmpi_tcp_far_sndbuf), pure logic:
 *  - twice rate x round trip: 1 Gbit/s at 2 ms is 500,000 bytes, 10 Gbit/s at 2 ms 5 MB;
 *  - the cap bounds it, and stands in for an unknown rate (0, negative, NaN, infinite);
 *  - 0 (autotuning kept) below 64 KiB, for a cap of 0 or less, an unknown round trip
 *    (0, negative, NaN, infinite), and when net.core.wmem_max is below the want (the
 *    kernel's default 208 KiB against 4 MiB); a wmem_max at or above it, or unknown, grants;
 *  - the result never exceeds INT_MAX (setsockopt takes an int) nor the cap, and never
 *    decreases with the rate or the round trip (random cases).
 */
#include <limits.h>
#include <math.h>

#include "../unit_check.h"
#include "net/tcp/tcp.h"

static void cases(void)
{
    const long long cap = 4ll << 20;
    CHECK(rmpi_tcp_far_sndbuf(2e6, 125e6, cap, 0) == 500000, "1 Gbit/s x 2 ms: %d",
          rmpi_tcp_far_sndbuf(2e6, 125e6, cap, 0));
    CHECK(rmpi_tcp_far_sndbuf(2e6, 1.25e9, 8ll << 20, 0) == 5000000, "10 Gbit/s x 2 ms: %d",
          rmpi_tcp_far_sndbuf(2e6, 1.25e9, 8ll << 20, 0));
    CHECK(rmpi_tcp_far_sndbuf(2e6, 1.25e9, cap, 0) == (int)cap, "capped: %d", rmpi_tcp_far_sndbuf(2e6, 1.25e9, cap, 0));
    CHECK(rmpi_tcp_far_sndbuf(20e6, 125e6, cap, 0) == (int)cap, "10 ms capped: %d",
          rmpi_tcp_far_sndbuf(20e6, 125e6, cap, 0));
    double unknown[] = {0, -1, NAN, INFINITY};
    for (int i = 0; i < 4; i++)
        CHECK(rmpi_tcp_far_sndbuf(2e6, unknown[i], cap, 0) == (int)cap, "rate %g: %d", unknown[i],
              rmpi_tcp_far_sndbuf(2e6, unknown[i], cap, 0));
    for (int i = 0; i < 4; i++)
        CHECK(rmpi_tcp_far_sndbuf(unknown[i], 125e6, cap, 0) == 0, "round trip %g: %d", unknown[i],
              rmpi_tcp_far_sndbuf(unknown[i], 125e6, cap, 0));
    CHECK(rmpi_tcp_far_sndbuf(2e6, 125e6, 0, 0) == 0, "cap 0");
    CHECK(rmpi_tcp_far_sndbuf(2e6, 125e6, -5, 0) == 0, "cap < 0");
    /* 100 Mbit/s at 200 us: 5,000 bytes, below the kernel's own start */
    CHECK(rmpi_tcp_far_sndbuf(200e3, 12.5e6, cap, 0) == 0, "small BDP: %d", rmpi_tcp_far_sndbuf(200e3, 12.5e6, cap, 0));
    CHECK(rmpi_tcp_far_sndbuf(2e6, 125e6, 1000, 0) == 0, "cap below 64 KiB");
    CHECK(rmpi_tcp_far_sndbuf(1e9, 1e12, 1ll << 40, 0) == INT_MAX, "INT_MAX");
    CHECK(rmpi_tcp_far_sndbuf(2e6, 0, cap, 212992) == 0, "wmem_max 208 KiB");
    CHECK(rmpi_tcp_far_sndbuf(2e6, 0, cap, cap) == (int)cap, "wmem_max = cap");
    CHECK(rmpi_tcp_far_sndbuf(2e6, 125e6, cap, 212992) == 0, "500 KB against 208 KiB");
    CHECK(rmpi_tcp_far_sndbuf(2e6, 125e6, cap, 500000) == 500000, "500 KB against 500 KB");
}

static void properties(void)
{
    unit_rng_t g = unit_seed(12);
    for (int t = 0; t < 20000; t++) {
        double rtt = (double)unit_range(&g, 0, 100000000), rate = (double)unit_range(&g, 0, 10000000000ull);
        long long cap = (long long)unit_range(&g, 0, 1ull << 33), grant = (long long)unit_range(&g, 0, 1ull << 32);
        int a = rmpi_tcp_far_sndbuf(rtt, rate, cap, 0);
        int b = rmpi_tcp_far_sndbuf(rtt * 2, rate, cap, 0), c = rmpi_tcp_far_sndbuf(rtt, rate * 2 + 1, cap, 0);
        int d = rmpi_tcp_far_sndbuf(rtt, rate, cap, grant);
        CHECK(a >= 0 && a <= cap && a <= INT_MAX, "case %d: %d outside [0, %lld]", t, a, cap);
        CHECK(d == 0 || (d == a && d <= grant), "case %d: %d with wmem_max %lld (%d without)", t, d, grant, a);
        CHECK(grant == 0 || a > grant || d == a, "case %d: wmem_max %lld refused %d", t, grant, a);
        CHECK(a == 0 || a >= 65536, "case %d: %d below 64 KiB", t, a);
        CHECK(rate == 0 || b >= a, "case %d: a longer round trip gave less (%d < %d)", t, b, a);
        CHECK(rate == 0 || c >= a, "case %d: a higher rate gave less (%d < %d)", t, c, a);
    }
}

int main(void)
{
    cases();
    properties();
    return finish("tcp_far_sndbuf");
}
