/* Dynamic processes: ports, Comm_accept/connect/join/disconnect, Comm_spawn(_multiple),
 * Comm_get_parent, and the name service (Publish/Unpublish/Lookup_name). The exchange
 * itself lives in comm/dpm.c; spawn and the name service go through the process manager. */
#include "api_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARENT_KEY "PARENT_ROOT_PORT_NAME"

static rmpi_comm_t *parent;
static int singleton;

int rmpi_api_dpm_init(int is_singleton)
{
    singleton = is_singleton;
    char port[MPI_MAX_PORT_NAME];
    if (rmpi_pmi_get(PARENT_KEY, port, sizeof port) != 0)
        return MPI_SUCCESS;
    RMPI_LOCK();
    int rc = rmpi_dpm_connect_accept(port, 0, &rmpi_comm_world, 0, &parent);
    RMPI_UNLOCK();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "[rmpi] MPI_Init of a spawned process could not connect to its parents (port %s).\n", port);
        return rc;
    }
    snprintf(parent->name, sizeof parent->name, "MPI_COMM_PARENT");
    return MPI_SUCCESS;
}

void rmpi_api_dpm_forget(rmpi_comm_t *c)
{
    if (c == parent)
        parent = NULL;
}

int MPI_Comm_get_parent(MPI_Comm *out)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(out, NULL, MPI_ERR_ARG, "parent must not be NULL");
    *out = parent ? parent->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Open_port(MPI_Info info, char *port_name)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(port_name, NULL, MPI_ERR_ARG, "port_name must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_dpm_open_port(port_name);
    RMPI_UNLOCK();
    return rc ? RMPI_ERROR(NULL, rc, "no listening socket could be opened") : MPI_SUCCESS;
}

int MPI_Close_port(const char *port_name)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(port_name, NULL, MPI_ERR_ARG, "port_name must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_dpm_close_port(port_name);
    RMPI_UNLOCK();
    return rc ? RMPI_ERROR(NULL, rc, "'%s' is not a port opened by this process", port_name) : MPI_SUCCESS;
}

/* The checks shared by accept, connect and spawn: an intracommunicator, a root in it, a
 * place for the result. 0 (c set) or the error already reported. */
static int check_root_call(const char *func, MPI_Comm comm, int root, const void *out, rmpi_comm_t **cp)
{
    rmpi_comm_t *c = *cp = rmpi_comm_get(comm);
    if (!c)
        return rmpi_api_error(NULL, MPI_ERR_COMM, func, "invalid communicator");
    if (c->inter)
        return rmpi_api_error(c, MPI_ERR_COMM, func, "%s is an intercommunicator", c->name);
    if (root < 0 || root >= c->size)
        return rmpi_api_error(c, MPI_ERR_ROOT, func, "root %d is not a rank of %s", root, c->name);
    if (!out)
        return rmpi_api_error(c, MPI_ERR_ARG, func, "the output communicator must not be NULL");
    return MPI_SUCCESS;
}

static int connect_accept(const char *func, const char *port, int root, MPI_Comm comm, MPI_Comm *newcomm, int accept)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c;
    int bad = check_root_call(func, comm, root, newcomm, &c);
    if (bad)
        return bad;
    if (c->rank == root && !port)
        return rmpi_api_error(c, MPI_ERR_ARG, func, "port_name must not be NULL at the root");
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_dpm_connect_accept(c->rank == root ? port : "", root, c, accept, &n);
    RMPI_UNLOCK();
    *newcomm = MPI_COMM_NULL;
    if (rc)
        return rmpi_api_error(c, rc, func, "%s port '%s' failed%s", accept ? "accepting on" : "connecting to",
                              c->rank == root ? port : "(the root's)",
                              rc == MPI_ERR_PORT ? ": no such port, or nobody accepted in RMPI_PORT_TIMEOUT" : "");
    return rmpi_api_comm_adopt(c, n, 0, NULL, newcomm);
}

int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return connect_accept(__func__, port_name, root, comm, newcomm, 1);
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return connect_accept(__func__, port_name, root, comm, newcomm, 0);
}

int MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(intercomm, NULL, MPI_ERR_ARG, "intercomm must not be NULL");
    RMPI_CHECK(fd >= 0, NULL, MPI_ERR_ARG, "fd %d is not a socket", fd);
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_dpm_join(fd, &n);
    RMPI_UNLOCK();
    *intercomm = MPI_COMM_NULL;
    if (rc)
        return RMPI_ERROR(NULL, rc, "no RailMPI process answered on socket %d", fd);
    return rmpi_api_comm_adopt(&rmpi_comm_self, n, 0, NULL, intercomm);
}

int MPI_Comm_disconnect(MPI_Comm *comm) { return rmpi_api_comm_free(__func__, comm, 1); }

/* ---- spawn ---- */

