/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux tracepoints (TRACE_SYSTEM ndk): Documentation/tracing.md.
 *
 * Objects are printed as hashed pointers (%p), which stay the same for
 * one object while it lives, so one registration can be followed from
 * ndk_mr_register to ndk_mr_deregister; statuses are NTSTATUS values.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ndk

#if !defined(NDK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define NDK_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(ndk_mr_register,
	    TP_PROTO(const void *mr, u64 address, u64 length, u32 flags,
		     u32 key, s32 status),
	    TP_ARGS(mr, address, length, flags, key, status),
	    TP_STRUCT__entry(__field(const void *, mr)
			     __field(u64, address)
			     __field(u64, length)
			     __field(u32, flags)
			     __field(u32, key)
			     __field(s32, status)),
	    TP_fast_assign(__entry->mr = mr;
			   __entry->address = address;
			   __entry->length = length;
			   __entry->flags = flags;
			   __entry->key = key;
			   __entry->status = status;),
	    TP_printk("mr=%p address=0x%llx length=%llu flags=0x%x key=0x%x status=0x%08x",
		      __entry->mr, __entry->address, __entry->length,
		      __entry->flags, __entry->key, __entry->status)
);

TRACE_EVENT(ndk_mr_deregister,
	    TP_PROTO(const void *mr, u64 address, u64 length, s32 status),
	    TP_ARGS(mr, address, length, status),
	    TP_STRUCT__entry(__field(const void *, mr)
			     __field(u64, address)
			     __field(u64, length)
			     __field(s32, status)),
	    TP_fast_assign(__entry->mr = mr;
			   __entry->address = address;
			   __entry->length = length;
			   __entry->status = status;),
	    TP_printk("mr=%p address=0x%llx length=%llu status=0x%08x",
		      __entry->mr, __entry->address, __entry->length,
		      __entry->status)
);

DECLARE_EVENT_CLASS(ndk_post_class,
		    TP_PROTO(const void *qp, const void *obj, u64 address,
			     u64 length, u32 flags, s32 status),
		    TP_ARGS(qp, obj, address, length, flags, status),
		    TP_STRUCT__entry(__field(const void *, qp)
				     __field(const void *, obj)
				     __field(u64, address)
				     __field(u64, length)
				     __field(u32, flags)
				     __field(s32, status)),
		    TP_fast_assign(__entry->qp = qp;
				   __entry->obj = obj;
				   __entry->address = address;
				   __entry->length = length;
				   __entry->flags = flags;
				   __entry->status = status;),
		    TP_printk("qp=%p obj=%p address=0x%llx length=%llu flags=0x%x status=0x%08x",
			      __entry->qp, __entry->obj, __entry->address,
			      __entry->length, __entry->flags, __entry->status)
);

DEFINE_EVENT(ndk_post_class, ndk_fast_register,
	     TP_PROTO(const void *qp, const void *obj, u64 address, u64 length,
		      u32 flags, s32 status),
	     TP_ARGS(qp, obj, address, length, flags, status));

DEFINE_EVENT(ndk_post_class, ndk_bind,
	     TP_PROTO(const void *qp, const void *obj, u64 address, u64 length,
		      u32 flags, s32 status),
	     TP_ARGS(qp, obj, address, length, flags, status));

DEFINE_EVENT(ndk_post_class, ndk_invalidate,
	     TP_PROTO(const void *qp, const void *obj, u64 address, u64 length,
		      u32 flags, s32 status),
	     TP_ARGS(qp, obj, address, length, flags, status));

