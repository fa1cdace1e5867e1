/*
 * prog_robust_iso.c -- the part of prog_robust built as strict ISO C
 * (-std=c11, no feature macros): there glibc's <signal.h> turns signal()
 * into __sysv_signal, the path a program written to the C standard takes.
 */
#include <signal.h>

typedef void (*iso_handler)(int);

iso_handler prog_robust_iso_signal(int sig, iso_handler h)
{
    return signal(sig, h);
}
