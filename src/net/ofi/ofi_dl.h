/* libfabric is loaded when a rail first needs it, not when libmpi.so is: Debian's build
 * pulls in libpsm_infinipath and libpsm2, whose constructors cost about 0.1 s each at
 * every process start (dlopen of libfabric.so.1 alone: 0.20 s here), while most jobs
 * (one node; RMPI_NET=auto between nodes without a hardware provider after the first
 * look) never use it. The few functions libfabric exports and this provider calls (the
 * rest are inline calls through the objects' operation tables) are renamed here to
 * ofi_dl.c's, which load the library on first use. Included before any libfabric header,
 * so that the headers' own declarations and inline callers take the new names too. */
#ifndef RMPI_OFI_DL_H
#define RMPI_OFI_DL_H

#define fi_getinfo rmpi_ofi_dl_getinfo
#define fi_freeinfo rmpi_ofi_dl_freeinfo
#define fi_dupinfo rmpi_ofi_dl_dupinfo
#define fi_fabric rmpi_ofi_dl_fabric
#define fi_strerror rmpi_ofi_dl_strerror
#define fi_version rmpi_ofi_dl_version

/* Whether libfabric is loaded (or could be now: load 1); the reason when not. */
int rmpi_ofi_dl_ready(int load, const char **why);

#endif
