#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# B1 (make bench): ndkblk against nvme-rdma on the same rxe link, in the
# test-bed guest.  Both serve 64 MiB of RAM over a loopback connection on
# rxe0: ndkblk_target.ko (vmalloc) to ndkblk.ko, nvmet-rdma (a brd RAM
# disk) to nvme-rdma, each with one I/O queue of 32 entries (ndkblk
# nr_queues=1; nvme connect --nr-io-queues=1 --queue-size=32).  Each fio
# job runs on one device, then on the other, in rounds (interleaved; the
# order alternates from round to round, so neither device always runs
# first): 7 rounds of 4 s for the goals' jobs, whose ratio compares the
# medians (one 3 x 4 s run moved rows near their goal by 0.1-0.3), and 3
# for the variants given for reference.
#
#   ndkblk-bench.sh full|smoke OUT NDKBLK_KO NDKBLK_TARGET_KO
#
# OUT/b1.txt gets scripts/bench-report.py's sample lines, per job
# (measure B1-<rw>-qd<depth>, parameter the block size):
#   S B1-<job> <dev> <bs> <round> <runtime ns> <I/Os>       (ns per I/O)
#   S B1-p99-<job> <dev> <bs> <round> <p99 ns> 1            (completion p99)
#   S B1-cpu-<job> <dev> <bs> <round> <busy ns> <I/Os>      (all CPUs)
# with <dev> ndkblk or nvme, and "ok b1" at the end.  A variant's runs
# are interleaved with nvme runs of their own (<dev> nvme-<variant>), so
# each ratio compares runs of the same minutes.  The 4 KiB write
# jobs run once more with ndkblk loaded with inline_max=0 (<dev>
# ndkblk-fr): every write fast-registered and RDMA-read by the target;
# three jobs run again in window mode (<dev> ndkblk-mw); the 4 KiB random
# jobs at depth 1 (with the goals' rounds) and the writes at depth 32 run
# again with both ends loaded with direct_notify=0 (<dev> ndkblk-wq): CQ
# notifications from ndk.ko's work item instead of the completion
# handler, a same-boot A/B of that hop.  Exit 0 when every job ran on
# both.
set -u
mode=$1 out=$2 ini=$3 tgt=$4
ip=10.99.0.1
nqn=nqn.2026-11.org.ndk-linux:b1
hostnqn=nqn.2026-11.org.ndk-linux:b1-host
cfs=/sys/kernel/config/nvmet
res=$out/b1.txt
case $mode in
full) goal_rounds=7 ref_rounds=3 secs=4 fill=64 ;;
*) goal_rounds=1 ref_rounds=1 secs=1 fill=8 ;;
esac
: > "$res"
err() { echo "E b1 $*" >> "$res"; echo "b1: $*"; cleanup; exit 1; }

cleanup() {
	nvme disconnect -n "$nqn" > /dev/null 2>&1
	rm -f "$cfs/ports/1/subsystems/$nqn" 2> /dev/null
	rmdir "$cfs/ports/1" 2> /dev/null
	echo 0 > "$cfs/subsystems/$nqn/namespaces/1/enable" 2> /dev/null
	rmdir "$cfs/subsystems/$nqn/namespaces/1" "$cfs/subsystems/$nqn" 2> /dev/null
	rmmod nvme_rdma nvmet_rdma nvmet nvme_fabrics brd 2> /dev/null
	rmmod ndkblk ndkblk_target 2> /dev/null
}

# --- ndkblk ---
insmod "$tgt" addr=$ip size_mb=64 || err "insmod ndkblk_target failed"
insmod "$ini" target=$ip nr_queues=1 || err "insmod ndkblk failed"

# --- nvme-rdma to nvmet-rdma on a 64 MiB RAM disk ---
modprobe brd rd_nr=1 rd_size=65536 max_part=0 || err "modprobe brd failed"
modprobe nvmet-rdma && modprobe nvme-rdma || err "modprobe nvmet-rdma/nvme-rdma failed"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
mkdir "$cfs/subsystems/$nqn" || err "nvmet configfs missing"
echo 1 > "$cfs/subsystems/$nqn/attr_allow_any_host"
mkdir "$cfs/subsystems/$nqn/namespaces/1"
echo -n /dev/ram0 > "$cfs/subsystems/$nqn/namespaces/1/device_path"
echo 1 > "$cfs/subsystems/$nqn/namespaces/1/enable" || err "nvmet namespace not enabled"
mkdir "$cfs/ports/1"
echo rdma > "$cfs/ports/1/addr_trtype"
echo ipv4 > "$cfs/ports/1/addr_adrfam"
echo "$ip" > "$cfs/ports/1/addr_traddr"
echo 4420 > "$cfs/ports/1/addr_trsvcid"
ln -s "$cfs/subsystems/$nqn" "$cfs/ports/1/subsystems/$nqn" || err "nvmet port not bound"
nvme connect -t rdma -a "$ip" -s 4420 -n "$nqn" --hostnqn="$hostnqn" \
	--nr-io-queues=1 --queue-size=32 > /dev/null || err "nvme connect failed"