TRACE_EVENT(ndk_completion_error,
	    TP_PROTO(const void *qp, u32 type, u32 bytes, s32 status,
		     u32 vendor_err),
	    TP_ARGS(qp, type, bytes, status, vendor_err),
	    TP_STRUCT__entry(__field(const void *, qp)
			     __field(u32, type)
			     __field(u32, bytes)
			     __field(s32, status)
			     __field(u32, vendor_err)),
	    TP_fast_assign(__entry->qp = qp;
			   __entry->type = type;
			   __entry->bytes = bytes;
			   __entry->status = status;
			   __entry->vendor_err = vendor_err;),
	    TP_printk("qp=%p type=0x%x bytes=%u status=0x%08x vendor_err=0x%x",
		      __entry->qp, __entry->type, __entry->bytes,
		      __entry->status, __entry->vendor_err)
);

TRACE_EVENT(ndk_mem_invalidated,
	    TP_PROTO(u32 file_id, pid_t tgid, u32 handle, u64 address,
		     u64 length),
	    TP_ARGS(file_id, tgid, handle, address, length),
	    TP_STRUCT__entry(__field(u32, file_id)
			     __field(pid_t, tgid)
			     __field(u32, handle)
			     __field(u64, address)
			     __field(u64, length)),
	    TP_fast_assign(__entry->file_id = file_id;
			   __entry->tgid = tgid;
			   __entry->handle = handle;
			   __entry->address = address;
			   __entry->length = length;),
	    TP_printk("file=%u pid=%d handle=%u address=0x%llx length=%llu",
		      __entry->file_id, __entry->tgid, __entry->handle,
		      __entry->address, __entry->length)
);

TRACE_EVENT(ndk_device_remove,
	    TP_PROTO(u32 id, const char *name, u32 adapters),
	    TP_ARGS(id, name, adapters),
	    TP_STRUCT__entry(__field(u32, id)
			     __string(name, name)
			     __field(u32, adapters)),
	    TP_fast_assign(__entry->id = id;
			   __assign_str(name, name);
			   __entry->adapters = adapters;),
	    TP_printk("adapter=%u name=%s open_adapters=%u",
		      __entry->id, __get_str(name), __entry->adapters)
);

/*
 * Internal error exits: the kernel registration path (its QP refused a
 * post, a REG_MR or LOCAL_INV completed in error, its iWARP connection
 * was lost) and refused connections.
 */
TRACE_EVENT(ndk_reg_broken,
	    TP_PROTO(const void *reg, const char *cause, int code),
	    TP_ARGS(reg, cause, code),
	    TP_STRUCT__entry(__field(const void *, reg)
			     __string(cause, cause)
			     __field(int, code)),
	    TP_fast_assign(__entry->reg = reg;
			   __assign_str(cause, cause);
			   __entry->code = code;),
	    TP_printk("reg=%p cause=%s code=%d", __entry->reg,
		      __get_str(cause), __entry->code)
);

TRACE_EVENT(ndk_reg_wr_error,
	    TP_PROTO(const void *mr, int wc_status, u32 vendor_err),
	    TP_ARGS(mr, wc_status, vendor_err),
	    TP_STRUCT__entry(__field(const void *, mr)
			     __field(int, wc_status)
			     __field(u32, vendor_err)),
	    TP_fast_assign(__entry->mr = mr;
			   __entry->wc_status = wc_status;
			   __entry->vendor_err = vendor_err;),
	    TP_printk("mr=%p wc_status=%d vendor_err=0x%x", __entry->mr,
		      __entry->wc_status, __entry->vendor_err)
);

TRACE_EVENT(ndk_conn_refused,
	    TP_PROTO(const void *obj, const char *cause, s32 status),
	    TP_ARGS(obj, cause, status),
	    TP_STRUCT__entry(__field(const void *, obj)
			     __string(cause, cause)
			     __field(s32, status)),
	    TP_fast_assign(__entry->obj = obj;
			   __assign_str(cause, cause);
			   __entry->status = status;),
	    TP_printk("obj=%p cause=%s status=0x%08x", __entry->obj,
		      __get_str(cause), __entry->status)
);

#endif /* NDK_TRACE_H */

/* Out of tree: the trace header is found from this directory. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ndk_trace
#include <trace/define_trace.h>
