// SPDX-License-Identifier: GPL-2.0
// verbs-peer: a plain librdmacm/libibverbs client of ndk-target (no libndk).
//
//   verbs-peer [--expect ok|error] [--timeout MS] ADDR:PORT read OFF LEN
//   verbs-peer [--expect ok|error] [--timeout MS] ADDR:PORT write OFF LEN BYTE
//   verbs-peer [--expect ok|error] [--timeout MS] ADDR:PORT writeimm OFF LEN BYTE
//   verbs-peer [--timeout MS] ADDR:PORT info
//
// Connects with rdma_cm, takes the window's descriptor from the accept's
// private data (16 bytes little-endian: u64 address, u32 token, u32
// length, as SMB2_BUFFER_DESCRIPTOR_V1), registers a buffer of its own with
// ibv_reg_mr and performs one RDMA read or write of LEN bytes at the
// window's address + OFF (OFF may be negative, or past the window, to
// provoke a refused access).  A write sends LEN bytes of BYTE; writeimm
// sends them as an RDMA write with immediate data, which also consumes a
// receive of the target (NDK has no immediate data).
//
// Prints "descriptor address 0x... token 0x... length N", the work
// completion's status, and for a successful read "sha256 <hex>" of the
// bytes read.  Exit status: 0 when the outcome (successful completion or
// error completion) is the expected one (--expect, default ok), 1 when not
// or when something else failed, 2 on bad usage.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

static int timeout_ms = 10000;

static void usage(void) {
    fprintf(stderr,
            "usage: verbs-peer [--expect ok|error] [--timeout MS] ADDR:PORT read OFF LEN\n"
            "       verbs-peer [--expect ok|error] [--timeout MS] ADDR:PORT write OFF LEN BYTE\n"
            "       verbs-peer [--expect ok|error] [--timeout MS] ADDR:PORT writeimm OFF LEN "
            "BYTE\n"
            "       verbs-peer [--timeout MS] ADDR:PORT info\n");
}

static int parse_addr(const char* text, struct sockaddr_in* sin) {
    char host[64];
    const char* colon = strrchr(text, ':');
    char* end;
    unsigned long port;

    if (!colon || (size_t)(colon - text) >= sizeof(host)) return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    port = strtoul(colon + 1, &end, 10);
    if (*end || port == 0 || port > 65535) return -1;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
}

// Waits for the next CM event; it must be @want.  The caller acks it.
static struct rdma_cm_event* wait_cm(struct rdma_event_channel* ch, enum rdma_cm_event_type want) {
    struct rdma_cm_event* ev;
    struct pollfd p = {.fd = ch->fd, .events = POLLIN};

    for (;;) {
        if (rdma_get_cm_event(ch, &ev) == 0) break;
        if (errno != EAGAIN) {
            perror("verbs-peer: rdma_get_cm_event");
            return NULL;
        }
        int n = poll(&p, 1, timeout_ms);
        if (n == 0) {
            fprintf(stderr, "verbs-peer: no %s event in %d ms\n", rdma_event_str(want), timeout_ms);
            return NULL;
        }
        if (n < 0 && errno != EINTR) {
            perror("verbs-peer: poll");
            return NULL;
        }
    }
    if (ev->event != want) {
        fprintf(stderr, "verbs-peer: %s (status %d) instead of %s\n", rdma_event_str(ev->event),
                ev->status, rdma_event_str(want));
        rdma_ack_cm_event(ev);
        return NULL;
    }
    return ev;
}

// Waits for one work completion.
static int wait_wc(struct ibv_cq* cq, struct ibv_comp_channel* cc, struct ibv_wc* wc) {
    struct pollfd p = {.fd = cc->fd, .events = POLLIN};

    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);
        if (n < 0) return -1;
        if (n == 1) return 0;
        if (ibv_req_notify_cq(cq, 0)) return -1;
        n = ibv_poll_cq(cq, 1, wc);  // one that came before the arm
        if (n < 0) return -1;
        if (n == 1) return 0;
        n = poll(&p, 1, timeout_ms);
        if (n == 0) {
            fprintf(stderr, "verbs-peer: no work completion in %d ms\n", timeout_ms);
            return -1;
        }
        if (n < 0 && errno != EINTR) return -1;
        if (n > 0) {
            struct ibv_cq* ecq;
            void* ctx;
            if (ibv_get_cq_event(cc, &ecq, &ctx) == 0) ibv_ack_cq_events(ecq, 1);
        }
    }
}

