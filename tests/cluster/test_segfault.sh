#!/usr/bin/env bash
# test_segfault.sh PROG_DIE -- after ph_cluster_init, a real segfault at a
# non-shared address still kills the process with SIGSEGV, with either
# fault mechanism, and so does an access to freed shared memory.  Runs
# one rank as an MPI singleton (no launcher), so the shell sees the
# signal itself.
set -u
prog=$1
fail=0
for mech in auto sigsegv; do
    for mode in segv freed; do
        out=$(PAGEHOME_CLUSTER_FAULT=$mech timeout -k 5 120 "$prog" "$mode" 2>&1)
        rc=$?
        if [ $rc -eq 139 ]; then
            echo "ok: $mode with cluster_fault=$mech died of SIGSEGV"
        elif [ $rc -ne 0 ] && printf '%s' "$out" | grep -q 'AddressSanitizer: SEGV'; then
            # a sanitized build: AddressSanitizer reports the SIGSEGV and aborts
            echo "ok: $mode with cluster_fault=$mech: AddressSanitizer caught the SIGSEGV"
        else
            echo "FAIL: $mode with cluster_fault=$mech: exit $rc (want 139 = SIGSEGV)"
            fail=1
        fi
    done
done
exit $fail
