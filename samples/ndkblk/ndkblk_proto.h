/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndkblk: the wire format between the initiator (ndkblk.ko) and the
 * target (ndkblk_target.ko), and the one helper both use.
 *
 * SMB Direct's pattern: the initiator fast-registers an I/O's pages and
 * sends a request carrying the token, the address and the length; the
 * target moves the data with RDMA read (a write to the disk) or RDMA write
 * (a read from the disk) and answers with send-and-invalidate of that
 * token, so the initiator's registration is invalidated by the peer.
 * Writes up to NDKBLK_INLINE_MAX bytes travel inside the request message
 * instead (as SMB Direct and NVMe/RDMA carry small writes), which saves
 * the fast-register and the RDMA read's round trip.  Every field is
 * little endian.  Documentation/ndkblk.md.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDKBLK_PROTO_H
#define NDKBLK_PROTO_H

#include <linux/types.h>
#include <ndk/ndkpi.h>

#define NDKBLK_MAGIC		0x4b424e44	/* "DNBK" */
#define NDKBLK_PORT		7474
/* Requests in flight per connection: the target's tags. */
#define NDKBLK_DEPTH		32
/* Bytes per request: the target's bounce buffer per tag. */
#define NDKBLK_MAX_IO		(128u << 10)
/* Connections (queues) a target serves at most, an initiator opens. */
#define NDKBLK_MAX_QUEUES	8
/* Bytes a write may carry in its request message instead of a token. */
#define NDKBLK_INLINE_MAX	4096u

enum ndkblk_opcode {
	NDKBLK_OP_READ = 1,	/* target RDMA-writes the data */
	NDKBLK_OP_WRITE = 2,	/* target RDMA-reads the data */
	NDKBLK_OP_WRITE_INLINE = 3,	/* the data follows the request */
};

/**
 * struct ndkblk_req - a request, initiator to target (one send)
 * @magic:   NDKBLK_MAGIC
 * @opcode:  enum ndkblk_opcode
 * @tag:     0 .. NDKBLK_DEPTH - 1, unique among requests in flight
 * @sector:  first 512-byte sector
 * @length:  bytes, a multiple of 512, at most NDKBLK_MAX_IO
 * @token:   the remote token of the initiator's fast-registered pages
 *           (0 for WRITE_INLINE)
 * @address: their address in that registration (0 for WRITE_INLINE)
 */
struct ndkblk_req {
	__le32 magic;
	__le16 opcode;
	__le16 tag;
	__le64 sector;
	__le32 length;
	__le32 token;
	__le64 address;
};

/**
 * struct ndkblk_msg - a request message: a WRITE_INLINE's data follows
 * @req:  the request
 * @data: @req.length bytes for WRITE_INLINE, nothing otherwise
 */
struct ndkblk_msg {
	struct ndkblk_req req;
	u8 data[NDKBLK_INLINE_MAX];
};

/**
 * struct ndkblk_rsp - the answer, target to initiator: send-and-invalidate
 * of the request's token, a plain send for WRITE_INLINE and refusals
 * @magic:  NDKBLK_MAGIC
 * @tag:    the request's tag
 * @status: 0, or a positive errno
 */
struct ndkblk_rsp {
	__le32 magic;
	__le16 tag;
	__le16 status;
};

/**
 * struct ndkblk_hello - private data of the connection, target to initiator
 * @magic:   NDKBLK_MAGIC
 * @depth:   requests in flight the target takes
 * @max_io:  bytes per request it takes
 * @inline_max: bytes a WRITE_INLINE may carry
 * @sectors: the namespace's size in 512-byte sectors
 * @queues:  connections the target serves at once: an initiator opens up
 *           to that many, one per hardware queue
 * @reserved: 0
 */
struct ndkblk_hello {
	__le32 magic;
	__le32 depth;
	__le32 max_io;
	__le32 inline_max;
	__le64 sectors;
	__le32 queues;
	__le32 reserved;
};

/**
 * ndkblk_register() - a kernel buffer in a new MR of @pd, blocking
 * @pd:    the PD
 * @mr:    receives the MR (NULL when it could not be created); the caller
 *         closes it, registered or not
 * @buf:   kmalloc'ed or vmalloc'ed
 * @len:   bytes
 * @flags: NDK_MR_FLAG_*
 * @token: receives its local token
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
static inline int ndkblk_register(struct ndk_pd *pd, struct ndk_mr **mr,
				  void *buf, u32 len, u32 flags, u32 *token)
{
	struct ndk_mdl *mdl;
	s32 s;

	if (ndk_create_mr(pd, false, NULL, NULL, mr)) {
		*mr = NULL;
		return -EIO;
	}
	mdl = ndk_mdl_from_buffer(buf, len, GFP_KERNEL);
	if (!mdl)
		return -ENOMEM;
	s = ndk_register_mr(*mr, mdl, len, flags, NULL, NULL);
	ndk_mdl_free_chain(mdl);
	if (s)
		return -EIO;
	*token = ndk_get_local_token_from_mr(*mr);
	return 0;
}

/**
 * ndkblk_receive() - post buffer @i (@len bytes at @buf) as a receive
 * @qp:    the QP
 * @i:     the buffer's index, the receive's request context
 * @buf:   the buffer, in the MR of @token
 * @len:   bytes
 * @token: the local token of the buffer's MR
 *
 * Context: any; the caller serializes the QP's receives.
 * Return: as ndk_receive().
 */
static inline s32 ndkblk_receive(struct ndk_qp *qp, u32 i, void *buf,
				 u32 len, u32 token)
{
	struct ndk_sge sge = {
		.virtual_address = buf,
		.length = len,
		.memory_region_token = token,
	};

	return ndk_receive(qp, (void *)(uintptr_t)i, &sge, 1);
}

#endif /* NDKBLK_PROTO_H */
