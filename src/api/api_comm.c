/* Communicator bindings: queries, dup/idup, split/split_type, create/create_group, free,
 * compare, names, info, intercommunicators. */
#include "api_pt2pt.h"
#include "../coll/coll.h"

#include <stdio.h>
#include <string.h>

#define GET_COMM(c, comm)                 \
    RMPI_API_INIT_CHECK();                \
    rmpi_comm_t *c = rmpi_comm_get(comm); \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)(comm))

#define GET_INTRA(c, comm)                                                                                     \
    GET_COMM(c, comm);                                                                                         \
    RMPI_CHECK(!c->inter, c, MPI_ERR_COMM, "%s is an intercommunicator; this call needs an intracommunicator", \
               c->name[0] ? c->name : "the communicator")

static const char *cname(const rmpi_comm_t *c) { return c->name[0] ? c->name : "the communicator"; }

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    GET_COMM(c, comm);
    RMPI_CHECK(size, c, MPI_ERR_ARG, "size must not be NULL");
    *size = c->size;
    return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    GET_COMM(c, comm);
    RMPI_CHECK(rank, c, MPI_ERR_ARG, "rank must not be NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    GET_COMM(c, comm);
    RMPI_CHECK(c->inter, c, MPI_ERR_COMM, "%s is not an intercommunicator", cname(c));
    RMPI_CHECK(size, c, MPI_ERR_ARG, "size must not be NULL");
    *size = rmpi_comm_remote_size(c);
    return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    GET_COMM(c, comm);
    RMPI_CHECK(flag, c, MPI_ERR_ARG, "flag must not be NULL");
    *flag = c->inter;
    return MPI_SUCCESS;
}

static int group_out(rmpi_comm_t *c, int remote, MPI_Group *group)
{
    RMPI_LOCK();
    rmpi_group_t *g = rmpi_group_of_comm(c, remote);
    RMPI_UNLOCK();
    *group = rmpi_group_handle(g);
    return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    GET_COMM(c, comm);
    RMPI_CHECK(group, c, MPI_ERR_ARG, "group must not be NULL");
    return group_out(c, 0, group);
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    GET_COMM(c, comm);
    RMPI_CHECK(c->inter, c, MPI_ERR_COMM, "%s is not an intercommunicator", cname(c));
    RMPI_CHECK(group, c, MPI_ERR_ARG, "group must not be NULL");
    return group_out(c, 1, group);
}

int rmpi_api_comm_adopt(rmpi_comm_t *parent, rmpi_comm_t *n, int dup, rmpi_info_t *info, MPI_Comm *out)
{
    if (!n) {
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(parent->handle, &eh);
    MPI_Comm_set_errhandler(n->handle, eh);
    MPI_Errhandler_free(&eh);
    if (info)
        n->info = rmpi_info_dup(info);
    if (dup) {
        int rc = rmpi_attr_copy(parent->attrs, RMPI_ATTR_COMM, parent->handle, &n->attrs);
        if (rc) {
            rmpi_attr_delete_all(&n->attrs, RMPI_ATTR_COMM, n->handle);
            MPI_Comm_set_errhandler(n->handle, MPI_ERRORS_ARE_FATAL);
            RMPI_LOCK();
            rmpi_comm_release(n);
            RMPI_UNLOCK();
            *out = MPI_COMM_NULL;
            return rc;
        }
    }
    *out = n->handle;
    return MPI_SUCCESS;
}

static int dup_common(const char *func, rmpi_comm_t *c, rmpi_info_t *info, MPI_Comm *newcomm)
{
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_comm_dup(c, &n);
    RMPI_UNLOCK();
    if (rc)
        return rmpi_api_error(c, rc, func, "could not agree on a new context id");
    rc = rmpi_api_comm_adopt(c, n, 1, info, newcomm);
    return rc ? rmpi_api_error(c, rc, func, "an attribute copy callback returned error %d", rc) : MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET_COMM(c, comm);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    return dup_common(__func__, c, c->info, newcomm);
}

#define GET_INFO(i, info, c)                                                      \
    rmpi_info_t *i = NULL;                                                        \
    if ((info) != MPI_INFO_NULL) {                                                \
        i = rmpi_info_get(info);                                                  \
        RMPI_CHECK(i, c, MPI_ERR_INFO, "invalid info object %p", (void *)(info)); \
    }

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    GET_COMM(c, comm);
    GET_INFO(i, info, c);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    return dup_common(__func__, c, i, newcomm);
}

