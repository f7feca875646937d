/*
 * mtest: the small harness every tests/mpi program links (in the spirit of MPICH's mtest).
 *
 *     int main(int argc, char **argv)
 *     {
 *         mtest_init(&argc, &argv);
 *         ...
 *         MTEST_CHECK(count == 8, "count %d, expected 8", count);
 *         return mtest_finalize();
 *     }
 *
 * MTEST_CHECK records a failure (with rank, file and line) and goes on, so one run reports
 * every mismatch it sees. mtest_finalize gathers the error counts on rank 0 with plain
 * Send/Recv, prints " No Errors" or " Found N errors", calls MPI_Finalize and returns the
 * exit status (non-zero on any error). mtest_init arms a watchdog (alarm, MTEST_TIMEOUT
 * seconds, default 60) so a hang fails fast instead of waiting for ctest's timeout.
 *
 * Buffers carry a pattern that depends on (seed, byte index), so a corrupted, shifted,
 * truncated or wrong (other seed) message is caught; MTEST_GUARD bytes past the end of a
 * receive buffer catch overruns.
 *
 * Thread safety: MTEST_CHECK and the buffer helpers may be called from several threads.
 */
#ifndef MTEST_H
#define MTEST_H

#include <mpi.h>
#include <stddef.h>

extern int mtest_rank, mtest_size;

void mtest_init(int *argc, char ***argv);
/* MPI_Init_thread; records a failure when the level provided is below required. */
void mtest_init_thread(int *argc, char ***argv, int required, int *provided);
int mtest_finalize(void);

void mtest_error(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mtest_error_count(void);

#define MTEST_CHECK(cond, ...)                            \
    do {                                                  \
        if (!(cond))                                      \
            mtest_error(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

/* An MPI call that must succeed: records the error string otherwise. Evaluates to rc. */
#define MTEST_OK(call) mtest_ok_((call), #call, __FILE__, __LINE__)
int mtest_ok_(int rc, const char *what, const char *file, int line);

/* An MPI call that must fail with error class cls (under MPI_ERRORS_RETURN). */
#define MTEST_ERR(call, cls) mtest_err_((call), (cls), #call, #cls, __FILE__, __LINE__)
int mtest_err_(int rc, int cls, const char *what, const char *clsname, const char *file, int line);

/* Switch MPI_COMM_WORLD (and so calls without a valid communicator) to MPI_ERRORS_RETURN. */
void mtest_errors_return(MPI_Comm comm);

/* A communicator error handler for MPI_Comm_create_errhandler that records its calls:
 * how many, the last code and the communicator it was called on. */
extern int mtest_handler_calls, mtest_handler_code;
extern MPI_Comm mtest_handler_comm;
void mtest_recording_handler(MPI_Comm *comm, int *code, ...);

/* ---- buffers ---- */
#define MTEST_GUARD 16

unsigned char mtest_pattern(unsigned seed, size_t i);
void mtest_fill(void *buf, size_t n, unsigned seed);
/* Compare n bytes with the pattern; on a mismatch record one error naming what, the first
 * bad index and the number of bad bytes. Returns the number of bad bytes. */
size_t mtest_check_buf(const void *buf, size_t n, unsigned seed, const char *what);
/* Set/verify MTEST_GUARD guard bytes at buf[n..n+MTEST_GUARD). */
void mtest_guard_set(void *buf, size_t n);
int mtest_guard_check(const void *buf, size_t n, const char *what);
/* A status of a byte message: source, tag and count as expected, else one error naming what. */
int mtest_check_status(const MPI_Status *st, int src, int tag, int count, const char *what);
/* malloc that records an error and aborts on failure. */
void *mtest_malloc(size_t n);

/* Seed of a message: distinct per (source, destination, index) so mix-ups are caught. */
static inline unsigned mtest_seed(int src, int dst, int idx)
{
    return (unsigned)src * 1000003u + (unsigned)dst * 7919u + (unsigned)idx * 131u + 17u;
}

/* MPI_T: initialise the tools interface and open a session with a handle on the counter
 * pvar of that name (not started); errors are recorded. mtest_pvar_close frees both and
 * finalises MPI_T. */
void mtest_pvar_open(const char *name, MPI_T_pvar_session *ses, MPI_T_pvar_handle *h);
void mtest_pvar_close(MPI_T_pvar_session *ses, MPI_T_pvar_handle *h);

/* Sleep this many seconds (fractional) without calling MPI. */
void mtest_sleep(double seconds);
/* Pin this process to the first CPU it may use (call before MPI_Init), so a node has more
 * ranks than CPUs on any machine: the library's oversubscribed choices. 0, or -1 with a
 * message on stderr. */
int mtest_pin_one_cpu(const char *prog);

#endif