static uint64_t get_le(const uint8_t* p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

int main(int argc, char** argv) {
    int expect_ok = 1, argi = 1, rc = 1;
    int is_read = 0, is_write = 0, with_imm = 0;
    long long off = 0;
    unsigned long len = 0, byte = 0;
    struct sockaddr_in dst;

    while (argi < argc && strncmp(argv[argi], "--", 2) == 0) {
        if (strcmp(argv[argi], "--expect") == 0 && argi + 1 < argc) {
            if (strcmp(argv[argi + 1], "ok") == 0)
                expect_ok = 1;
            else if (strcmp(argv[argi + 1], "error") == 0)
                expect_ok = 0;
            else
                return usage(), 2;
            argi += 2;
        } else if (strcmp(argv[argi], "--timeout") == 0 && argi + 1 < argc) {
            timeout_ms = atoi(argv[argi + 1]);
            argi += 2;
        } else {
            return usage(), 2;
        }
    }
    if (argc - argi < 2 || parse_addr(argv[argi], &dst)) return usage(), 2;
    const char* op = argv[argi + 1];
    char** a = argv + argi + 2;
    int na = argc - argi - 2;
    char* end;
    if (strcmp(op, "read") == 0 && na == 2) {
        is_read = 1;
    } else if ((strcmp(op, "write") == 0 || strcmp(op, "writeimm") == 0) && na == 3) {
        is_write = 1;
        with_imm = strcmp(op, "writeimm") == 0;
        byte = strtoul(a[2], &end, 0);
        if (*end || byte > 255) return usage(), 2;
    } else if (!(strcmp(op, "info") == 0 && na == 0)) {
        return usage(), 2;
    }
    if (is_read || is_write) {
        off = strtoll(a[0], &end, 0);
        if (*end) return usage(), 2;
        len = strtoul(a[1], &end, 0);
        if (*end || len == 0 || len > (1UL << 30)) return usage(), 2;
    }

    struct rdma_event_channel* ch = rdma_create_event_channel();
    struct rdma_cm_id* id = NULL;
    struct rdma_cm_event* ev;
    struct ibv_pd* pd = NULL;
    struct ibv_comp_channel* cc = NULL;
    struct ibv_cq* cq = NULL;
    struct ibv_mr* mr = NULL;
    unsigned char* buf = NULL;
    int connected = 0, have_qp = 0;

    if (!ch) {
        perror("verbs-peer: rdma_create_event_channel");
        return 1;
    }
    fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
    if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
        perror("verbs-peer: rdma_create_id");
        goto out;
    }
    if (rdma_resolve_addr(id, NULL, (struct sockaddr*)&dst, timeout_ms)) {
        perror("verbs-peer: rdma_resolve_addr");
        goto out;
    }
    if (!(ev = wait_cm(ch, RDMA_CM_EVENT_ADDR_RESOLVED))) goto out;
    rdma_ack_cm_event(ev);
    if (rdma_resolve_route(id, timeout_ms)) {
        perror("verbs-peer: rdma_resolve_route");
        goto out;
    }
    if (!(ev = wait_cm(ch, RDMA_CM_EVENT_ROUTE_RESOLVED))) goto out;
    rdma_ack_cm_event(ev);

    pd = ibv_alloc_pd(id->verbs);
    cc = pd ? ibv_create_comp_channel(id->verbs) : NULL;
    cq = cc ? ibv_create_cq(id->verbs, 4, NULL, cc, 0) : NULL;
    if (!cq) {
        perror("verbs-peer: PD, completion channel or CQ");
        goto out;
    }
    fcntl(cc->fd, F_SETFL, fcntl(cc->fd, F_GETFL) | O_NONBLOCK);
    struct ibv_qp_init_attr qa = {
        .send_cq = cq,
        .recv_cq = cq,
        .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = 2, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
    };
    if (rdma_create_qp(id, pd, &qa)) {
        perror("verbs-peer: rdma_create_qp");
        goto out;
    }
    have_qp = 1;
    size_t blen = len ? len : 1;
    buf = calloc(1, blen);
    mr = buf ? ibv_reg_mr(pd, buf, blen, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!mr) {
        perror("verbs-peer: ibv_reg_mr");
        goto out;
    }

    struct rdma_conn_param cp = {
        .initiator_depth = 1,  // our RDMA reads in flight (ORD)
        .responder_resources = 1,
        .retry_count = 7,
        .rnr_retry_count = 7,
    };
    if (rdma_connect(id, &cp)) {
        perror("verbs-peer: rdma_connect");
        goto out;
    }
    if (!(ev = wait_cm(ch, RDMA_CM_EVENT_ESTABLISHED))) goto out;
    connected = 1;
    uint8_t desc[16];
    if (!ev->param.conn.private_data || ev->param.conn.private_data_len < sizeof(desc)) {
        fprintf(stderr, "verbs-peer: %u bytes of private data, not a descriptor\n",
                ev->param.conn.private_data_len);
        rdma_ack_cm_event(ev);
        goto out;
    }
    printf("private data %u bytes\n", ev->param.conn.private_data_len);
    memcpy(desc, ev->param.conn.private_data, sizeof(desc));
    rdma_ack_cm_event(ev);
    uint64_t waddr = get_le(desc, 8);
    uint32_t token = (uint32_t)get_le(desc + 8, 4);
    uint32_t wlen = (uint32_t)get_le(desc + 12, 4);
    printf("descriptor address 0x%" PRIx64 " token 0x%08" PRIx32 " length %" PRIu32 "\n", waddr,
           token, wlen);
    fflush(stdout);

    if (!is_read && !is_write) {
        rc = 0;
        goto out;
    }
    if (is_write) memset(buf, (int)byte, len);
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = (uint32_t)len, .lkey = mr->lkey};
    struct ibv_send_wr wr = {
        .wr_id = 1,
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = is_read    ? IBV_WR_RDMA_READ
                  : with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM
                             : IBV_WR_RDMA_WRITE,
        .send_flags = IBV_SEND_SIGNALED,
        .imm_data = htonl(0x1d),
        .wr.rdma = {.remote_addr = waddr + (uint64_t)off, .rkey = token},
    };
    struct ibv_send_wr* bad;
    struct ibv_wc wc;
    if (ibv_post_send(id->qp, &wr, &bad)) {
        perror("verbs-peer: ibv_post_send");
        goto out;
    }
    if (wait_wc(cq, cc, &wc)) goto out;
    printf("%s %lld %lu: completion %s (%d)\n", op, off, len, ibv_wc_status_str(wc.status),
           (int)wc.status);
    if (is_read && wc.status == IBV_WC_SUCCESS) {
        char hex[65];
        ndk_sha256_hex(buf, len, hex);
        printf("sha256 %s\n", hex);
    }
    int ok = wc.status == IBV_WC_SUCCESS;
    rc = ok == expect_ok ? 0 : 1;
    printf("outcome %s, expected %s: %s\n", ok ? "ok" : "error", expect_ok ? "ok" : "error",
           rc ? "MISMATCH" : "as expected");

out:
    fflush(stdout);
    if (connected && rdma_disconnect(id) == 0 && (ev = wait_cm(ch, RDMA_CM_EVENT_DISCONNECTED)))
        rdma_ack_cm_event(ev);
    if (have_qp) rdma_destroy_qp(id);
    if (mr) ibv_dereg_mr(mr);
    free(buf);
    if (cq) ibv_destroy_cq(cq);
    if (cc) ibv_destroy_comp_channel(cc);
    if (pd) ibv_dealloc_pd(pd);
    if (id) rdma_destroy_id(id);
    rdma_destroy_event_channel(ch);
    return rc;
}