/* The agreement runs as a non-blocking exchange on comm (comm/agree.c); the attributes
 * are copied now, as MPI_Comm_dup would, and *newcomm names a communicator only once the
 * request completes (using it earlier gives MPI_ERR_COMM). */
static int idup_common(const char *func, rmpi_comm_t *c, rmpi_info_t *info, MPI_Comm *newcomm, MPI_Request *request)
{
    RMPI_LOCK();
    rmpi_comm_t *n = rmpi_comm_idup_object(c);
    RMPI_UNLOCK();
    int rc = rmpi_api_comm_adopt(c, n, 1, info, newcomm);
    RMPI_LOCK();
    /* a failed attribute copy released n; the other members still need this one's part */
    rmpi_req_t *r = rc ? NULL : rmpi_api_greq_new(NULL, NULL, NULL, NULL, c);
    rmpi_comm_idup_start(c, rc ? NULL : n, r);
    RMPI_UNLOCK();
    if (rc)
        return rmpi_api_error(c, rc, func, "an attribute copy callback returned error %d", rc);
    *request = rmpi_api_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    GET_COMM(c, comm);
    RMPI_CHECK(newcomm && request, c, MPI_ERR_ARG, "newcomm and request must not be NULL");
    return idup_common(__func__, c, c->info, newcomm, request);
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    GET_COMM(c, comm);
    GET_INFO(i, info, c);
    RMPI_CHECK(newcomm && request, c, MPI_ERR_ARG, "newcomm and request must not be NULL");
    return idup_common(__func__, c, i, newcomm, request);
}

