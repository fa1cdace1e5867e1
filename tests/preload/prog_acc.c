/*
 * prog_acc.c -- an OpenACC program built by gcc (-fopenacc): it needs
 * libgomp's OpenACC interface (version GOACC_2.0.1), which neither LLVM's
 * libomp nor pagehome's libgomp.so.1 has, so `pagehome run` keeps GNU
 * libgomp for it and says so (check_libs.sh with CHECK_LIBS_KEEPS_GOMP=1).
 * The loop runs on the host.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n = 1 << 20;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b)
        return 2;
    for (int it = 0; it < 4; it++) {
#pragma acc parallel loop copyout(a[0:n], b[0:n])
        for (int i = 0; i < n; i++) {
            a[i] = i + it;
            b[i] = 2.0 * a[i];
        }
    }
    int ok = a[n - 1] == n + 2 && b[n - 1] == 2.0 * (n + 2);
    printf("prog_acc: verification: %s\n", ok ? "ok" : "FAILED");
    free(a);
    free(b);
    return !ok;
}
