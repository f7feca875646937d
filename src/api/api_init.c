/* Environment: Init/Finalize, thread levels, versions, clocks, processor name, Abort. */
#include "api_impl.h"
#include "../coll/coll.h"
#include "../datatype/datatype.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int rmpi_api_state = RMPI_STATE_PRE_INIT;
static int world_state = RMPI_STATE_PRE_INIT; /* the world model: MPI_Init .. MPI_Finalize */
static int sessions;                          /* open MPI sessions */
static int thread_level = MPI_THREAD_SINGLE;
static pthread_t main_thread;
static rmpi_core_info_t core_info;

static int thread_level_of(int required)
{
    /* the highest level not above the one asked for (levels are ordered but not dense) */
    return required >= MPI_THREAD_MULTIPLE     ? MPI_THREAD_MULTIPLE
           : required >= MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED
           : required >= MPI_THREAD_FUNNELED   ? MPI_THREAD_FUNNELED
                                               : MPI_THREAD_SINGLE;
}

/* The runtime (process manager, providers, MPI_COMM_WORLD and MPI_COMM_SELF) is shared by
 * the world model and every session (MPI-4.1 11.3): the first to need it starts it. */
static int runtime_start(int required)
{
    if (rmpi_api_state == RMPI_STATE_INIT) {
        /* MULTIPLE is honoured with one library lock, so a later user may raise the level */
        if (thread_level_of(required) > thread_level) {
            thread_level = thread_level_of(required);
            rmpi_thread_multiple = thread_level == MPI_THREAD_MULTIPLE || rmpi_core_async_wanted();
        }
        return MPI_SUCCESS;
    }
    if (rmpi_api_state == RMPI_STATE_FINALIZED) {
        fprintf(stderr, "[rmpi] MPI cannot start again in this process: MPI_Finalize (or the last "
                        "MPI_Session_finalize) has ended it.\n");
        return MPI_ERR_OTHER;
    }
    rmpi_core_types = &rmpi_dtype_core_ops;        /* how the core reads typed data */
    rmpi_core_report_json = rmpi_coll_report_json; /* the collectives' key in RMPI_REPORT=json */
    if (rmpi_core_init(&core_info)) {
        fprintf(stderr, "[rmpi] MPI_Init failed: the process manager or a network provider could not start "
                        "(RMPI_DEBUG=1 tells more).\n");
        return MPI_ERR_OTHER;
    }
    rmpi_comm_init(core_info.rank, core_info.size);
    thread_level = thread_level_of(required);
    /* With a progress thread the library locks as under MULTIPLE whatever was asked for;
     * provided stays the level asked for (as MPICH_ASYNC_PROGRESS does): the user's threads
     * may rely on that level, the progress thread is the library's own. */
    rmpi_thread_multiple = thread_level == MPI_THREAD_MULTIPLE || rmpi_core_async_wanted();
    main_thread = pthread_self();
    rmpi_api_attr_init(core_info.appnum);
    rmpi_api_info_env_init(core_info.size, thread_level);
    rmpi_api_state = RMPI_STATE_INIT;
    return MPI_SUCCESS;
}

static void runtime_stop(void)
{
    rmpi_core_async_stop(); /* joined before anything it progresses is torn down */
    RMPI_LOCK();
    if (rmpi_knobs.REPORT == RMPI_REPORT_ON)
        rmpi_coll_report(stderr);
    rmpi_core_finalize();
    rmpi_dpm_finalize();
    rmpi_comm_finalize();
    rmpi_api_state = RMPI_STATE_FINALIZED;
    RMPI_UNLOCK();
}

int rmpi_api_runtime_acquire(int required)
{
    int rc = runtime_start(required);
    if (rc == MPI_SUCCESS) {
        sessions++;
        rmpi_core_async_start();
    }
    return rc;
}

void rmpi_api_runtime_release(void)
{
    if (--sessions == 0 && world_state != RMPI_STATE_INIT)
        runtime_stop();
}

static int do_init(int required, int *provided)
{
    if (world_state != RMPI_STATE_PRE_INIT) {
        fprintf(stderr, "[rmpi] MPI_Init called %s; it may be called once per process.\n",
                world_state == RMPI_STATE_INIT ? "twice" : "after MPI_Finalize");
        return MPI_ERR_OTHER;
    }
    int rc = runtime_start(required);
    if (rc)
        return rc;
    world_state = RMPI_STATE_INIT;
    if (provided)
        *provided = thread_level;
    rc = rmpi_api_dpm_init(core_info.singleton);
    if (rc == MPI_SUCCESS)
        rmpi_core_async_start(); /* last: every layer it progresses is up */
    return rc;
}

int MPI_Init(int *argc, char ***argv) { return do_init(MPI_THREAD_SINGLE, NULL); }

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) { return do_init(required, provided); }

int MPI_Finalize(void)
{
    RMPI_API_INIT_CHECK();
    if (world_state != RMPI_STATE_INIT)
        return rmpi_api_error(NULL, MPI_ERR_OTHER, __func__,
                              "MPI_Init was not called (sessions end with "
                              "MPI_Session_finalize)");
    rmpi_api_attr_finalize(); /* user clean-up hooked on MPI_COMM_SELF runs while MPI still works */
    world_state = RMPI_STATE_FINALIZED;
    if (sessions == 0)
        runtime_stop();
    return MPI_SUCCESS;
}

