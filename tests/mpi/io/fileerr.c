/* MPI-IO errors: the classes of bad amodes, missing and existing files, directories,
 * accesses against the amode, bad handles, data representations and positions; the
 * default file error handler (MPI_ERRORS_RETURN, kept on MPI_FILE_NULL) and user file
 * error handlers. Every rank of a collective open sees the same class. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static int calls, last_code;
static MPI_File last_file;

static void on_error(MPI_File *fh, int *code, ...)
{
    calls++;
    last_code = *code;
    last_file = *fh;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (mtest_rank == 0) {
        strcpy(dir, "/tmp/rmpi-ioerr-XXXXXX");
        MTEST_CHECK(mkdtemp(dir), "mkdtemp failed");
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    char name[128], missing[128];
    snprintf(name, sizeof name, "%s/f", dir);
    snprintf(missing, sizeof missing, "%s/missing", dir);
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh;

    MTEST_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "the default file error handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    /* amode */
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
              MPI_ERR_AMODE);
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
              MPI_ERR_AMODE);
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | 0x4000, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);

    /* missing, existing, a directory */
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    MTEST_CHECK(fh == MPI_FILE_NULL, "a failed open set the handle");
    MTEST_ERR(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    MTEST_OK(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MTEST_OK(MPI_File_close(&fh));
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL,
                            &fh),
              MPI_ERR_FILE_EXISTS);
    MTEST_ERR(MPI_File_open(MPI_COMM_WORLD, dir, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);

    /* accesses against the amode */
    MTEST_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int x = 1;
    MTEST_ERR(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    MTEST_ERR(MPI_File_write_all(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    MTEST_ERR(MPI_File_set_size(fh, 10), MPI_ERR_READ_ONLY);
    MTEST_ERR(MPI_File_read_at(fh, -1, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    MTEST_ERR(MPI_File_read_at(fh, 0, &x, -1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MTEST_ERR(MPI_File_read_at(fh, 0, &x, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    MTEST_ERR(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    MTEST_ERR(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    MTEST_ERR(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    MTEST_ERR(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    /* a registered datarep without conversion functions is the native layout */
    MTEST_OK(MPI_Register_datarep("rmpi-test-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL));
    MTEST_ERR(MPI_Register_datarep("rmpi-test-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL),
              MPI_ERR_DUP_DATAREP);
    MTEST_ERR(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL),
              MPI_ERR_DUP_DATAREP);
    MTEST_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "rmpi-test-rep", MPI_INFO_NULL));
    MPI_Offset vd;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MTEST_OK(MPI_File_get_view(fh, &vd, &et, &ft, rep));
    MTEST_CHECK(!strcmp(rep, "rmpi-test-rep"), "get_view: datarep %s", rep);
    MPI_Status st;
    MTEST_OK(MPI_File_read_at(fh, 0, &x, 1, MPI_INT, &st)); /* an empty file: nothing read */
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    MTEST_CHECK(n == 0, "read of an empty file: count %d", n);

    /* the file's handler: MPI_ERRORS_RETURN from MPI_FILE_NULL, then a user one */
    MTEST_OK(MPI_File_get_errhandler(fh, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "a new file's error handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MTEST_OK(MPI_File_create_errhandler(on_error, &eh));
    MTEST_OK(MPI_File_set_errhandler(fh, eh));
    MTEST_OK(MPI_Errhandler_free(&eh));
    MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    MTEST_CHECK(calls == 1 && last_code == MPI_ERR_READ_ONLY && last_file == fh, "user file handler: %d calls, code %d",
                calls, last_code);
    MTEST_OK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    MTEST_CHECK(calls == 2 && last_code == MPI_ERR_OTHER, "MPI_File_call_errhandler: %d calls, code %d", calls,
                last_code);
    MTEST_OK(MPI_File_close(&fh));

    /* the read side of a write-only file; sequential files have no individual pointer */
    MTEST_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    MTEST_ERR(MPI_File_read_shared(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    MTEST_ERR(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_UNSUPPORTED_OPERATION);
    MTEST_OK(MPI_File_write_ordered(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_File_close(&fh));

    /* bad handles */
    int junk[8] = {0};
    MPI_Offset size;
    MTEST_ERR(MPI_File_get_size(MPI_FILE_NULL, &size), MPI_ERR_FILE);
    MTEST_ERR(MPI_File_get_size((MPI_File)(void *)junk, &size), MPI_ERR_FILE);
    MTEST_ERR(MPI_File_close(&fh), MPI_ERR_FILE);
    MTEST_ERR(MPI_File_read(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_FILE);

    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0) {
        MTEST_OK(MPI_File_delete(name, MPI_INFO_NULL));
        MTEST_CHECK(rmdir(dir) == 0, "%s is not empty at the end", dir);
    }
    return mtest_finalize();
}
