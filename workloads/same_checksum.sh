#!/bin/sh
# same_checksum.sh -- laplace (C) and laplace_f (Fortran) compute every
# point with the same expression in the same memory order: the same
# checksum, bit for bit.
#
#   same_checksum.sh LAPLACE LAPLACE_F VARIANT N ITERS
set -u
c_line=$("$1" "$3" "$4" "$5" | grep 'checksum=') || { echo "same_checksum: $1 failed"; exit 1; }
f_line=$("$2" "$3" "$4" "$5" | grep 'checksum=') || { echo "same_checksum: $2 failed"; exit 1; }
echo "$c_line"
echo "$f_line"
c=$(echo "$c_line" | sed 's/.*checksum= *\([^ ]*\).*/\1/')
f=$(echo "$f_line" | sed 's/.*checksum= *\([^ ]*\).*/\1/')
# both are printed with 17 or more significant digits: they read back as
# the same double exactly when the programs computed the same double
if awk -v a="$c" -v b="$f" 'BEGIN { exit !(a + 0 == b + 0) }'; then
    echo "same_checksum: $c == $f: equal"
    exit 0
fi
echo "same_checksum: $c != $f"
exit 1
