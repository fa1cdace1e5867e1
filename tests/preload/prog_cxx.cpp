/*
 * prog_cxx.cpp -- an unmodified C++ OpenMP program in the first-touch trap:
 * two grids held in std::vector<double> (their storage comes from operator
 * new, which calls malloc: under `pagehome run` they are hot areas), filled
 * by the vectors' constructors on the master thread (value-initialised:
 * every page lands on the master's node), then a Jacobi sweep per time step
 * with `#pragma omp parallel for schedule(static)` over the rows, inside a
 * small class.  It knows nothing of pagehome.  At the end it prints its
 * checksum to stdout and the share of the grids' pages on their owner's
 * node to stderr (prog_locality.c).
 *
 *   prog_cxx [ROWS [STEPS]]    defaults 512 rows of 1024 doubles, 8 steps
 */
#include "prog_locality.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

constexpr int kCols = 1024;

class Heat {
public:
    explicit Heat(int rows) : rows_(rows), cur_(size_t(rows) * kCols), next_(cur_.size())
    {
        for (size_t k = 0; k < cur_.size(); k++)
            cur_[k] = double((k * 7) % 101);
    }

    void step()
    {
        const double *x = cur_.data();
        double *y = next_.data();
        const int rows = rows_;
#pragma omp parallel for schedule(static)
        for (int i = 1; i < rows - 1; i++) {
            prog_note_thread(omp_get_thread_num());
            for (int j = 1; j < kCols - 1; j++) {
                size_t k = size_t(i) * kCols + size_t(j);
                y[k] = 0.25 * (x[k - kCols] + x[k + kCols] + x[k - 1] + x[k + 1]);
            }
        }
        std::swap(cur_, next_);
    }

    double checksum() const
    {
        double sum = 0;
        for (size_t k = 0; k < cur_.size(); k++)
            sum += cur_[k] * double(k % 7 + 1);
        return sum;
    }

    void tally(int nthreads) const
    {
        prog_tally(cur_.data(), kCols * sizeof(double), rows_, 1, rows_ - 2, nthreads);
        prog_tally(next_.data(), kCols * sizeof(double), rows_, 1, rows_ - 2, nthreads);
    }

private:
    int rows_;
    std::vector<double> cur_, next_;
};

} // namespace

int main(int argc, char **argv)
{
    int rows = 512, steps = 8;
    if (argc > 3 || (argc > 1 && prog_parse_int(argv[1], 8, 1 << 20, &rows) != 0) ||
        (argc > 2 && prog_parse_int(argv[2], 1, 1000000, &steps) != 0)) {
        std::fprintf(stderr, "usage: prog_cxx [ROWS>=8 [STEPS>=1]]\n");
        return 2;
    }
    Heat heat(rows);
    for (int s = 0; s < steps; s++)
        heat.step();
    std::printf("prog_cxx: checksum %.17g\n", heat.checksum());
    int nthreads = omp_get_max_threads();
    heat.tally(nthreads);
    prog_report("prog_cxx", nthreads);
    return 0;
}
