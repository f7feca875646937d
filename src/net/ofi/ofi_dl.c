/* libfabric loaded on first use (ofi_dl.h says why). Each function is bound to the symbol
 * version the build's headers were made for (CMake reads them from the library it found:
 * RMPI_FI_V_*), as the link editor would have bound it; without one, the default. */
#include "ofi_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <stdio.h>

#ifndef RMPI_FI_SONAME
#define RMPI_FI_SONAME "libfabric.so.1"
#endif
#ifndef RMPI_FI_V_GETINFO /* CMake found no versions: the defaults */
#define RMPI_FI_V_GETINFO NULL
#define RMPI_FI_V_FREEINFO NULL
#define RMPI_FI_V_DUPINFO NULL
#define RMPI_FI_V_FABRIC NULL
#define RMPI_FI_V_STRERROR NULL
#define RMPI_FI_V_VERSION NULL
#endif

static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    uint32_t (*version)(void);
} fi;
static char why_not[512];
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The build's version or nothing: a library without it is older than the headers, which the
 * dynamic loader would have refused for a linked libmpi.so as well. */
static void *sym(void *h, const char *name, const char *ver) { return ver ? dlvsym(h, name, ver) : dlsym(h, name); }

static void load(void)
{
    void *h = dlopen(RMPI_FI_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        snprintf(why_not, sizeof why_not, "%s could not be loaded (%s)", RMPI_FI_SONAME, dlerror());
        return;
    }
    *(void **)&fi.getinfo = sym(h, "fi_getinfo", RMPI_FI_V_GETINFO);
    *(void **)&fi.freeinfo = sym(h, "fi_freeinfo", RMPI_FI_V_FREEINFO);
    *(void **)&fi.dupinfo = sym(h, "fi_dupinfo", RMPI_FI_V_DUPINFO);
    *(void **)&fi.fabric = sym(h, "fi_fabric", RMPI_FI_V_FABRIC);
    *(void **)&fi.strerror = sym(h, "fi_strerror", RMPI_FI_V_STRERROR);
    *(void **)&fi.version = sym(h, "fi_version", RMPI_FI_V_VERSION);
    if (!fi.getinfo || !fi.freeinfo || !fi.dupinfo || !fi.fabric || !fi.strerror || !fi.version) {
        snprintf(why_not, sizeof why_not,
                 "%s lacks fi_getinfo, fi_fabric or another function in the version this build needs (%s); "
                 "rebuild RailMPI against the installed libfabric",
                 RMPI_FI_SONAME, RMPI_FI_V_GETINFO ? RMPI_FI_V_GETINFO : "any");
        return;
    }
    loaded = 1;
}

int rmpi_ofi_dl_ready(int now, const char **why)
{
    if (now)
        pthread_once(&once, load);
    if (why)
        *why = loaded ? "" : why_not[0] ? why_not : "libfabric is not loaded yet";
    return loaded;
}

int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags, const struct fi_info *hints,
               struct fi_info **info)
{
    if (!rmpi_ofi_dl_ready(1, NULL)) {
        *info = NULL;
        return -FI_ENOSYS;
    }
    return fi.getinfo(version, node, service, flags, hints, info);
}

void fi_freeinfo(struct fi_info *info)
{
    if (info && rmpi_ofi_dl_ready(1, NULL)) /* only what fi_getinfo or fi_dupinfo gave */
        fi.freeinfo(info);
}

struct fi_info *fi_dupinfo(const struct fi_info *info) { return rmpi_ofi_dl_ready(1, NULL) ? fi.dupinfo(info) : NULL; }

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return rmpi_ofi_dl_ready(1, NULL) ? fi.fabric(attr, fabric, context) : -FI_ENOSYS;
}

const char *fi_strerror(int errnum)
{
    return rmpi_ofi_dl_ready(1, NULL) ? fi.strerror(errnum) : "libfabric not loaded";
}

uint32_t fi_version(void) { return rmpi_ofi_dl_ready(1, NULL) ? fi.version() : 0; }