static int split_common(const char *func, rmpi_comm_t *c, int color, int key, rmpi_comm_t **n)
{
    RMPI_LOCK();
    int rc = rmpi_comm_split(c, color, key, n);
    RMPI_UNLOCK();
    return rc ? rmpi_api_error(c, rc, func, "could not build the new communicator") : MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM(c, comm);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    RMPI_CHECK(color >= 0 || color == MPI_UNDEFINED, c, MPI_ERR_ARG, "color %d is negative", color);
    rmpi_comm_t *n;
    int rc;
    if (c->inter) {
        RMPI_LOCK();
        rc = rmpi_comm_inter_split(c, color, key, &n);
        RMPI_UNLOCK();
        if (rc)
            return RMPI_ERROR(c, rc, "could not split the intercommunicator");
    } else {
        rc = split_common(__func__, c, color, key, &n);
    }
    return rc ? rc : rmpi_api_comm_adopt(c, n, 0, NULL, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    GET_COMM(orig, comm);
    rmpi_comm_t *c = orig->inter ? orig->local : orig; /* an intercomm splits its local group (as MPICH) */
    GET_INFO(i, info, c);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    int node = rmpi_topo_node_of(rmpi_comm_local_world_rank(c, c->rank)), color;
    /* With processes of other worlds (spawn, connect) node numbers differ between worlds;
     * the node's tag (host name and boot id) is the same everywhere. Every member of such
     * a communicator sees a process of another world, so all use the tag. */
    for (int r = 0; r < c->size; r++)
        if (rmpi_comm_local_world_rank(c, r) >= rmpi_comm_world.size)
            node = (int)(rmpi_topo_node_tag() & 0x7fffffff);
    const char *hw = i ? rmpi_info_lookup(i, "mpi_hw_resource_type") : NULL;
    switch (split_type) {
    case MPI_UNDEFINED: color = MPI_UNDEFINED; break;
    case MPI_COMM_TYPE_SHARED:
    case MPI_COMM_TYPE_HW_UNGUIDED: color = node; break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        /* the only hardware resource RailMPI knows is the node's shared memory */
        color = hw && strcmp(hw, "mpi_shared_memory") == 0 ? node : MPI_UNDEFINED;
        break;
    default:
        return RMPI_ERROR(c, MPI_ERR_ARG,
                          "split_type %d is not one of MPI_COMM_TYPE_SHARED, _HW_GUIDED, "
                          "_HW_UNGUIDED, _RESOURCE_GUIDED or MPI_UNDEFINED",
                          split_type);
    }
    rmpi_comm_t *n;
    int rc = split_common(__func__, c, color, key, &n);
    if (rc)
        return rc;
    if (n && split_type == MPI_COMM_TYPE_HW_UNGUIDED && n->size == c->size) {
        /* unguided splits must give strict subsets; one node is as far as we can go */
        RMPI_LOCK();
        rmpi_comm_release(n);
        RMPI_UNLOCK();
        n = NULL;
    }
    if (n) { /* the resource the new communicator spans (MPI-4.1) */
        n->info = rmpi_info_new();
        rmpi_info_set(n->info, "mpi_hw_resource_type", "mpi_shared_memory");
    }
    return rmpi_api_comm_adopt(orig, n, 0, NULL, newcomm);
}

/* Every member of g is a member of c's local group. */
static int group_in_comm(const rmpi_group_t *g, const rmpi_comm_t *c)
{
    for (int i = 0; i < g->size; i++) {
        int found = 0;
        for (int r = 0; r < c->size && !found; r++)
            found = rmpi_comm_local_world_rank(c, r) == g->world[i];
        if (!found)
            return 0;
    }
    return 1;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    GET_COMM(c, comm);
    rmpi_group_t *g = rmpi_group_get(group);
    RMPI_CHECK(g, c, MPI_ERR_GROUP, "invalid group %p", (void *)group);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    RMPI_CHECK(group_in_comm(g, c), c, MPI_ERR_GROUP, "the group has members that are not in %s", cname(c));
    rmpi_comm_t *n = NULL;
    int rc;
    if (c->inter) {
        RMPI_LOCK();
        rc = rmpi_comm_inter_create(c, g->world, g->size, &n);
        RMPI_UNLOCK();
    } else {
        /* disjoint groups may be given: colour by the group's first member, order by group rank */
        int in = g->rank != MPI_UNDEFINED;
        rc = split_common(__func__, c, in ? g->world[0] : MPI_UNDEFINED, in ? g->rank : 0, &n);
    }
    if (rc)
        return RMPI_ERROR(c, rc, "could not build the new communicator");
    return rmpi_api_comm_adopt(c, n, 0, NULL, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    GET_INTRA(c, comm);
    rmpi_group_t *g = rmpi_group_get(group);
    RMPI_CHECK(g, c, MPI_ERR_GROUP, "invalid group %p", (void *)group);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    RMPI_CHECK(tag >= 0, c, MPI_ERR_TAG, "tag %d is negative", tag);
    RMPI_CHECK(group_in_comm(g, c), c, MPI_ERR_GROUP, "the group has members that are not in %s", cname(c));
    if (g->rank == MPI_UNDEFINED) { /* not a member: nothing to agree on */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_comm_create_group(c, g->world, g->size, tag, &n);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(c, rc, "could not build the new communicator");
    return rmpi_api_comm_adopt(c, n, 0, NULL, newcomm);
}

/* Session-model constructors without sessions: the group names world ranks, so the new
 * communicator is agreed on MPI_COMM_WORLD's collective context, the string tag hashed
 * into the message tag (different tags may run at once). */
static int stringtag_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return (int)(h & 0x3ffffffe);
}

static int from_group_checks(const char *func, rmpi_group_t *g, const char *stringtag)
{
    if (!g)
        return rmpi_api_error(NULL, MPI_ERR_GROUP, func, "invalid group");
    if (!stringtag)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "stringtag must not be NULL");
    if (g->rank == MPI_UNDEFINED)
        return rmpi_api_error(NULL, MPI_ERR_GROUP, func, "the calling process is not in the group");
    return MPI_SUCCESS;
}

/* Set the error handler given to a session-model constructor (MPI_ERRHANDLER_NULL: keep). */
static int give_errhandler(const char *func, MPI_Comm h, MPI_Errhandler eh)
{
    if (eh == MPI_ERRHANDLER_NULL)
        return MPI_SUCCESS;
    int rc = MPI_Comm_set_errhandler(h, eh);
    return rc ? rmpi_api_error(NULL, rc, func, "invalid error handler") : MPI_SUCCESS;
}

int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                               MPI_Comm *newcomm)
{
    RMPI_API_INIT_CHECK();
    rmpi_group_t *g = rmpi_group_get(group);
    int rc = from_group_checks(__func__, g, stringtag);
    if (rc)
        return rc;
    RMPI_CHECK(newcomm, NULL, MPI_ERR_ARG, "newcomm must not be NULL");
    GET_INFO(i, info, NULL);
    rmpi_comm_t *n;
    RMPI_LOCK();
    rc = rmpi_comm_create_group(&rmpi_comm_world, g->world, g->size, stringtag_hash(stringtag), &n);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(NULL, rc, "could not build the communicator of tag \"%s\"", stringtag);
    if (i)
        n->info = rmpi_info_dup(i);
    *newcomm = n->handle;
    return give_errhandler(__func__, n->handle, errhandler);
}

