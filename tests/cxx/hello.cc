// A C++ program that includes mpi.h (C linkage, standard ABI handles usable in C++
// containers and templates), built with build/bin/mpicxx: point-to-point, a collective
// on a std::vector, a derived datatype of a struct, and an error class under
// MPI_ERRORS_RETURN. Prints "cxx ok" on rank 0.
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <numeric>
#include <vector>

struct particle {
    double x, y;
    int id;
};

template <typename T> static MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

template <typename T> static T sum_all(T v, MPI_Comm comm)
{
    T out{};
    MPI_Allreduce(&v, &out, 1, mpi_type<T>(), MPI_SUM, comm);
    return out;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    std::vector<int> v(1000);
    std::iota(v.begin(), v.end(), rank);
    std::vector<int> r(v.size());
    MPI_Allreduce(v.data(), r.data(), (int)v.size(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < r.size(); i++)
        bad += r[i] != (int)(size * i) + size * (size - 1) / 2;
    bad += sum_all(1.5, MPI_COMM_WORLD) != 1.5 * size;

    particle p{1.0 * rank, 2.0 * rank, rank}, q{};
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(particle, x), offsetof(particle, y), offsetof(particle, id)};
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_INT}, pt;
    MPI_Type_create_struct(3, bl, disp, types, &pt);
    MPI_Type_commit(&pt);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Sendrecv(&p, 1, pt, to, 7, &q, 1, pt, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    bad += q.id != from || q.x != 1.0 * from || q.y != 2.0 * from;
    MPI_Type_free(&pt);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(&p, 1, MPI_INT, size, 0, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    bad += cls != MPI_ERR_RANK;

    bad = sum_all(bad, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf(bad ? "cxx FAILED: %d errors\n" : "cxx ok\n", bad);
    MPI_Finalize();
    return bad != 0;
}
