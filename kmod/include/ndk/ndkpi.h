/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndkpi.h for Linux: the NDK kernel provider interface of ndk.ko, for
 * kernel consumers (other modules link against ndk.ko's Module.symvers).
 *
 * It mirrors Windows' ndkpi.h and ndkinfo.h so that NDK consumer code
 * ports by mechanical renaming (Documentation/ndk-mapping.md):
 *  - constants keep their exact names and values: NDK_MR_FLAG_*,
 *    NDK_OP_FLAG_*, NDK_ADAPTER_FLAG_*, NDK_CQ_NOTIFY_*, STATUS_*;
 *  - CamelCase enumerators become UPPER_SNAKE with the same values
 *    (NdkOperationTypeReceive -> NDK_OPERATION_TYPE_RECEIVE);
 *  - types and fields become lower_snake (NDK_SGE.MemoryRegionToken ->
 *    struct ndk_sge.memory_region_token), with the x64 layout;
 *  - a dispatch call pObj->Dispatch->NdkXxx(pObj, ...) becomes
 *    ndk_xxx(obj, ...) with the same arguments in the same order;
 *  - NTSTATUS is s32, ULONG is u32, PVOID stays void *.
 *
 * The asynchronous contract is NDK's: a create, close or request that
 * returns STATUS_PENDING calls its completion exactly once later; any
 * other return means it finished inline and no completion follows.  A
 * Linux extension: passing a NULL completion asks for a blocking call
 * (process context only), which never returns STATUS_PENDING.
 *
 * Calling contexts: functions marked "any context" may be called from
 * atomic context, including from inside any NDK callback; the others may
 * sleep.  Callbacks run in process context (a workqueue) unless marked
 * otherwise, and must not call the functions that may sleep, but for
 * ndk_reject() (process context, which may sleep on iWARP) from a
 * ConnectEvent or a connect's completion.
 */
#ifndef _NDK_NDKPI_H
#define _NDK_NDKPI_H

#include <linux/socket.h>
#include <linux/types.h>
#include <ndk/ndk_ioctl.h>
#include <ndk/ndk_mdl.h>

/* --- Versions (ndkinfo.h NDK_VERSION) ----------------------------------- */

struct ndk_version {
	u16 major;
	u16 minor;
};

#define NDK_VERSION_MAJOR 1
#define NDK_VERSION_MINOR 2

/* --- NTSTATUS values NDK uses (exact Windows numbers) ------------------- */

#define STATUS_SUCCESS			((s32)NDK_U_STATUS_SUCCESS)
#define STATUS_PENDING			((s32)NDK_U_STATUS_PENDING)
#define STATUS_BUFFER_OVERFLOW		((s32)NDK_U_STATUS_BUFFER_OVERFLOW)
#define STATUS_DEVICE_BUSY		((s32)NDK_U_STATUS_DEVICE_BUSY)
#define STATUS_UNSUCCESSFUL		((s32)NDK_U_STATUS_UNSUCCESSFUL)
#define STATUS_ACCESS_VIOLATION		((s32)NDK_U_STATUS_ACCESS_VIOLATION)
#define STATUS_INVALID_HANDLE		((s32)NDK_U_STATUS_INVALID_HANDLE)
#define STATUS_INVALID_PARAMETER	((s32)NDK_U_STATUS_INVALID_PARAMETER)
#define STATUS_INVALID_DEVICE_REQUEST	((s32)NDK_U_STATUS_INVALID_DEVICE_REQUEST)
#define STATUS_BUFFER_TOO_SMALL		((s32)NDK_U_STATUS_BUFFER_TOO_SMALL)
#define STATUS_INVALID_PARAMETER_MIX	((s32)NDK_U_STATUS_INVALID_PARAMETER_MIX)
#define STATUS_DATA_OVERRUN		((s32)NDK_U_STATUS_DATA_OVERRUN)
#define STATUS_DATA_ERROR		((s32)NDK_U_STATUS_DATA_ERROR)
#define STATUS_SHARING_VIOLATION	((s32)NDK_U_STATUS_SHARING_VIOLATION)
#define STATUS_INSUFFICIENT_RESOURCES	((s32)NDK_U_STATUS_INSUFFICIENT_RESOURCES)
#define STATUS_IO_TIMEOUT		((s32)NDK_U_STATUS_IO_TIMEOUT)
#define STATUS_NOT_SUPPORTED		((s32)NDK_U_STATUS_NOT_SUPPORTED)
#define STATUS_INTERNAL_ERROR		((s32)NDK_U_STATUS_INTERNAL_ERROR)
#define STATUS_CANCELLED		((s32)NDK_U_STATUS_CANCELLED)
#define STATUS_REMOTE_RESOURCES		((s32)NDK_U_STATUS_REMOTE_RESOURCES)
#define STATUS_INVALID_CONNECTION	((s32)NDK_U_STATUS_INVALID_CONNECTION)
#define STATUS_INVALID_ADDRESS		((s32)NDK_U_STATUS_INVALID_ADDRESS)
#define STATUS_INVALID_DEVICE_STATE	((s32)NDK_U_STATUS_INVALID_DEVICE_STATE)
#define STATUS_TOO_MANY_ADDRESSES	((s32)NDK_U_STATUS_TOO_MANY_ADDRESSES)
#define STATUS_ADDRESS_ALREADY_EXISTS	((s32)NDK_U_STATUS_ADDRESS_ALREADY_EXISTS)
#define STATUS_CONNECTION_RESET		((s32)NDK_U_STATUS_CONNECTION_RESET)
#define STATUS_CONNECTION_INVALID	((s32)NDK_U_STATUS_CONNECTION_INVALID)
#define STATUS_CONNECTION_REFUSED	((s32)NDK_U_STATUS_CONNECTION_REFUSED)
#define STATUS_NETWORK_UNREACHABLE	((s32)NDK_U_STATUS_NETWORK_UNREACHABLE)
#define STATUS_HOST_UNREACHABLE		((s32)NDK_U_STATUS_HOST_UNREACHABLE)
#define STATUS_CONNECTION_ABORTED	((s32)NDK_U_STATUS_CONNECTION_ABORTED)
#define STATUS_DEVICE_REMOVED		((s32)NDK_U_STATUS_DEVICE_REMOVED)
#define STATUS_IMPLEMENTATION_LIMIT	((s32)NDK_U_STATUS_IMPLEMENTATION_LIMIT)

/* NT_SUCCESS(): success and informational values are >= 0. */
#define NT_SUCCESS(status) ((s32)(status) >= 0)

/* --- Objects ------------------------------------------------------------ */

enum ndk_object_type {
	NDK_OBJECT_TYPE_UNDEFINED = 0,
	NDK_OBJECT_TYPE_ADAPTER = 1,
	NDK_OBJECT_TYPE_QP = 2,
	NDK_OBJECT_TYPE_CQ = 3,
	NDK_OBJECT_TYPE_MR = 4,
	NDK_OBJECT_TYPE_MW = 5,
	NDK_OBJECT_TYPE_PD = 6,
	NDK_OBJECT_TYPE_SHARED_ENDPOINT = 7,
	NDK_OBJECT_TYPE_CONNECTOR = 8,
	NDK_OBJECT_TYPE_LISTENER = 9,
	NDK_OBJECT_TYPE_SRQ = 10,
	NDK_OBJECT_TYPE_MAX = 11,
};

/**
 * struct ndk_object_header - first member of every NDK object
 * @version:     NDK version the provider implements for the object
 * @object_type: enum ndk_object_type, never 0
 *
 * A create completion hands the new object over as a header pointer;
 * ndk_to_pd() and friends turn it into the object (a cast: the header is
 * at offset 0).  The rest of each object is private to ndk.ko.
 */
struct ndk_object_header {
	struct ndk_version version;
	u32 object_type;
};

struct ndk_adapter;
struct ndk_pd;
struct ndk_cq;
struct ndk_qp;
struct ndk_mr;
struct ndk_mw;
struct ndk_connector;
struct ndk_listener;

#define ndk_to_adapter(hdr)	((struct ndk_adapter *)(hdr))
#define ndk_to_pd(hdr)		((struct ndk_pd *)(hdr))
#define ndk_to_cq(hdr)		((struct ndk_cq *)(hdr))
#define ndk_to_qp(hdr)		((struct ndk_qp *)(hdr))
#define ndk_to_mr(hdr)		((struct ndk_mr *)(hdr))
#define ndk_to_mw(hdr)		((struct ndk_mw *)(hdr))
#define ndk_to_connector(hdr)	((struct ndk_connector *)(hdr))
#define ndk_to_listener(hdr)	((struct ndk_listener *)(hdr))

/* --- Constants (ndkpi.h, ndkinfo.h) ------------------------------------- */

/* NdkRegisterMr flags.  REMOTE_WRITE contains LOCAL_WRITE: test (f & 0x4). */
#define NDK_MR_FLAG_ALLOW_LOCAL_READ	NDK_U_MR_FLAG_ALLOW_LOCAL_READ
#define NDK_MR_FLAG_ALLOW_LOCAL_WRITE	NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE
#define NDK_MR_FLAG_ALLOW_REMOTE_READ	NDK_U_MR_FLAG_ALLOW_REMOTE_READ
#define NDK_MR_FLAG_ALLOW_REMOTE_WRITE	NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE
#define NDK_MR_FLAG_RDMA_READ_SINK	NDK_U_MR_FLAG_RDMA_READ_SINK

/* Work request flags. */
#define NDK_OP_FLAG_SILENT_SUCCESS		NDK_U_OP_FLAG_SILENT_SUCCESS
#define NDK_OP_FLAG_READ_FENCE			NDK_U_OP_FLAG_READ_FENCE
#define NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT	NDK_U_OP_FLAG_SEND_AND_SOLICIT_EVENT
#define NDK_OP_FLAG_ALLOW_REMOTE_READ		NDK_U_OP_FLAG_ALLOW_REMOTE_READ
#define NDK_OP_FLAG_ALLOW_LOCAL_WRITE		NDK_U_OP_FLAG_ALLOW_LOCAL_WRITE
#define NDK_OP_FLAG_ALLOW_REMOTE_WRITE		NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE
#define NDK_OP_FLAG_INLINE			NDK_U_OP_FLAG_INLINE
#define NDK_OP_FLAG_RDMA_READ_SINK		NDK_U_OP_FLAG_RDMA_READ_SINK
#define NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE	NDK_U_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE
#define NDK_OP_FLAG_DEFER			NDK_U_OP_FLAG_DEFER

/* NDK_ADAPTER_INFO.adapter_flags */
#define NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED \
	NDK_U_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED
#define NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED \
	NDK_U_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED
#define NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED \
	NDK_U_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED
#define NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED \
	NDK_U_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED
#define NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED \
	NDK_U_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED
#define NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED \
	NDK_U_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED
#define NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED \
	NDK_U_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED

/* ndk_arm_cq() types */
#define NDK_CQ_NOTIFY_ERRORS	NDK_U_CQ_NOTIFY_ERRORS
#define NDK_CQ_NOTIFY_ANY	NDK_U_CQ_NOTIFY_ANY
#define NDK_CQ_NOTIFY_SOLICITED	NDK_U_CQ_NOTIFY_SOLICITED

enum ndk_rdma_technology {
	NDK_UNDEFINED = 0,
	NDK_IWARP = 1,
	NDK_INFINIBAND = 2,
	NDK_ROCE = 3,
	NDK_ROCE_V2 = 4,
	NDK_MAX_TECHNOLOGY = 5,
};

/* Bit-coded: test (type & NDK_OPERATION_TYPE_RECEIVE) for both receives. */
enum ndk_operation_type {
	NDK_OPERATION_TYPE_RECEIVE = NDK_U_OPERATION_RECEIVE,
	NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE = NDK_U_OPERATION_RECEIVE_AND_INVALIDATE,
	NDK_OPERATION_TYPE_SEND = NDK_U_OPERATION_SEND,
	NDK_OPERATION_TYPE_FAST_REGISTER = NDK_U_OPERATION_FAST_REGISTER,
	NDK_OPERATION_TYPE_BIND = NDK_U_OPERATION_BIND,
	NDK_OPERATION_TYPE_INVALIDATE = NDK_U_OPERATION_INVALIDATE,
	NDK_OPERATION_TYPE_READ = NDK_U_OPERATION_READ,
	NDK_OPERATION_TYPE_WRITE = NDK_U_OPERATION_WRITE,
};

/* --- Structures (x64 layout of ndkpi.h / ndkinfo.h) --------------------- */

/**
 * struct ndk_adapter_info - NDK_ADAPTER_INFO, 0x68 bytes
 *
 * Filled by ndk_query_adapter_info() from the ib_device and port
 * attributes; Documentation/ndk-mapping.md gives the source of each field.
 */
struct ndk_adapter_info {
	struct ndk_version version;		/* 0x00 */
	u32 vendor_id;				/* 0x04 */
	u32 device_id;				/* 0x08 */
	u32 reserved0;				/* 0x0c, padding */
	u64 max_registration_size;		/* 0x10 */
	u64 max_window_size;			/* 0x18 */
	u32 frmr_page_count;			/* 0x20 */
	u32 max_initiator_request_sge;		/* 0x24 */
	u32 max_receive_request_sge;		/* 0x28 */
	u32 max_read_request_sge;		/* 0x2c */
	u32 max_transfer_length;		/* 0x30 */
	u32 max_inline_data_size;		/* 0x34 */
	u32 max_inbound_read_limit;		/* 0x38 */
	u32 max_outbound_read_limit;		/* 0x3c */
	u32 max_receive_queue_depth;		/* 0x40 */
	u32 max_initiator_queue_depth;		/* 0x44 */
	u32 max_srq_depth;			/* 0x48 */
	u32 max_cq_depth;			/* 0x4c */
	u32 large_request_threshold;		/* 0x50 */
	u32 max_caller_data;			/* 0x54 */
	u32 max_callee_data;			/* 0x58 */
	u32 adapter_flags;			/* 0x5c */
	u32 rdma_technology;			/* 0x60, enum ndk_rdma_technology */
	u32 reserved1;				/* 0x64, padding */
};

/**
 * struct ndk_sge - NDK_SGE, 16 bytes
 * @virtual_address:     an address inside a registered MR's span (the MR's
 *                       index space; never dereferenced by ndk.ko)
 * @logical_address:     with the privileged token: an adapter address
 * @length:              bytes
 * @memory_region_token: the MR's local token (or the privileged token)
 */
struct ndk_sge {
	union {
		void *virtual_address;
		u64 logical_address;
	};
	u32 length;
	u32 memory_region_token;
};

/**
 * struct ndk_result - NDK_RESULT, 24 bytes
 * @status:            NTSTATUS of the request (ib_wc_status mapped, see
 *                     Documentation/ndk-mapping.md)
 * @bytes_transferred: valid for receive completions only
 * @qp_context:        the qp_context given to ndk_create_qp()
 * @request_context:   the request_context given to the post call
 */
struct ndk_result {
	s32 status;
	u32 bytes_transferred;
	void *qp_context;
	void *request_context;
};

/**
 * struct ndk_result_ex - NDK_RESULT_EX (NDK 2.1 layout), 40 bytes
 * @type:                enum ndk_operation_type of the request
 * @provider_error_code: the ib_wc vendor_err on failure, 0 on success
 * @type_specific_completion_output: for RECEIVE_AND_INVALIDATE the token
 *                       the peer invalidated
 */
struct ndk_result_ex {
	s32 status;
	u32 bytes_transferred;
	void *qp_context;
	void *request_context;
	u32 type;
	u32 provider_error_code;
	unsigned long type_specific_completion_output;
};

/**
 * struct ndk_logical_address_mapping - NDK_LOGICAL_ADDRESS_MAPPING
 * @adapter_context:    provider-private; the consumer must not change it
 * @adapter_page_count: entries in @adapter_page_array
 * @reserved:           padding (x64 layout)
 * @adapter_page_array: one PAGE_SIZE adapter logical address per page
 *
 * Size for n pages: 16 + 8 * n bytes (struct_size()).
 */
struct ndk_logical_address_mapping {
	void *adapter_context;
	u32 adapter_page_count;
	u32 reserved;
	u64 adapter_page_array[];
};

/* --- Callbacks ----------------------------------------------------------- */

typedef void (*ndk_fn_close_completion)(void *context);
typedef void (*ndk_fn_request_completion)(void *context, s32 status);
typedef void (*ndk_fn_create_completion)(void *context, s32 status,
					 struct ndk_object_header *object);
/*
 * CQ notification: status SUCCESS, BUFFER_OVERFLOW (overrun) or
 * INTERNAL_ERROR (fatal).  Runs in process context, one at a time; after
 * ndk_cq_set_direct_notification() also from the device's completion
 * handler (softirq or hard interrupt): it must not sleep then.
 */
typedef void (*ndk_fn_cq_notification_callback)(void *context, s32 status);
typedef void (*ndk_fn_connect_event_callback)(void *context,
					      struct ndk_connector *connector);
typedef void (*ndk_fn_disconnect_event_callback)(void *context);
/*
 * Linux: the adapter's ib_device is going away (rdma link delete, driver
 * unload).  Close every object of the adapter, then the adapter; the
 * device removal waits for that.
 */
typedef void (*ndk_fn_adapter_removal_callback)(void *context);
/* ndk_enum_adapters(): non-zero stops the walk. */
typedef int (*ndk_fn_adapter_enum)(const char *name, void *context);

/* --- Adapter (NDIS open/close, NDK_ADAPTER_DISPATCH) --------------------- */

int ndk_enum_adapters(ndk_fn_adapter_enum fn, void *context);
s32 ndk_open_adapter(const char *name,
		     ndk_fn_adapter_removal_callback removal,
		     void *removal_context, struct ndk_adapter **adapter);
void ndk_close_adapter(struct ndk_adapter *adapter);
s32 ndk_build_lam(struct ndk_adapter *adapter, struct ndk_mdl *mdl,
		  size_t length, ndk_fn_request_completion request_completion,
		  void *request_context, struct ndk_logical_address_mapping *lam,
		  u32 *lam_size, u32 *fbo);
void ndk_release_lam(struct ndk_adapter *adapter,
		     struct ndk_logical_address_mapping *lam);
s32 ndk_query_adapter_info(struct ndk_adapter *adapter,
			   struct ndk_adapter_info *info, u32 *buffer_size);
s32 ndk_create_pd(struct ndk_adapter *adapter,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_pd **pd);
s32 ndk_create_cq(struct ndk_adapter *adapter, u32 cq_depth,
		  ndk_fn_cq_notification_callback notification,
		  void *notification_context, const struct cpumask *affinity,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_cq **cq);
s32 ndk_create_connector(struct ndk_adapter *adapter,
			 ndk_fn_create_completion create_completion,
			 void *request_context,
			 struct ndk_connector **connector);
s32 ndk_create_listener(struct ndk_adapter *adapter,
			ndk_fn_connect_event_callback connect_event,
			void *connect_event_context,
			ndk_fn_create_completion create_completion,
			void *request_context, struct ndk_listener **listener);

/* --- PD (NDK_PD_DISPATCH) ------------------------------------------------ */

s32 ndk_close_pd(struct ndk_pd *pd, ndk_fn_close_completion close_completion,
		 void *request_context);
s32 ndk_create_qp(struct ndk_pd *pd, struct ndk_cq *receive_cq,
		  struct ndk_cq *initiator_cq, void *qp_context,
		  u32 receive_queue_depth, u32 initiator_queue_depth,
		  u32 max_receive_request_sge, u32 max_initiator_request_sge,
		  u32 inline_data_size,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_qp **qp);

s32 ndk_create_mr(struct ndk_pd *pd, bool fast_register,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_mr **mr);
s32 ndk_create_mw(struct ndk_pd *pd,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_mw **mw);
void ndk_get_privileged_memory_region_token(struct ndk_pd *pd, u32 *token);

/* --- MR (NDK_MR_DISPATCH) ------------------------------------------------ */

s32 ndk_close_mr(struct ndk_mr *mr, ndk_fn_close_completion close_completion,
		 void *request_context);
s32 ndk_register_mr(struct ndk_mr *mr, struct ndk_mdl *mdl, size_t length,
		    u32 flags, ndk_fn_request_completion request_completion,
		    void *request_context);
s32 ndk_deregister_mr(struct ndk_mr *mr,
		      ndk_fn_request_completion request_completion,
		      void *request_context);
s32 ndk_initialize_fast_register_mr(struct ndk_mr *mr, u32 adapter_page_count,
				    bool remote_access,
				    ndk_fn_request_completion request_completion,
				    void *request_context);
u32 ndk_get_local_token_from_mr(struct ndk_mr *mr);
u32 ndk_get_remote_token_from_mr(struct ndk_mr *mr);

/* --- MW (NDK_MW_DISPATCH) ------------------------------------------------ */

s32 ndk_close_mw(struct ndk_mw *mw, ndk_fn_close_completion close_completion,
		 void *request_context);
u32 ndk_get_remote_token_from_mw(struct ndk_mw *mw);

/* --- CQ (NDK_CQ_DISPATCH) ------------------------------------------------ */

s32 ndk_close_cq(struct ndk_cq *cq, ndk_fn_close_completion close_completion,
		 void *request_context);
s32 ndk_resize_cq(struct ndk_cq *cq, u32 cq_depth,
		  ndk_fn_request_completion request_completion,
		  void *request_context);
void ndk_arm_cq(struct ndk_cq *cq, u32 type);
/* Linux extension: notifications from the completion handler (ndk_cq.c). */
s32 ndk_cq_set_direct_notification(struct ndk_cq *cq);
u32 ndk_get_cq_results(struct ndk_cq *cq, struct ndk_result *results,
		       u32 count);
u32 ndk_get_cq_results_ex(struct ndk_cq *cq, struct ndk_result_ex *results,
			  u32 count);
s32 ndk_control_cq_interrupt_moderation(struct ndk_cq *cq,
					u32 moderation_interval,
					u32 moderation_count);

/* --- QP (NDK_QP_DISPATCH); posts are "any context" ------------------------ */

s32 ndk_close_qp(struct ndk_qp *qp, ndk_fn_close_completion close_completion,
		 void *request_context);
void ndk_flush(struct ndk_qp *qp);
s32 ndk_send(struct ndk_qp *qp, void *request_context,
	     const struct ndk_sge *sgl, u32 nsge, u32 flags);
s32 ndk_send_and_invalidate(struct ndk_qp *qp, void *request_context,
			    const struct ndk_sge *sgl, u32 nsge, u32 flags,
			    u32 remote_token);
s32 ndk_receive(struct ndk_qp *qp, void *request_context,
		const struct ndk_sge *sgl, u32 nsge);
s32 ndk_read(struct ndk_qp *qp, void *request_context,
	     const struct ndk_sge *sgl, u32 nsge, u64 remote_address,
	     u32 remote_token, u32 flags);
s32 ndk_write(struct ndk_qp *qp, void *request_context,
	      const struct ndk_sge *sgl, u32 nsge, u64 remote_address,
	      u32 remote_token, u32 flags);

/*
 * Memory registration work requests on the initiator queue (NdkFastRegister,
 * NdkBind, NdkInvalidate).  They complete like any initiator request, with
 * types NDK_OPERATION_TYPE_FAST_REGISTER, _BIND and _INVALIDATE.  The new
 * token can be read as soon as the post returns.  A fast-register MR or a
 * window is registered again only after the completion of its
 * invalidation (local, or the peer's send-and-invalidate seen in a
 * receive result): Documentation/registration.md.
 */
s32 ndk_fast_register(struct ndk_qp *qp, void *request_context,
		      struct ndk_mr *mr, u32 adapter_page_count,
		      const u64 *adapter_page_array, u32 fbo, size_t length,
		      void *base_virtual_address, u32 flags);
s32 ndk_bind(struct ndk_qp *qp, void *request_context, struct ndk_mr *mr,
	     struct ndk_mw *mw, void *virtual_address, size_t length,
	     u32 flags);
s32 ndk_invalidate(struct ndk_qp *qp, void *request_context,
		   struct ndk_object_header *mr_or_mw, u32 flags);

/* --- Connector (NDK_CONNECTOR_DISPATCH) ---------------------------------- */

s32 ndk_close_connector(struct ndk_connector *connector,
			ndk_fn_close_completion close_completion,
			void *request_context);
s32 ndk_connect(struct ndk_connector *connector, struct ndk_qp *qp,
		const struct sockaddr *src_address, u32 src_address_length,
		const struct sockaddr *dest_address, u32 dest_address_length,
		u32 inbound_read_limit, u32 outbound_read_limit,
		const void *private_data, u32 private_data_length,
		ndk_fn_request_completion request_completion,
		void *request_context);
s32 ndk_complete_connect(struct ndk_connector *connector,
			 ndk_fn_disconnect_event_callback disconnect_event,
			 void *disconnect_event_context,
			 ndk_fn_request_completion request_completion,
			 void *request_context);
s32 ndk_accept(struct ndk_connector *connector, struct ndk_qp *qp,
	       u32 inbound_read_limit, u32 outbound_read_limit,
	       const void *private_data, u32 private_data_length,
	       ndk_fn_disconnect_event_callback disconnect_event,
	       void *disconnect_event_context,
	       ndk_fn_request_completion request_completion,
	       void *request_context);
s32 ndk_reject(struct ndk_connector *connector, const void *private_data,
	       u32 private_data_length);
s32 ndk_get_connection_data(struct ndk_connector *connector,
			    u32 *inbound_read_limit, u32 *outbound_read_limit,
			    void *private_data, u32 *private_data_length);
s32 ndk_get_local_address(struct ndk_connector *connector,
			  struct sockaddr *address, u32 *address_length);
s32 ndk_get_peer_address(struct ndk_connector *connector,
			 struct sockaddr *address, u32 *address_length);
s32 ndk_disconnect(struct ndk_connector *connector,
		   ndk_fn_request_completion request_completion,
		   void *request_context);

/* --- Listener (NDK_LISTENER_DISPATCH) ------------------------------------ */

s32 ndk_close_listener(struct ndk_listener *listener,
		       ndk_fn_close_completion close_completion,
		       void *request_context);
s32 ndk_listen(struct ndk_listener *listener, const struct sockaddr *address,
	       u32 address_length,
	       ndk_fn_request_completion request_completion,
	       void *request_context);
s32 ndk_get_listener_local_address(struct ndk_listener *listener,
				   struct sockaddr *address,
				   u32 *address_length);
s32 ndk_control_connect_events(struct ndk_listener *listener, bool pause);

#endif /* _NDK_NDKPI_H */
