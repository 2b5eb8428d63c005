#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: every NDK_ADAPTER_INFO field that has a counterpart in
# `ibv_devinfo -v` agrees with it (Documentation/ndk-mapping.md, "Field
# sources").  The kernel side comes from the adapter-info scenario of
# ndk_test.ko (its info.<field>=<value> lines).  Prints one table row per
# field; fields without a counterpart are listed as such and only checked
# for what ndk.ko promises about them.
#   adapter-info-devinfo.sh RUN_KTEST [DEVICE]
set -u
run_ktest=$1
dev=${2:-rxe0}
fail() { echo "FAIL: $*"; exit 1; }

ndk_out=$("$run_ktest" adapter-info) || { echo "$ndk_out"; fail "adapter-info scenario failed"; }
devinfo=$(ibv_devinfo -v -d "$dev") || fail "ibv_devinfo -v -d $dev failed"

# info.<field> of the scenario's log.
ndk() {
	local v
	v=$(sed -n "s/^info\.$1=//p" <<< "$ndk_out" | tail -n 1)
	[[ -n "$v" ]] || fail "no info.$1 in the adapter-info output"
	echo "$v"
}

# The value of "<key>:" in ibv_devinfo -v (first match, device before port).
ibv() {
	awk -v k="$1:" '{ sub(/^[ \t]+/, "") }
		index($0, k) == 1 { v = substr($0, length(k) + 1); gsub(/^[ \t]+|[ \t]+$/, "", v); print v; exit }' \
		<<< "$devinfo"
}

# Unsigned 64-bit values compare equal in bash arithmetic (both wrap the
# same way), whether written in decimal or hex.
same() { (($1 == $2)); }

mismatches=0
row() { printf '%-26s %-22s %-42s %s\n' "$@"; }
check() { # field ndk-value ibv-label ibv-value ok?
	local verdict=ok
	if ! eval "$5"; then
		verdict=MISMATCH
		mismatches=$((mismatches + 1))
	fi
	if [[ "$4" == - ]]; then
		row "$1" "$2" "$3" "$verdict"
	else
		row "$1" "$2" "$3=$4" "$verdict"
	fi
}

row "NDK_ADAPTER_INFO field" "ndk.ko" "ibv_devinfo -v" "verdict"
row "----------------------" "------" "--------------" "-------"

v=$(ndk vendor_id) i=$(ibv vendor_id)
check vendor_id "$v" vendor_id "$i" "same $v $i"
v=$(ndk device_id) i=$(ibv vendor_part_id)
check device_id "$v" vendor_part_id "$i" "same $v $i"
# One fast-register MR carries an NdkRegisterMr registration: the limit is
# (page list - 1) pages, capped by max_mr_size (Documentation/registration.md).
# ibv_devinfo does not show the page list length; FRMRPageCount is it on
# rxe (512, under ndk.ko's cap of 512).
v=$(ndk max_registration_size) i=$(ibv max_mr_size) f=$(ndk frmr_page_count)
pg=$(getconf PAGESIZE)
want=$(((f - 1) * pg))
# bash arithmetic is signed: 2^64-1 reads as -1, i.e. no smaller cap.
((i >= 0 && i < want)) && want=$i
check max_registration_size "$v" "min(max_mr_size,(frmr-1)*PAGE)" "$want" "same $v $want"

# uverbs reports max_sge = min(max_send_sge, max_recv_sge).
send=$(ndk max_initiator_request_sge) recv=$(ndk max_receive_request_sge) i=$(ibv max_sge)
check max_initiator_request_sge "$send" "max_sge(>=)" "$i" "[ $send -ge $i ]"
check max_receive_request_sge "$recv" "max_sge(>=)" "$i" "[ $recv -ge $i ]"
check "min(initiator,receive)" "$((send < recv ? send : recv))" max_sge "$i" \
	"same $((send < recv ? send : recv)) $i"
v=$(ndk max_read_request_sge) i=$(ibv max_sge_rd)
check max_read_request_sge "$v" max_sge_rd "$i" "same $v $i"

