#!/bin/sh
# /init of the NUMA guest initramfs (runs under busybox sh as PID 1).
#
# Mounts the host root read-only over 9p (tag "host"), the control share
# (tag "ctl": command script, config, results) and the writable output share
# (tag "out"), runs /ctl/cmd.sh inside a chroot of the host root, writes its
# exit status to /ctl/status and powers the machine off.

export PATH=/bin

log() {
	echo "numa-guest-init: $*" >/dev/console 2>&1
}

die() {
	log "$*"
	if grep -q ' /ctl ' /proc/mounts 2>/dev/null; then
		echo "$*" >>/ctl/guest-error
		sync
	fi
	poweroff -f
	# poweroff -f should not return; make sure PID 1 never exits normally.
	echo o >/proc/sysrq-trigger
	sleep 1000
}

mount9p() {
	# mount9p TAG DIR OPTIONS
	tries=0
	while ! mount -t 9p -o "trans=virtio,version=9p2000.L,msize=262144,$3" "$1" "$2"; do
		tries=$((tries + 1))
		[ "$tries" -lt 20 ] || return 1
		usleep 100000
	done
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || true

# Modules were decompressed when the initramfs was built; /lib/modules/order
# lists them in load order (dependencies first).
if [ -f /lib/modules/order ]; then
	while read -r ko; do
		[ -n "$ko" ] || continue
		insmod "/lib/modules/$ko" || log "insmod $ko failed"
	done </lib/modules/order
fi

mkdir -p /ctl /newroot
mount9p ctl /ctl cache=none || die "cannot mount control share"
mount9p host /newroot ro,cache=loose || die "cannot mount host root"

KEEP_BALANCING=0
MERGE_OUTPUT=0
THP_ENABLED=
GUEST_SHELL=/bin/sh
# shellcheck disable=SC1091
[ -f /ctl/config ] && . /ctl/config

R=/newroot
for d in proc sys dev tmp run mnt; do
	[ -d "$R/$d" ] || die "/$d does not exist in the host root"
done
mount -t proc proc "$R/proc" || die "mount /proc failed"
mount -t sysfs sysfs "$R/sys" || die "mount /sys failed"
mount -t devtmpfs devtmpfs "$R/dev" || die "mount /dev failed"
mkdir -p "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts" || true
mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm" || true
mount -t tmpfs -o mode=1777 tmpfs "$R/tmp" || die "mount /tmp failed"
mount -t tmpfs -o mode=0755 tmpfs "$R/run" || die "mount /run failed"
# The host root is read-only, so /mnt/out cannot be created on it: put a
# small tmpfs on /mnt first and mount the output share below it.
mount -t tmpfs -o mode=0755,size=1m tmpfs "$R/mnt" || die "mount /mnt failed"
mkdir -p "$R/mnt/out"
mount9p out "$R/mnt/out" cache=mmap || die "cannot mount output share"

mkdir -p "$R/run/pagehome-guest"
cp /ctl/cmd.sh "$R/run/pagehome-guest/cmd.sh" || die "no command script"

ifconfig lo 127.0.0.1 up 2>/dev/null || true
hostname pagehome-guest 2>/dev/null || true

if [ "$KEEP_BALANCING" != 1 ] && [ -w /proc/sys/kernel/numa_balancing ]; then
	echo 0 >/proc/sys/kernel/numa_balancing || die "cannot disable NUMA balancing"
fi

# The kernel disables THP by default below 512 MiB of RAM; the host passes
# the mode to use so that small and large guests behave alike.
THP_SYS=/sys/kernel/mm/transparent_hugepage
if [ -n "$THP_ENABLED" ] && [ -w "$THP_SYS/enabled" ]; then
	echo "$THP_ENABLED" >"$THP_SYS/enabled" || die "cannot set THP to $THP_ENABLED"
	# Kernel default for defrag (also cleared on small machines).
	echo madvise >"$THP_SYS/defrag" || true
fi

# Test hook of tests/numa-guest/run (PAGEHOME_GUEST_TEST_HUNG_BOOTS): the
# kernel passes pagehome_test_hang=1 from its command line; stop here, as a
# hung boot would, before the command starts.
if [ "${pagehome_test_hang:-}" = 1 ]; then
	log "test hook: this boot hangs before the command"
	while :; do sleep 1000; done
fi

: >/ctl/started
if [ "$MERGE_OUTPUT" = 1 ]; then
	chroot "$R" "$GUEST_SHELL" /run/pagehome-guest/cmd.sh </dev/null >/ctl/stdout 2>&1
	status=$?
else
	chroot "$R" "$GUEST_SHELL" /run/pagehome-guest/cmd.sh </dev/null >/ctl/stdout 2>/ctl/stderr
	status=$?
fi
echo "$status" >/ctl/status.tmp
mv /ctl/status.tmp /ctl/status
sync
poweroff -f
echo o >/proc/sysrq-trigger
sleep 1000