/* Both ask about the world model (MPI-4.1 11.2.1): sessions do not count. */
int MPI_Initialized(int *flag)
{
    *flag = world_state != RMPI_STATE_PRE_INIT;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
    *flag = world_state == RMPI_STATE_FINALIZED;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
    RMPI_API_INIT_CHECK();
    *provided = thread_level;
    return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
    RMPI_API_INIT_CHECK();
    *flag = pthread_equal(pthread_self(), main_thread);
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    *abi_major = RMPI_ABI_VERSION_MAJOR;
    *abi_minor = RMPI_ABI_VERSION_MINOR;
    return MPI_SUCCESS;
}

int MPI_Abi_get_info(MPI_Info *info)
{
    RMPI_CHECK(info, NULL, MPI_ERR_ARG, "info must not be NULL");
    rmpi_info_t *i = rmpi_info_new();
    char v[8];
    snprintf(v, sizeof v, "%zu", sizeof(MPI_Aint));
    rmpi_info_set(i, "mpi_aint_size", v);
    snprintf(v, sizeof v, "%zu", sizeof(MPI_Count));
    rmpi_info_set(i, "mpi_count_size", v);
    snprintf(v, sizeof v, "%zu", sizeof(MPI_Offset));
    rmpi_info_set(i, "mpi_offset_size", v);
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}

/* RailMPI has no Fortran bindings, but C programs can use its Fortran datatypes: the info
 * describes those (sizes of the default kinds, which sized kinds exist). */
int MPI_Abi_get_fortran_info(MPI_Info *info)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(info, NULL, MPI_ERR_ARG, "info must not be NULL");
    static const struct {
        const char *key;
        MPI_Datatype t;
        int size_key; /* 1: "mpi_<name>_size", 0: "mpi_<name>_supported" */
    } rows[] = {
        {"logical", MPI_LOGICAL, 1},
        {"integer", MPI_INTEGER, 1},
        {"real", MPI_REAL, 1},
        {"double_precision", MPI_DOUBLE_PRECISION, 1},
        {"logical1", MPI_LOGICAL1, 0},
        {"logical2", MPI_LOGICAL2, 0},
        {"logical4", MPI_LOGICAL4, 0},
        {"logical8", MPI_LOGICAL8, 0},
        {"logical16", MPI_LOGICAL16, 0},
        {"integer1", MPI_INTEGER1, 0},
        {"integer2", MPI_INTEGER2, 0},
        {"integer4", MPI_INTEGER4, 0},
        {"integer8", MPI_INTEGER8, 0},
        {"integer16", MPI_INTEGER16, 0},
        {"real2", MPI_REAL2, 0},
        {"real4", MPI_REAL4, 0},
        {"real8", MPI_REAL8, 0},
        {"real16", MPI_REAL16, 0},
        {"complex4", MPI_COMPLEX4, 0},
        {"complex8", MPI_COMPLEX8, 0},
        {"complex16", MPI_COMPLEX16, 0},
        {"complex32", MPI_COMPLEX32, 0},
        {"double_complex", MPI_DOUBLE_COMPLEX, 0},
    };
    rmpi_info_t *i = rmpi_info_new();
    for (size_t k = 0; k < RMPI_ARRAY_LEN(rows); k++) {
        const rmpi_dtype_t *d = rmpi_dtype_get(rows[k].t);
        size_t size = d ? d->size : 0;
        char key[64], v[24];
        snprintf(key, sizeof key, "mpi_%s_%s", rows[k].key, rows[k].size_key ? "size" : "supported");
        if (rows[k].size_key)
            snprintf(v, sizeof v, "%zu", size);
        else
            snprintf(v, sizeof v, "%s", size ? "true" : "false");
        rmpi_info_set(i, key, v);
    }
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "RailMPI %s (MPI %d.%d, standard ABI %d.%d; providers self, shm, tcp%s)", RMPI_VERSION_STRING,
                     MPI_VERSION, MPI_SUBVERSION, RMPI_ABI_VERSION_MAJOR, RMPI_ABI_VERSION_MINOR,
#ifdef RMPI_HAVE_OFI
                     ", ofi"
#else
                     ""
#endif
    );
    *resultlen = n;
    return MPI_SUCCESS;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    RMPI_API_INIT_CHECK();
    int n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", rmpi_topo_hostname());
    *resultlen = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
    return MPI_SUCCESS;
}

double MPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double MPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Abort(errorcode %d) called by rank %d", errorcode, rmpi_core_rank);
    fprintf(stderr, "[rmpi rank %d] %s; ending the job.\n", rmpi_core_rank, msg);
    fflush(stderr);
    rmpi_pmi_abort(errorcode, NULL);
}

/* Profiling control: RailMPI has no profiling layer of its own to switch, and a tool that
 * wraps MPI_Pcontrol (through PMPI) sees the call. Any level is valid (MPI leaves its
 * meaning to the tool). */
int MPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