static int spawn_error(const char *func, rmpi_comm_t *c, int n, int *errcodes, MPI_Comm *intercomm, int rc,
                       const char *why)
{
    if (errcodes)
        for (int i = 0; i < n; i++)
            errcodes[i] = rc;
    *intercomm = MPI_COMM_NULL;
    return rmpi_api_error(c, rc, func, "%s", why);
}

static int spawn(const char *func, int count, char *commands[], char **argvs[], const int maxprocs[],
                 const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c;
    int bad = check_root_call(func, comm, root, intercomm, &c);
    if (bad)
        return bad;
    /* The root checks its arguments and spawns; everyone learns the outcome. */
    struct {
        int rc, total;
    } out = {MPI_SUCCESS, 0};
    char port[MPI_MAX_PORT_NAME] = "", why[160] = "";
    if (c->rank == root) {
        if (count <= 0) {
            out.rc = MPI_ERR_ARG;
            snprintf(why, sizeof why, "count %d is not positive", count);
        }
        for (int i = 0; i < count && !out.rc; i++) {
            if (!commands || !commands[i] || !maxprocs || maxprocs[i] <= 0) {
                out.rc = MPI_ERR_ARG;
                snprintf(why, sizeof why, "command %d has no name or maxprocs <= 0", i);
            } else {
                out.total += maxprocs[i];
            }
        }
        RMPI_LOCK();
        if (!out.rc && (out.rc = rmpi_dpm_open_port(port)) == MPI_SUCCESS) {
            rmpi_pmi_spawn_cmd_t *cmds = rmpi_xcalloc((size_t)count, sizeof *cmds);
            for (int i = 0; i < count; i++) {
                rmpi_info_t *in = infos ? rmpi_info_get(infos[i]) : NULL;
                cmds[i] = (rmpi_pmi_spawn_cmd_t){commands[i], argvs ? argvs[i] : NULL, maxprocs[i], 0, NULL, NULL};
                if (in && in != &rmpi_info_env) {
                    cmds[i].ninfo = in->n;
                    cmds[i].ikeys = (const char **)in->keys;
                    cmds[i].ivals = (const char **)in->vals;
                }
            }
            const char *key = PARENT_KEY, *val = port;
            if (rmpi_pmi_spawn(count, cmds, 1, &key, &val) != 0) {
                out.rc = MPI_ERR_SPAWN;
                snprintf(why, sizeof why, "the process manager could not start %s%s", commands[0],
                         singleton ? " (a singleton has no process manager: start it with mpiexec)" : "");
                rmpi_dpm_close_port(port);
            }
            free(cmds);
        }
        RMPI_UNLOCK();
    }
    RMPI_LOCK();
    rmpi_comm_bcast_small(c, &out, sizeof out, root);
    rmpi_comm_t *n = NULL;
    int rc = out.rc;
    if (!rc) {
        rc = rmpi_dpm_connect_accept(port, root, c, 1, &n);
        if (c->rank == root)
            rmpi_dpm_close_port(port);
    }
    RMPI_UNLOCK();
    if (rc)
        return spawn_error(func, c, c->rank == root ? out.total : 0, errcodes, intercomm, rc,
                           why[0] ? why : "the spawned processes did not connect");
    if (errcodes)
        for (int i = 0; i < n->rsize; i++)
            errcodes[i] = MPI_SUCCESS;
    return rmpi_api_comm_adopt(c, n, 0, NULL, intercomm);
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmd = (char *)command;
    return spawn(__func__, 1, &cmd, argv ? &argv : NULL, &maxprocs, &info, root, comm, intercomm, array_of_errcodes);
}

int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[],
                            const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                            int array_of_errcodes[])
{
    /* count, like the commands, is significant only at the root */
    return spawn(__func__, count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, comm,
                 intercomm, array_of_errcodes);
}

/* ---- name service ---- */

int MPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(service_name && port_name, NULL, MPI_ERR_ARG, "service_name and port_name must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_pmi_publish(service_name, port_name);
    RMPI_UNLOCK();
    if (rc < 0)
        return RMPI_ERROR(NULL, MPI_ERR_SERVICE,
                          "no name service for '%s' (needs mpiexec; names without spaces or '=')", service_name);
    if (rc)
        return RMPI_ERROR(NULL, MPI_ERR_SERVICE, "service '%s' is already published", service_name);
    return MPI_SUCCESS;
}

int MPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(service_name && port_name, NULL, MPI_ERR_ARG, "service_name and port_name must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_pmi_unpublish(service_name);
    RMPI_UNLOCK();
    return rc ? RMPI_ERROR(NULL, MPI_ERR_SERVICE, "service '%s' is not published", service_name) : MPI_SUCCESS;
}

int MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(service_name && port_name, NULL, MPI_ERR_ARG, "service_name and port_name must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_pmi_lookup(service_name, port_name, MPI_MAX_PORT_NAME);
    RMPI_UNLOCK();
    return rc ? RMPI_ERROR(NULL, MPI_ERR_NAME, "service '%s' is not published", service_name) : MPI_SUCCESS;
}