# MaxTransferLength = min(port max_msg_sz, 2^32 - 1).
v=$(ndk max_transfer_length) i=$(ibv max_msg_sz)
want=$((i > 0xffffffff ? 0xffffffff : i))
check max_transfer_length "$v" "port max_msg_sz" "$i" "same $v $want"

v=$(ndk max_inbound_read_limit) i=$(ibv max_qp_rd_atom)
check max_inbound_read_limit "$v" max_qp_rd_atom "$i" "same $v $i"
v=$(ndk max_outbound_read_limit) i=$(ibv max_qp_init_rd_atom)
check max_outbound_read_limit "$v" max_qp_init_rd_atom "$i" "same $v $i"
# Queue depths: at most 2^20, so that their slot rings, rounded up to
# powers of two, fit the wr_id's slot field below the close's marker
# (kmod/ndk_qp.h, NDK_QP_DEPTH_MAX).
i=$(ibv max_qp_wr)
want=$((i > 0x100000 ? 0x100000 : i))
v=$(ndk max_receive_queue_depth)
check max_receive_queue_depth "$v" max_qp_wr "$i" "same $v $want"
v=$(ndk max_initiator_queue_depth)
check max_initiator_queue_depth "$v" max_qp_wr "$i" "same $v $want"
# One entry of every ib_cq is the close's drain marker's (NDK_CQ_SPARE).
v=$(ndk max_cq_depth) i=$(ibv max_cqe)
check max_cq_depth "$v" "max_cqe-1" "$((i - 1))" "same $v $((i - 1))"

# FRMRPageCount = min(max_fast_reg_page_list_len, 512), >= 16.
v=$(ndk frmr_page_count) i=$(ibv max_fast_reg_page_list_len)
if [[ -n "$i" ]]; then
	want=$((i > 512 ? 512 : i))
	check frmr_page_count "$v" max_fast_reg_page_list_len "$i" "same $v $want"
else
	check frmr_page_count "$v" "(not shown; 16..512)" "-" "[ $v -ge 16 ] && [ $v -le 512 ]"
fi

# RdmaTechnology from transport, link layer and the GID types.
transport=$(ibv transport) link=$(ibv link_layer)
if [[ "$transport" == iWARP* ]]; then
	want=1
elif [[ "$link" == InfiniBand ]]; then
	want=2
elif grep -q 'RoCE v2' <<< "$devinfo"; then
	want=4
else
	want=3
fi
v=$(ndk rdma_technology)
check rdma_technology "$v" "transport/link_layer/GID" "${transport%% *}/$link/$want" "same $v $want"

# adapter_flags bits that follow from the transport.
flags=$(ndk adapter_flags)
if ((want == 1)); then
	check "adapter_flags&0x2" "$((flags & 2))" "not iWARP" "no" "same $((flags & 2)) 0"
else
	check "adapter_flags&0x2" "$((flags & 2))" "not iWARP" "yes" "same $((flags & 2)) 2"
fi

echo
echo "No counterpart in ibv_devinfo (checked against ndk.ko's own rules):"
v=$(ndk max_window_size) f=$(ndk frmr_page_count)
check max_window_size "$v" "(frmr_page_count-1)*PAGE_SIZE" "$(((f - 1) * pg))" "same $v $(((f - 1) * pg))"
v=$(ndk max_srq_depth) i=$(ibv max_srq_wr)
check max_srq_depth "$v" "0 (no SRQ object); max_srq_wr" "$i" "same $v 0"
v=$(ndk max_inline_data_size)
check max_inline_data_size "$v" "(probed with a QP; > 0)" "-" "[ $v -gt 0 ]"
for f in version large_request_threshold max_caller_data max_callee_data adapter_flags; do
	row "$f" "$(ndk $f)" "(none: ndk.ko / rdma_cm constant)" "-"
done

echo
((mismatches == 0)) || fail "$mismatches field(s) disagree with ibv_devinfo"
echo "all fields with a counterpart agree with ibv_devinfo -v -d $dev"