int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader,
                                     const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                     MPI_Comm *newintercomm)
{
    RMPI_API_INIT_CHECK();
    rmpi_group_t *lg = rmpi_group_get(local_group), *rg = rmpi_group_get(remote_group);
    int rc = from_group_checks(__func__, lg, stringtag);
    if (rc)
        return rc;
    RMPI_CHECK(rg, NULL, MPI_ERR_GROUP, "invalid remote group");
    RMPI_CHECK(newintercomm, NULL, MPI_ERR_ARG, "newintercomm must not be NULL");
    RMPI_CHECK(local_leader >= 0 && local_leader < lg->size, NULL, MPI_ERR_RANK,
               "local_leader %d is not a rank of the local group (size %d)", local_leader, lg->size);
    RMPI_CHECK(remote_leader >= 0 && remote_leader < rg->size, NULL, MPI_ERR_RANK,
               "remote_leader %d is not a rank of the remote group (size %d)", remote_leader, rg->size);
    GET_INFO(i, info, NULL);
    int tag = stringtag_hash(stringtag);
    rmpi_comm_t *local, *n;
    RMPI_LOCK();
    rc = rmpi_comm_create_group(&rmpi_comm_world, lg->world, lg->size, tag, &local);
    if (!rc) {
        rc = rmpi_comm_intercomm_create(local, local_leader, &rmpi_comm_world, rg->world[remote_leader], tag | 1, &n);
        rmpi_comm_release(local);
    }
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(NULL, rc, "could not build the intercommunicator of tag \"%s\"", stringtag);
    if (i)
        n->info = rmpi_info_dup(i);
    *newintercomm = n->handle;
    return give_errhandler(__func__, n->handle, errhandler);
}