# The guest has no other NVMe device: the first namespace is ours.
nvmedev=""
for _ in $(seq 100); do
	for d in /dev/nvme[0-9]*n1; do
		[[ -b $d ]] && nvmedev=$d && break
	done
	[[ -n $nvmedev ]] && break
	sleep 0.1
done
[[ -n $nvmedev ]] || err "no namespace device after nvme connect"
echo "I b1-nvme $nvmedev, 1 I/O queue of 32"
[[ -b /dev/ndkblk0 ]] || err "no /dev/ndkblk0"
# Fill both, so that reads read data (the smoke run only their start).
for d in /dev/ndkblk0 "$nvmedev"; do
	dd if=/dev/urandom of="$d" bs=1M count=$fill oflag=direct status=none ||
		err "filling $d failed"
done

busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
tick_ns=$((1000000000 / $(getconf CLK_TCK)))

# job NAME RW BS DEPTH: one fio run per device (tags) per round, the
# order reversed in odd rounds.
tags="ndkblk nvme" rounds=$goal_rounds
job() {
	local name=$1 rw=$2 bs=$3 qd=$4 r dev tag order b0 b1 json
	for ((r = 0; r < rounds; r++)); do
		order=$tags
		((r % 2)) && order="${tags#* } ${tags%% *}"
		for tag in $order; do
			dev=/dev/ndkblk0
			[[ $tag == nvme* ]] && dev=$nvmedev
			b0=$(busy)
			json=$(fio --name=b1 --filename="$dev" --direct=1 --rw="$rw" --bs="$bs" \
				--iodepth="$qd" --ioengine=libaio --time_based --runtime="$secs" \
				--ramp_time=0 --size=64m --output-format=json 2> /dev/null) ||
				err "fio $name on $dev failed"
			b1=$(busy)
			python3 -c '
import json, sys
j = json.loads(sys.stdin.read())["jobs"][0]
d = j["read"] if j["read"]["total_ios"] else j["write"]
ios = d["total_ios"]
rt = max(j["read"]["runtime"], j["write"]["runtime"]) * 1000000
p99 = int(d["clat_ns"]["percentile"]["99.000000"])
name, dev, bs, r, busy = sys.argv[1:]
if ios <= 0:
    print("E b1 %s %s: no I/O" % (name, dev))
else:
    print("S B1-%s %s %s %s %d %d" % (name, dev, bs, r, rt, ios))
    print("S B1-p99-%s %s %s %s %d 1" % (name, dev, bs, r, p99))
    print("S B1-cpu-%s %s %s %s %d %d" % (name, dev, bs, r, int(busy), ios))
' "$name" "$tag" "$(numfmt --from=iec "${bs^^}")" "$r" "$(((b1 - b0) * tick_ns))" \
				<<< "$json" >> "$res" || err "fio $name on $dev: no result"
		done
	done
	echo "b1: $name done"
}

job randread-qd1 randread 4k 1
job randwrite-qd1 randwrite 4k 1
job randread-qd32 randread 4k 32
job randwrite-qd32 randwrite 4k 32
job read-qd16 read 64k 16
job write-qd16 write 64k 16
job read-qd4 read 1m 4
job write-qd4 write 1m 4
# Small writes through the fast-register path too (inline_max=0).
rmmod ndkblk || err "rmmod ndkblk failed"
insmod "$ini" target=$ip nr_queues=1 inline_max=0 || err "insmod ndkblk inline_max=0 failed"
for _ in $(seq 50); do [[ -b /dev/ndkblk0 ]] && break; sleep 0.1; done
tags="ndkblk-fr nvme-fr" rounds=$ref_rounds
job randwrite-qd1 randwrite 4k 1
job randwrite-qd32 randwrite 4k 32
# The window-pool variant (mode=window): copies through a registered
# pool, a window bound per I/O.
rmmod ndkblk || err "rmmod ndkblk failed"
insmod "$ini" target=$ip nr_queues=1 mode=window || err "insmod ndkblk mode=window failed"
for _ in $(seq 50); do [[ -b /dev/ndkblk0 ]] && break; sleep 0.1; done
tags="ndkblk-mw nvme-mw"
job randread-qd1 randread 4k 1
job read-qd16 read 64k 16
job write-qd16 write 64k 16
# CQ notifications from ndk.ko's work item on both ends (direct_notify=0,
# read when the CQs are created: both modules again, the namespace
# filled again).
rmmod ndkblk ndkblk_target || err "rmmod ndkblk ndkblk_target failed"
insmod "$tgt" addr=$ip size_mb=64 direct_notify=0 || err "insmod ndkblk_target direct_notify=0 failed"
insmod "$ini" target=$ip nr_queues=1 direct_notify=0 || err "insmod ndkblk direct_notify=0 failed"
for _ in $(seq 50); do [[ -b /dev/ndkblk0 ]] && break; sleep 0.1; done
dd if=/dev/urandom of=/dev/ndkblk0 bs=1M count=$fill oflag=direct status=none ||
	err "filling /dev/ndkblk0 failed"
tags="ndkblk-wq nvme-wq" rounds=$goal_rounds
job randread-qd1 randread 4k 1
job randwrite-qd1 randwrite 4k 1
rounds=$ref_rounds
job randwrite-qd32 randwrite 4k 32
cleanup
grep -q '^E ' "$res" && exit 1
echo "ok b1" >> "$res"
