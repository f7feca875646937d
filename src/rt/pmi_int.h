/*
 * Internal to src/rt: the PMIx client (pmix.c, built only with libpmix) as pmi.c calls it.
 * pmi.c owns the choice of wire, the value encoding and the singleton table; these
 * functions move already encoded strings. Same threading rules as rt.h.
 */
#ifndef RMPI_PMI_INT_H
#define RMPI_PMI_INT_H

#include "rt.h"

/* Connect to the PMIx server; fill rank, size, appnum, kvsname (the namespace). expected
 * names the server in messages. 0, or -1 with a message printed. */
int rmpi_pmix_init(rmpi_pm_info_t *info, const char *expected);
int rmpi_pmix_put(const char *key, const char *value);
/* Commit, then a fence that collects the data. */
int rmpi_pmix_fence(void);
/* -1 when absent (silently) or too long for len (with a message). */
int rmpi_pmix_get(const char *key, char *value, size_t len);
int rmpi_pmix_finalize(void);
void rmpi_pmix_abort(int code, const char *msg);
int rmpi_pmix_spawn(int count, const rmpi_pmi_spawn_cmd_t *cmds, int npre, const char *const *pkeys,
                    const char *const *pvals);
/* cmd: publish_name | unpublish_name | lookup_name; as rmpi_pmi_publish and friends. */
int rmpi_pmix_names(const char *cmd, const char *service, const char *port, char *out, size_t len);

#endif