int rmpi_api_comm_free(const char *func, MPI_Comm *comm, int disconnect)
{
    RMPI_API_INIT_CHECK();
    if (!comm)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "comm must not be NULL");
    rmpi_comm_t *c = rmpi_comm_get(*comm);
    if (!c)
        return rmpi_api_error(NULL, MPI_ERR_COMM, func, "invalid communicator");
    if (c->predefined)
        return rmpi_api_error(c, MPI_ERR_COMM, func, "%s cannot be %s", c->name, disconnect ? "disconnected" : "freed");
    if (disconnect) {
        /* Every member has completed its sends to the others once all reached the barrier
         * (the user's requests are complete before the call, as the standard requires). */
        RMPI_LOCK();
        int rc = rmpi_coll_barrier(c);
        RMPI_UNLOCK();
        if (rc)
            return rmpi_api_error(c, rc, func, "the barrier before disconnecting failed");
    }
    int rc = rmpi_attr_delete_all(&c->attrs, RMPI_ATTR_COMM, c->handle);
    if (rc)
        return rmpi_api_error(c, rc, func, "an attribute delete callback returned error %d", rc);
    MPI_Comm_set_errhandler(*comm, MPI_ERRORS_ARE_FATAL); /* drop our reference to a user handler */
    rmpi_api_bsend_comm_free(c);
    rmpi_api_dpm_forget(c);
    RMPI_LOCK();
    rmpi_comm_release(c);
    RMPI_UNLOCK();
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm *comm) { return rmpi_api_comm_free(__func__, comm, 0); }

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *a = rmpi_comm_get(comm1), *b = rmpi_comm_get(comm2);
    RMPI_CHECK(a && b, NULL, MPI_ERR_COMM, "invalid communicator");
    RMPI_CHECK(result, a, MPI_ERR_ARG, "result must not be NULL");
    *result = rmpi_comm_compare(a, b);
    return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    GET_COMM(c, comm);
    RMPI_CHECK(name, c, MPI_ERR_ARG, "name must not be NULL");
    snprintf(c->name, sizeof c->name, "%s", name);
    return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    if (comm == MPI_COMM_NULL && name && resultlen) { /* MPI-4.1: the null handle has a name too */
        *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "MPI_COMM_NULL");
        return MPI_SUCCESS;
    }
    GET_COMM(c, comm);
    RMPI_CHECK(name && resultlen, c, MPI_ERR_ARG, "name and resultlen must not be NULL");
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    return MPI_SUCCESS;
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    GET_COMM(c, comm);
    GET_INFO(i, info, c);
    RMPI_LOCK();
    rmpi_info_t *old = c->info;
    c->info = i ? rmpi_info_dup(i) : NULL;
    rmpi_info_free(old);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    GET_COMM(c, comm);
    RMPI_CHECK(info_used, c, MPI_ERR_ARG, "info_used must not be NULL");
    RMPI_LOCK();
    *info_used = (MPI_Info)rmpi_info_dup(c->info);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm *newintercomm)
{
    GET_INTRA(c, local_comm);
    RMPI_CHECK(newintercomm, c, MPI_ERR_ARG, "newintercomm must not be NULL");
    RMPI_CHECK(local_leader >= 0 && local_leader < c->size, c, MPI_ERR_RANK,
               "local_leader %d is not a rank of %s (size %d)", local_leader, cname(c), c->size);
    RMPI_CHECK(tag >= 0, c, MPI_ERR_TAG, "tag %d is negative", tag);
    rmpi_comm_t *p = NULL;
    if (c->rank == local_leader) {
        p = rmpi_comm_get(peer_comm);
        RMPI_CHECK(p, c, MPI_ERR_COMM, "invalid peer communicator %p", (void *)peer_comm);
        RMPI_CHECK(remote_leader >= 0 && remote_leader < p->rsize, c, MPI_ERR_RANK,
                   "remote_leader %d is not a rank of the peer communicator (size %d)", remote_leader, p->rsize);
        RMPI_CHECK(p->inter || remote_leader != p->rank, c, MPI_ERR_RANK, "remote_leader %d is the local leader itself",
                   remote_leader);
    }
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_comm_intercomm_create(c, local_leader, p, remote_leader, tag, &n);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(c, rc, "could not build the intercommunicator");
    return rmpi_api_comm_adopt(c, n, 0, NULL, newintercomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    GET_COMM(c, intercomm);
    RMPI_CHECK(c->inter, c, MPI_ERR_COMM, "%s is not an intercommunicator", cname(c));
    RMPI_CHECK(newintracomm, c, MPI_ERR_ARG, "newintracomm must not be NULL");
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_comm_intercomm_merge(c, high, &n);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(c, rc, "could not merge the intercommunicator");
    return rmpi_api_comm_adopt(c, n, 0, NULL, newintracomm);
}
