// SPDX-License-Identifier: GPL-2.0
// Description: seeded random ioctl fuzzing of /dev/ndk (reliability plan
// R1).  Each call picks a command number (valid, a neighbour, another
// type byte, another direction, garbage), an argument size (0, short,
// exact, long with a zero or non-zero tail, random), an argument pointer
// (NULL, unmapped, kernel half, misaligned, read-only, at the end of a
// mapping) and every field by its kind: handles (live of the right type,
// live of another type, stale, another file's, 0, random), flags (0,
// valid bits, one bit, all bits), user addresses and lengths around page
// boundaries, SGE lists, socket addresses, reserved and out fields.  Valid
// objects are created every few hundred calls, with a loopback connection
// per epoch, so the deeper paths are reached.  A forked child fuzzes the
// inherited file (object commands: EPERM).
//
// Pass: every errno is one Documentation/uapi.md names, foreign type
// bytes, directions and numbers give ENOTTY, no call takes over 2 s, and
// after each epoch's close the debugfs counters and VmPin are back at
// their start.  The runner fails the test on any kernel report.
//
// Usage: rel-fuzz UAPI_MD [--seed N] [--calls N] [--trace]
// Replay a failing run with the seed it printed (NDK_FUZZ_SEED works too).
#include <sys/wait.h>

#include <cstddef>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rel_common.hpp"

namespace {

constexpr long kPage = 4096;
constexpr std::uint32_t kLastNr = 0x1e;

enum Kind : std::uint8_t {
    kHandle,
    kFlags,
    kNum,
    kAddr,
    kLen,
    kPtr,
    kSgl,
    kToken,
    kCtx,
    kSock,
    kOp,
    kOut,
    kRes
};
// Handle types, as ndk.ko's entries (NDK_UOBJ_*) but our own numbering.
enum HType : std::uint8_t { kAny, kAd, kPd, kMem, kCq, kQp, kMr, kMw, kCon, kLis, kNTypes };

struct Field {
    std::uint16_t off;
    std::uint8_t size;
    Kind kind;
    HType htype = kAny;
    // Valid values of a flags or number field (a "clean" call uses them).
    std::uint32_t lo = 0, hi = 0;
};

struct Cmd {
    const char* name;
    std::uint16_t size;
    std::vector<Field> fields;
    HType creates = kAny;  // the type of a `handle` out field, if any
    std::uint16_t handle_off = 0;
};

#define FLD(type, member, ...) \
    Field { offsetof(type, member), sizeof(type::member), __VA_ARGS__ }

std::vector<Cmd> Commands() {
    using namespace std;
    vector<Cmd> c(kLastNr + 1);
    c[0x00] = {"QUERY_INFO",
               sizeof(ndk_u_query_info),
               {FLD(ndk_u_query_info, flags, kFlags), FLD(ndk_u_query_info, reserved, kRes),
                FLD(ndk_u_query_info, features, kOut)}};
    c[0x01] = {"ADAPTER_QUERY",
               sizeof(ndk_u_adapter_query),
               {FLD(ndk_u_adapter_query, adapter_id, kNum, kAny, 0, 2),
                FLD(ndk_u_adapter_query, flags, kFlags, kAny, 0, 1),
                FLD(ndk_u_adapter_query, node_guid, kOut)}};
    c[0x02] = {"ADAPTER_OPEN",
               sizeof(ndk_u_adapter_open),
               {FLD(ndk_u_adapter_open, adapter_id, kNum, kAny, 0, 2),
                FLD(ndk_u_adapter_open, flags, kFlags), FLD(ndk_u_adapter_open, handle, kOut),
                FLD(ndk_u_adapter_open, reserved, kRes)},
               kAd,
               offsetof(ndk_u_adapter_open, handle)};
    c[0x03] = {
        "ADAPTER_INFO",
        sizeof(ndk_u_adapter_info),
        {FLD(ndk_u_adapter_info, handle, kHandle, kAd), FLD(ndk_u_adapter_info, flags, kFlags),
         FLD(ndk_u_adapter_info, reserved0, kRes), FLD(ndk_u_adapter_info, reserved1, kRes),
         FLD(ndk_u_adapter_info, max_registration_size, kOut),
         FLD(ndk_u_adapter_info, max_user_registration_size, kRes)}};
    c[0x04] = {
        "PD_CREATE",
        sizeof(ndk_u_pd_create),
        {FLD(ndk_u_pd_create, adapter_handle, kHandle, kAd), FLD(ndk_u_pd_create, flags, kFlags),
         FLD(ndk_u_pd_create, handle, kOut), FLD(ndk_u_pd_create, reserved, kRes)},
        kPd,
        offsetof(ndk_u_pd_create, handle)};
    c[0x05] = {
        "MEM_REGISTER",
        sizeof(ndk_u_mem_register),
        {FLD(ndk_u_mem_register, pd_handle, kHandle, kPd),
         FLD(ndk_u_mem_register, flags, kFlags, kAny, 1, 3),
         FLD(ndk_u_mem_register, address, kAddr), FLD(ndk_u_mem_register, length, kLen),
         FLD(ndk_u_mem_register, handle, kOut), FLD(ndk_u_mem_register, local_token, kOut),
         FLD(ndk_u_mem_register, references, kOut), FLD(ndk_u_mem_register, cache_slot, kOut),
         FLD(ndk_u_mem_register, reserved, kRes), FLD(ndk_u_mem_register, cache_generation, kOut)},
        kMem,
        offsetof(ndk_u_mem_register, handle)};
    c[0x06] = {
        "MEM_DEREGISTER",
        sizeof(ndk_u_mem_deregister),
        {FLD(ndk_u_mem_deregister, handle, kHandle, kMem), FLD(ndk_u_mem_deregister, flags, kFlags),
         FLD(ndk_u_mem_deregister, references, kOut), FLD(ndk_u_mem_deregister, reserved, kRes)}};
    c[0x07] = {"HANDLE_CLOSE",
               sizeof(ndk_u_handle_close),
               {FLD(ndk_u_handle_close, handle, kHandle), FLD(ndk_u_handle_close, flags, kFlags)}};
    c[0x08] = {"CQ_CREATE",
               sizeof(ndk_u_cq_create),
               {FLD(ndk_u_cq_create, adapter_handle, kHandle, kAd),
                FLD(ndk_u_cq_create, depth, kNum, kAny, 1, 64),
                FLD(ndk_u_cq_create, flags, kFlags, kAny, 0, 1), FLD(ndk_u_cq_create, handle, kOut),
                FLD(ndk_u_cq_create, context, kCtx), FLD(ndk_u_cq_create, ring_offset, kOut),
                FLD(ndk_u_cq_create, ring_size, kOut), FLD(ndk_u_cq_create, ring_entries, kOut)},
               kCq,
               offsetof(ndk_u_cq_create, handle)};
    c[0x09] = {
        "CQ_ARM",
        sizeof(ndk_u_cq_arm),
        {FLD(ndk_u_cq_arm, handle, kHandle, kCq), FLD(ndk_u_cq_arm, type, kNum, kAny, 0, 2)}};
    c[0x0a] = {"CQ_POLL",
               sizeof(ndk_u_cq_poll),
               {FLD(ndk_u_cq_poll, handle, kHandle, kCq),
                FLD(ndk_u_cq_poll, count, kNum, kAny, 1, 16), FLD(ndk_u_cq_poll, results, kPtr)}};
    c[0x0b] = {"QP_CREATE",
               sizeof(ndk_u_qp_create),
               {FLD(ndk_u_qp_create, pd_handle, kHandle, kPd),
                FLD(ndk_u_qp_create, receive_cq_handle, kHandle, kCq),
                FLD(ndk_u_qp_create, initiator_cq_handle, kHandle, kCq),
                FLD(ndk_u_qp_create, flags, kFlags, kAny, 0, 1),
                FLD(ndk_u_qp_create, receive_queue_depth, kNum, kAny, 1, 16),
                FLD(ndk_u_qp_create, initiator_queue_depth, kNum, kAny, 1, 16),
                FLD(ndk_u_qp_create, max_receive_request_sge, kNum, kAny, 1, 2),
                FLD(ndk_u_qp_create, max_initiator_request_sge, kNum, kAny, 1, 2),
                FLD(ndk_u_qp_create, inline_data_size, kNum, kAny, 0, 64),
                FLD(ndk_u_qp_create, handle, kOut), FLD(ndk_u_qp_create, context, kCtx),
                FLD(ndk_u_qp_create, ring_offset, kOut), FLD(ndk_u_qp_create, ring_size, kOut),
                FLD(ndk_u_qp_create, ring_entries, kOut)},
               kQp,
               offsetof(ndk_u_qp_create, handle)};
    c[0x0c] = {
        "QP_POST",
        sizeof(ndk_u_qp_post),
        {FLD(ndk_u_qp_post, qp_handle, kHandle, kQp), FLD(ndk_u_qp_post, op, kOp),
         FLD(ndk_u_qp_post, flags, kFlags, kAny, 0, 0x3ff),
         FLD(ndk_u_qp_post, nsge, kNum, kAny, 0, 2), FLD(ndk_u_qp_post, request_context, kCtx),
         FLD(ndk_u_qp_post, sgl, kSgl), FLD(ndk_u_qp_post, remote_address, kAddr),
         FLD(ndk_u_qp_post, remote_token, kToken), FLD(ndk_u_qp_post, object_handle, kHandle, kMw),
         FLD(ndk_u_qp_post, mr_handle, kHandle, kMem), FLD(ndk_u_qp_post, token, kOut),
         FLD(ndk_u_qp_post, address, kAddr), FLD(ndk_u_qp_post, length, kLen)}};
    c[0x0d] = {"QP_FLUSH",
               sizeof(ndk_u_qp_flush),
               {FLD(ndk_u_qp_flush, handle, kHandle, kQp), FLD(ndk_u_qp_flush, flags, kFlags)}};
    c[0x0e] = {"MR_CREATE",
               sizeof(ndk_u_mr_create),
               {FLD(ndk_u_mr_create, pd_handle, kHandle, kPd),
                FLD(ndk_u_mr_create, flags, kFlags, kAny, 0, 1), FLD(ndk_u_mr_create, handle, kOut),
                FLD(ndk_u_mr_create, reserved, kRes)},
               kMr,
               offsetof(ndk_u_mr_create, handle)};
    c[0x0f] = {
        "MR_REGISTER",
        sizeof(ndk_u_mr_register),
        {FLD(ndk_u_mr_register, handle, kHandle, kMr),
         FLD(ndk_u_mr_register, flags, kFlags, kAny, 0, 15), FLD(ndk_u_mr_register, address, kAddr),
         FLD(ndk_u_mr_register, length, kLen), FLD(ndk_u_mr_register, local_token, kOut),
         FLD(ndk_u_mr_register, remote_token, kOut)}};
    c[0x10] = {
        "MR_DEREGISTER",
        sizeof(ndk_u_mr_deregister),
        {FLD(ndk_u_mr_deregister, handle, kHandle, kMr), FLD(ndk_u_mr_deregister, flags, kFlags)}};
    c[0x11] = {
        "MR_INIT_FR",
        sizeof(ndk_u_mr_init_fr),
        {FLD(ndk_u_mr_init_fr, handle, kHandle, kMr),
         FLD(ndk_u_mr_init_fr, adapter_page_count, kNum, kAny, 1, 16),
         FLD(ndk_u_mr_init_fr, flags, kFlags, kAny, 0, 1), FLD(ndk_u_mr_init_fr, reserved, kRes)}};
    c[0x12] = {"MW_CREATE",
               sizeof(ndk_u_mw_create),
               {FLD(ndk_u_mw_create, pd_handle, kHandle, kPd), FLD(ndk_u_mw_create, flags, kFlags),
                FLD(ndk_u_mw_create, handle, kOut), FLD(ndk_u_mw_create, reserved, kRes)},
               kMw,
               offsetof(ndk_u_mw_create, handle)};
    c[0x13] = {
        "TOKEN_QUERY",
        sizeof(ndk_u_token_query),
        {FLD(ndk_u_token_query, handle, kHandle), FLD(ndk_u_token_query, flags, kFlags),
         FLD(ndk_u_token_query, local_token, kOut), FLD(ndk_u_token_query, remote_token, kOut)}};
    c[0x14] = {
        "CONNECTOR_CREATE",
        sizeof(ndk_u_connector_create),
        {FLD(ndk_u_connector_create, adapter_handle, kHandle, kAd),
         FLD(ndk_u_connector_create, flags, kFlags), FLD(ndk_u_connector_create, handle, kOut),
         FLD(ndk_u_connector_create, reserved, kRes), FLD(ndk_u_connector_create, context, kCtx)},
        kCon,
        offsetof(ndk_u_connector_create, handle)};
    c[0x15] = {"CONNECT",
               sizeof(ndk_u_connect),
               {FLD(ndk_u_connect, connector_handle, kHandle, kCon),
                FLD(ndk_u_connect, qp_handle, kHandle, kQp), FLD(ndk_u_connect, flags, kFlags),
                FLD(ndk_u_connect, private_data_length, kNum, kAny, 0, 56),
                FLD(ndk_u_connect, inbound_read_limit, kNum, kAny, 0, 1),
                FLD(ndk_u_connect, outbound_read_limit, kNum, kAny, 0, 1),
                FLD(ndk_u_connect, request_context, kCtx), FLD(ndk_u_connect, private_data, kPtr),
                FLD(ndk_u_connect, src_address, kSock), FLD(ndk_u_connect, dest_address, kSock)}};
    c[0x16] = {"COMPLETE_CONNECT",
               sizeof(ndk_u_connector_request),
               {FLD(ndk_u_connector_request, connector_handle, kHandle, kCon),
                FLD(ndk_u_connector_request, flags, kFlags),
                FLD(ndk_u_connector_request, request_context, kCtx)}};
    c[0x17] = {"ACCEPT",
               sizeof(ndk_u_accept),
               {FLD(ndk_u_accept, connector_handle, kHandle, kCon),
                FLD(ndk_u_accept, qp_handle, kHandle, kQp),
                FLD(ndk_u_accept, inbound_read_limit, kNum, kAny, 0, 1),
                FLD(ndk_u_accept, outbound_read_limit, kNum, kAny, 0, 1),
                FLD(ndk_u_accept, private_data_length, kNum, kAny, 0, 64),
                FLD(ndk_u_accept, flags, kFlags), FLD(ndk_u_accept, request_context, kCtx),
                FLD(ndk_u_accept, private_data, kPtr)}};
    c[0x18] = {"REJECT",
               sizeof(ndk_u_reject),
               {FLD(ndk_u_reject, connector_handle, kHandle, kCon),
                FLD(ndk_u_reject, private_data_length, kNum, kAny, 0, 64),
                FLD(ndk_u_reject, private_data, kPtr)}};
    c[0x19] = {"DISCONNECT",
               sizeof(ndk_u_connector_request),
               {FLD(ndk_u_connector_request, connector_handle, kHandle, kCon),
                FLD(ndk_u_connector_request, flags, kFlags),
                FLD(ndk_u_connector_request, request_context, kCtx)}};
    c[0x1a] = {
        "CONNECTOR_QUERY",
        sizeof(ndk_u_connector_query),
        {FLD(ndk_u_connector_query, connector_handle, kHandle, kCon),
         FLD(ndk_u_connector_query, flags, kFlags),
         FLD(ndk_u_connector_query, inbound_read_limit, kOut),
         FLD(ndk_u_connector_query, private_data_length, kNum, kAny, 0, 256),
         FLD(ndk_u_connector_query, reserved, kRes), FLD(ndk_u_connector_query, private_data, kPtr),
         FLD(ndk_u_connector_query, local_address, kOut)}};
    c[0x1b] = {
        "LISTENER_CREATE",
        sizeof(ndk_u_listener_create),
        {FLD(ndk_u_listener_create, adapter_handle, kHandle, kAd),
         FLD(ndk_u_listener_create, flags, kFlags), FLD(ndk_u_listener_create, handle, kOut),
         FLD(ndk_u_listener_create, reserved, kRes), FLD(ndk_u_listener_create, context, kCtx)},
        kLis,
        offsetof(ndk_u_listener_create, handle)};
    c[0x1c] = {"LISTEN",
               sizeof(ndk_u_listen),
               {FLD(ndk_u_listen, listener_handle, kHandle, kLis), FLD(ndk_u_listen, flags, kFlags),
                FLD(ndk_u_listen, address, kSock)}};
    c[0x1d] = {"EVENT_GET",
               sizeof(ndk_u_event_get),
               {FLD(ndk_u_event_get, flags, kFlags), FLD(ndk_u_event_get, count, kNum, kAny, 1, 16),
                FLD(ndk_u_event_get, events, kPtr)}};
    c[0x1e] = {"QP_DOORBELL",
               sizeof(ndk_u_qp_doorbell),
               {FLD(ndk_u_qp_doorbell, handle, kHandle, kQp), FLD(ndk_u_qp_doorbell, flags, kFlags),
                FLD(ndk_u_qp_doorbell, head, kNum, kAny, 0, 64),
                FLD(ndk_u_qp_doorbell, count, kNum, kAny, 1, 16),
                FLD(ndk_u_qp_doorbell, error, kOut), FLD(ndk_u_qp_doorbell, reserved, kRes)}};
    return c;
}

// Documented errnos: every `E...` name Documentation/uapi.md mentions.
std::set<int> DocumentedErrnos(const char* path, std::string* names) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    std::map<std::string, int> byname;
    for (int e = 1; e < 200; e++)
        if (const char* n = strerrorname_np(e)) byname.emplace(n, e);
    std::set<int> out;
    std::regex re("`(E[A-Z0-9]+)`");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it) {
        auto f = byname.find((*it)[1].str());
        if (f != byname.end() && out.insert(f->second).second) *names += f->first + " ";
    }
    return out;
}

// The handles one file holds, as far as the fuzzer knows.
struct Pool {
    std::vector<std::uint32_t> live[kNTypes];
    std::vector<std::uint32_t> stale;
    void Add(HType t, std::uint32_t h) {
        if (h) live[t].push_back(h);
    }
    void Gone(std::uint32_t h) {
        for (auto& v : live) std::erase(v, h);
        stale.push_back(h);
        if (stale.size() > 256) stale.erase(stale.begin());
    }
    bool Empty() const {
        for (auto& v : live)
            if (!v.empty()) return false;
        return true;
    }
};

struct File {
    int fd = -1;
    Pool pool;
    std::uint32_t listener_port = 0;
};

class Fuzzer {
  public:
    Fuzzer(std::uint64_t seed, bool trace, const std::set<int>& documented)
        : rng_(seed), trace_(trace), documented_(documented), cmds_(Commands()) {
        arena_ = std::make_unique<rel::Mapping>(16 * kPage);
        scratch_ = std::make_unique<rel::Mapping>(32 * kPage);
        argmap_ = std::make_unique<rel::Mapping>(8 * kPage);
        ro_ = std::make_unique<rel::Mapping>(kPage);
        // A hole: one page unmapped between two mapped ones.
        hole_ = std::make_unique<rel::Mapping>(3 * kPage);
        munmap(hole_->get() + kPage, kPage);
        // The last page of the argument area is PROT_NONE (a struct
        // placed right before it has no tail).
        mprotect(argmap_->get() + 7 * kPage, kPage, PROT_NONE);
        std::memset(arena_->get(), 0x5a, arena_->size());
        std::memset(ro_->get(), 0, kPage);
        mprotect(ro_->get(), kPage, PROT_READ);
    }

    // One epoch: two files, valid objects, @calls random calls; closes.
    void Epoch(long calls, long* done) {
        File files[2];
        for (auto& f : files) {
            f.fd = t_open_ndk();
            Populate(f);
        }
        // A connected loopback pair on file 0 (deeper QP_POST paths).
        Connect(files[0]);
        for (long i = 0; i < calls; i++) {
            if (i % 400 == 399) {
                for (auto& f : files) Populate(f);
            }
            int which = Pick(100) < 85 ? 0 : 1;
            Call(files[which], files[which ^ 1]);
            ++*done;
        }
        for (auto& f : files) close(f.fd);
    }

    // Calls on a file of another process (the parent's): counted apart.
    void ForeignCalls(int fd, long calls) {
        File f{fd, {}, 0}, other{-1, {}, 0};
        for (long i = 0; i < calls; i++) Call(f, other, true);
    }

    std::uint32_t Pick(std::uint32_t n) { return static_cast<std::uint32_t>(rng_() % n); }
    std::uint64_t R64() { return rng_(); }

    long calls_ = 0, successes_ = 0, violations_ = 0, slow_ = 0;
    double max_secs_ = 0;
    std::string max_what_;
    std::map<int, long> errnos_;
    std::map<std::string, std::map<int, long>> per_cmd_;

  private:
    // Valid objects of every kind on @f, through the same table.
    void Populate(File& f) {
        auto call = [&](unsigned long cmd, void* arg, HType t, std::uint32_t* h) {
            ++calls_;
            if (ioctl(f.fd, cmd, arg) != 0) return 0u;
            ++successes_;
            f.pool.Add(t, *h);
            return *h;
        };
        std::uint32_t ad = f.pool.live[kAd].empty() ? 0 : f.pool.live[kAd][0];
        if (!ad) {
            long id = t_first_adapter(f.fd);
            ndk_u_adapter_open a{};
            a.adapter_id = static_cast<std::uint32_t>(id);
            ad = call(NDK_IOCTL_ADAPTER_OPEN, &a, kAd, &a.handle);
            if (!ad) return;
        }
        ndk_u_pd_create p{};
        p.adapter_handle = ad;
        std::uint32_t pd = call(NDK_IOCTL_PD_CREATE, &p, kPd, &p.handle);
        for (int i = 0; pd && i < 3; i++) {
            ndk_u_mem_register m{};
            m.pd_handle = pd;
            m.flags = 1 + Pick(3);
            m.address = arena_->addr() + Pick(8) * kPage + Pick(2) * Pick(kPage);
            m.length = 1 + Pick(4 * kPage);
            if (call(NDK_IOCTL_MEM_REGISTER, &m, kMem, &m.handle)) Token(m.local_token);
        }
        ndk_u_cq_create cc{};
        cc.adapter_handle = ad;
        cc.depth = 16;
        std::uint32_t cq = call(NDK_IOCTL_CQ_CREATE, &cc, kCq, &cc.handle);
        if (pd && cq) {
            ndk_u_qp_create qc{};
            qc.pd_handle = pd;
            qc.receive_cq_handle = qc.initiator_cq_handle = cq;
            qc.receive_queue_depth = qc.initiator_queue_depth = 8;
            qc.max_receive_request_sge = qc.max_initiator_request_sge = 2;
            call(NDK_IOCTL_QP_CREATE, &qc, kQp, &qc.handle);
        }
        ndk_u_mr_create mc{};
        mc.pd_handle = pd;
        std::uint32_t mr = pd ? call(NDK_IOCTL_MR_CREATE, &mc, kMr, &mc.handle) : 0;
        if (mr) {
            ndk_u_mr_register r{};
            r.handle = mr;
            r.flags = NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_U_MR_FLAG_ALLOW_REMOTE_READ;
            r.address = arena_->addr() + 8 * kPage;
            r.length = 4 * kPage;
            ++calls_;
            if (ioctl(f.fd, NDK_IOCTL_MR_REGISTER, &r) == 0) {
                ++successes_;
                Token(r.local_token);
                Token(r.remote_token);
            }
        }
        mc = {};
        mc.pd_handle = pd;
        mc.flags = NDK_U_MR_CREATE_F_FAST_REGISTER;
        mr = pd ? call(NDK_IOCTL_MR_CREATE, &mc, kMr, &mc.handle) : 0;
        if (mr) {
            ndk_u_mr_init_fr fi{};
            fi.handle = mr;
            fi.adapter_page_count = 4;
            fi.flags = NDK_U_MR_INIT_FR_F_REMOTE_ACCESS;
            ++calls_;
            successes_ += ioctl(f.fd, NDK_IOCTL_MR_INIT_FR, &fi) == 0;
        }
        ndk_u_mw_create wc{};
        wc.pd_handle = pd;
        if (pd) call(NDK_IOCTL_MW_CREATE, &wc, kMw, &wc.handle);
        ndk_u_connector_create cn{};
        cn.adapter_handle = ad;
        call(NDK_IOCTL_CONNECTOR_CREATE, &cn, kCon, &cn.handle);
        if (!f.listener_port) {
            ndk_u_listener_create lc{};
            lc.adapter_handle = ad;
            std::uint32_t lis = call(NDK_IOCTL_LISTENER_CREATE, &lc, kLis, &lc.handle);
            ndk_u_listen ln{};
            ln.listener_handle = lis;
            sockaddr_in sin = rel::LoopbackAddress();
            std::memcpy(ln.address, &sin, sizeof(sin));
            ++calls_;
            if (lis && ioctl(f.fd, NDK_IOCTL_LISTEN, &ln) == 0) {
                ++successes_;
                std::memcpy(&sin, ln.address, sizeof(sin));
                f.listener_port = ntohs(sin.sin_port);
            }
        }
    }

    void Connect(File& f) {
        rel::Dev d(f.fd);
        std::uint32_t ad = f.pool.live[kAd].empty() ? 0 : f.pool.live[kAd][0];
        std::uint32_t pd = f.pool.live[kPd].empty() ? 0 : f.pool.live[kPd][0];
        sockaddr_in bound{};
        std::uint32_t lis = ad ? rel::Listen(d, ad, &bound) : 0;
        rel::Conn c;
        if (lis && rel::Connect(d, ad, lis, bound, pd, pd, &c)) {
            for (int i = 0; i < 2; i++) {
                f.pool.Add(kCq, c.cq[i]);
                f.pool.Add(kQp, c.qp[i]);
            }
            f.pool.Add(kCon, c.con);
            f.pool.Add(kCon, c.acc);
            ++connections_;
        }
        if (lis) f.pool.Add(kLis, lis);
        d.Release();  // the file belongs to the epoch
    }

    void Token(std::uint32_t t) {
        if (!t) return;
        tokens_.push_back(t);
        if (tokens_.size() > 64) tokens_.erase(tokens_.begin());
    }

    std::uint32_t GenHandle(HType want, const File& f, const File& other) {
        const Pool& p = f.pool;
        auto from = [&](const std::vector<std::uint32_t>& v) -> std::uint32_t {
            return v.empty() ? 1 + Pick(64) : v[Pick(static_cast<std::uint32_t>(v.size()))];
        };
        std::uint32_t r = Pick(100);
        if (r < 40 && want != kAny && !p.live[want].empty()) return from(p.live[want]);
        if (r < 62) return from(p.live[1 + Pick(kNTypes - 1)]);
        if (r < 72) return from(p.stale);
        if (r < 80) return from(other.pool.live[1 + Pick(kNTypes - 1)]);
        if (r < 85) return 0;
        if (r < 88) return Pick(2) ? 0xffffffffu : 0x80000000u;
        if (r < 95) return 1 + Pick(300);
        return static_cast<std::uint32_t>(R64());
    }

    std::uint64_t GenFlags() {
        std::uint32_t r = Pick(100);
        if (r < 50) return 0;
        if (r < 65) return Pick(0x400);
        if (r < 75) return 1ull << Pick(32);
        if (r < 85) return 0xffffffffull;
        return R64();
    }

    std::uint64_t GenNum() {
        static const std::uint64_t edge[] = {0,    1,    2,     3,     4,          16,        32,
                                             33,   63,   64,    65,    256,        257,       1024,
                                             1025, 4096, 32768, 65536, 0x7fffffff, 0xffffffff};
        std::uint32_t r = Pick(100);
        if (r < 30) return 1 + Pick(4);
        if (r < 70) return edge[Pick(sizeof(edge) / sizeof(edge[0]))];
        if (r < 85) return Pick(2000);
        return R64();
    }

    std::uint64_t GenLen() {
        static const std::uint64_t edge[] = {
            0,          1,     2,           4095,      4096,          4097,
            8191,       8192,  3 * 4096,    16 * 4096, 16 * 4096 + 1, 1ull << 30,
            1ull << 47, ~0ull, ~0ull - 4095};
        std::uint32_t r = Pick(100);
        if (r < 60) return edge[Pick(sizeof(edge) / sizeof(edge[0]))];
        if (r < 90) return 1 + Pick(8 * kPage);
        return R64();
    }

    std::uint64_t GenAddr() {
        std::uint32_t r = Pick(100);
        std::uintptr_t a = arena_->addr();
        if (r < 25) return a + Pick(16) * kPage;
        if (r < 40) return a + Pick(16) * kPage + (Pick(2) ? 1 : kPage - 1);
        if (r < 60) return a + Pick(16 * kPage);
        if (r < 65) return 0;
        if (r < 72) return hole_->addr() + kPage + Pick(kPage);
        if (r < 77) return Pick(2) ? 0xffff888000000000ull : 0xffffffff81000000ull;
        if (r < 81) return ~0ull - Pick(8192);
        if (r < 85) return 0x00007ffffffff000ull + Pick(kPage);
        if (r < 92) return ro_->addr() + Pick(kPage);
        return R64();
    }

    // A user pointer argument: valid scratch mostly, else bad.
    std::uint64_t GenPtr() {
        std::uint32_t r = Pick(100);
        std::uintptr_t s = scratch_->addr();
        if (r < 55) return s + Pick(4) * kPage;
        if (r < 62) return 0;
        if (r < 69) return hole_->addr() + kPage + Pick(kPage);
        if (r < 74) return 0xffff888000000000ull;
        if (r < 84) return s + 1 + Pick(7);
        if (r < 92) return ro_->addr();
        if (r < 96) return s + scratch_->size() - 8 - Pick(64);  // runs off the end
        return R64();
    }

    std::uint64_t GenSgl() {
        std::uint64_t p = GenPtr();
        std::uintptr_t s = scratch_->addr();
        if (p >= s && p + 33 * sizeof(ndk_u_sge) <= s + scratch_->size()) {
            auto* sge = reinterpret_cast<ndk_u_sge*>(p);
            std::uint32_t n = 1 + Pick(33);
            for (std::uint32_t i = 0; i < n; i++) {
                ndk_u_sge g{};
                g.address = GenAddr();
                g.length = static_cast<std::uint32_t>(Pick(3) ? Pick(2 * kPage) : GenLen());
                g.token = GenToken();
                std::memcpy(&sge[i], &g, sizeof(g));
            }
        }
        return p;
    }

    std::uint32_t GenToken() {
        std::uint32_t r = Pick(100);
        if (r < 50 && !tokens_.empty())
            return tokens_[Pick(static_cast<std::uint32_t>(tokens_.size()))];
        if (r < 60) return 0;
        if (r < 70 && !tokens_.empty()) return tokens_[0] ^ (1u << Pick(32));
        return static_cast<std::uint32_t>(R64());
    }

    void GenSock(unsigned char* out, const File& f) {
        std::memset(out, 0, NDK_U_SOCKADDR_SIZE);
        std::uint32_t r = Pick(100);
        if (r < 45) {
            sockaddr_in sin = rel::LoopbackAddress(
                static_cast<std::uint16_t>(Pick(2) ? f.listener_port : Pick(65536)));
            if (Pick(5) == 0) sin.sin_addr.s_addr = static_cast<std::uint32_t>(R64());
            std::memcpy(out, &sin, sizeof(sin));
        } else if (r < 55) {
            sockaddr_in6 s6{};
            s6.sin6_family = AF_INET6;
            s6.sin6_addr.s6_addr[15] = 1;
            s6.sin6_port = htons(static_cast<std::uint16_t>(Pick(65536)));
            std::memcpy(out, &s6, sizeof(s6));
        } else if (r < 65) {
            sockaddr_in sin = rel::LoopbackAddress(static_cast<std::uint16_t>(f.listener_port));
            std::memcpy(out, &sin, sizeof(sin));
            out[sizeof(sin) + Pick(NDK_U_SOCKADDR_SIZE - sizeof(sin))] = 1;  // pad
        } else if (r < 75) {
            out[0] = static_cast<unsigned char>(Pick(256));
        } else if (r < 85) {
            // all zero: "any" source / a bad destination
        } else {
            for (int i = 0; i < NDK_U_SOCKADDR_SIZE; i++)
                out[i] = static_cast<unsigned char>(R64());
        }
    }

    void Put(unsigned char* buf, const Field& fl, std::uint64_t v) {
        if (fl.size == 4) {
            auto x = static_cast<std::uint32_t>(v);
            std::memcpy(buf + fl.off, &x, 4);
        } else if (fl.size == 8) {
            std::memcpy(buf + fl.off, &v, 8);
        } else if (fl.size == 2) {
            auto x = static_cast<std::uint16_t>(v);
            std::memcpy(buf + fl.off, &x, 2);
        } else {
            for (unsigned i = 0; i < fl.size; i++)
                buf[fl.off + i] = Pick(6) ? 0 : static_cast<unsigned char>(v >> (i % 8));
        }
    }

    // A valid value for @fl, or false when the field has none to offer.
    bool Clean(const Field& fl, unsigned char* buf, const File& f) {
        std::uintptr_t s = scratch_->addr();
        switch (fl.kind) {
            case kHandle:
                if (fl.htype == kAny || f.pool.live[fl.htype].empty()) return false;
                Put(buf, fl,
                    f.pool.live[fl.htype]
                               [Pick(static_cast<std::uint32_t>(f.pool.live[fl.htype].size()))]);
                return true;
            case kFlags:
            case kNum:
                Put(buf, fl, fl.lo + Pick(fl.hi - fl.lo + 1));
                return true;
            case kAddr:
                Put(buf, fl, arena_->addr() + Pick(8) * kPage + Pick(kPage));
                return true;
            case kLen:
                Put(buf, fl, 1 + Pick(4 * kPage));
                return true;
            case kPtr:
                Put(buf, fl, s + Pick(4) * kPage);
                return true;
            case kSgl: {
                auto* sge = reinterpret_cast<ndk_u_sge*>(s + 8 * kPage);
                for (int i = 0; i < 2; i++) {
                    ndk_u_sge g{arena_->addr() + 8 * kPage + Pick(kPage), 1 + Pick(kPage),
                                GenToken()};
                    std::memcpy(&sge[i], &g, sizeof(g));
                }
                Put(buf, fl, reinterpret_cast<std::uintptr_t>(sge));
                return true;
            }
            case kToken:
                Put(buf, fl, GenToken());
                return true;
            case kSock: {
                std::memset(buf + fl.off, 0, NDK_U_SOCKADDR_SIZE);
                sockaddr_in sin = rel::LoopbackAddress(static_cast<std::uint16_t>(f.listener_port));
                if (Pick(3) == 0) sin.sin_port = 0;
                std::memcpy(buf + fl.off, &sin, sizeof(sin));
                return true;
            }
            case kOp:
                Put(buf, fl, 1 + Pick(8));
                return true;
            case kOut:
            case kRes:
                Put(buf, fl, 0);
                return true;
            case kCtx:
                Put(buf, fl, R64());
                return true;
        }
        return false;
    }

    std::uint32_t Live(const File& f, HType t) {
        const auto& v = f.pool.live[t];
        return v.empty() ? 0 : v[Pick(static_cast<std::uint32_t>(v.size()))];
    }

    // A clean QP_POST: the fields its operation uses, valid; the others 0.
    void CleanPost(unsigned char* buf, const File& f) {
        ndk_u_qp_post p{};
        p.qp_handle = Live(f, kQp);
        p.op = 1 + Pick(8);
        p.request_context = R64();
        std::uintptr_t a = arena_->addr() + 8 * kPage;
        static const std::uint32_t kXfer[] = {0,
                                              NDK_U_OP_FLAG_SILENT_SUCCESS,
                                              NDK_U_OP_FLAG_READ_FENCE,
                                              NDK_U_OP_FLAG_SEND_AND_SOLICIT_EVENT,
                                              NDK_U_OP_FLAG_INLINE,
                                              NDK_U_OP_FLAG_DEFER};
        static const std::uint32_t kRights[] = {
            0, NDK_U_OP_FLAG_ALLOW_REMOTE_READ, NDK_U_OP_FLAG_ALLOW_LOCAL_WRITE,
            NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE,
            NDK_U_OP_FLAG_ALLOW_REMOTE_READ | NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE};
        switch (p.op) {
            case NDK_U_OP_SEND:
            case NDK_U_OP_SEND_INVALIDATE:
            case NDK_U_OP_READ:
            case NDK_U_OP_WRITE:
            case NDK_U_OP_RECEIVE: {
                Field fl{offsetof(ndk_u_qp_post, sgl), 8, kSgl};
                Clean(fl, buf, f);
                std::memcpy(&p.sgl, buf + fl.off, 8);
                p.nsge = Pick(3);
                if (p.op != NDK_U_OP_RECEIVE) p.flags = kXfer[Pick(6)];
                if (p.op == NDK_U_OP_SEND_INVALIDATE || p.op == NDK_U_OP_READ ||
                    p.op == NDK_U_OP_WRITE)
                    p.remote_token = GenToken();
                if (p.op == NDK_U_OP_READ || p.op == NDK_U_OP_WRITE)
                    p.remote_address = a + Pick(4 * kPage);
                break;
            }
            case NDK_U_OP_FAST_REGISTER:
            case NDK_U_OP_BIND:
                p.object_handle = Live(f, p.op == NDK_U_OP_BIND ? kMw : kMr);
                p.mr_handle = Live(f, Pick(2) ? kMem : kMr);
                p.address = Pick(2) ? a + Pick(kPage) : arena_->addr() + Pick(8 * kPage);
                p.length = 1 + Pick(3 * kPage);
                if (p.op == NDK_U_OP_FAST_REGISTER) p.remote_address = p.address;
                p.flags = kRights[Pick(5)];
                break;
            default:
                p.object_handle = Live(f, Pick(2) ? kMw : kMr);
                break;
        }
        std::memcpy(buf, &p, sizeof(p));
        // Now and then one field is wrong after all.
        if (Pick(100) < 10) {
            const Cmd& c = cmds_[0x0c];
            Fill1(c.fields[Pick(static_cast<std::uint32_t>(c.fields.size()))], buf, f, f);
        }
    }

    void Fill(const Cmd& c, unsigned char* buf, const File& f, const File& other, bool clean) {
        if (clean && &c == &cmds_[0x0c]) {
            CleanPost(buf, f);
            return;
        }
        for (const Field& fl : c.fields) {
            if (clean && Pick(100) < 93 && Clean(fl, buf, f)) continue;
            Fill1(fl, buf, f, other);
        }
    }

    void Fill1(const Field& fl, unsigned char* buf, const File& f, const File& other) {
        {
            switch (fl.kind) {
                case kHandle:
                    Put(buf, fl, GenHandle(fl.htype, f, other));
                    break;
                case kFlags:
                    Put(buf, fl, GenFlags());
                    break;
                case kNum:
                    Put(buf, fl, GenNum());
                    break;
                case kAddr:
                    Put(buf, fl, GenAddr());
                    break;
                case kLen:
                    Put(buf, fl, GenLen());
                    break;
                case kPtr:
                    Put(buf, fl, GenPtr());
                    break;
                case kSgl:
                    Put(buf, fl, GenSgl());
                    break;
                case kToken:
                    Put(buf, fl, GenToken());
                    break;
                case kCtx:
                    Put(buf, fl, R64());
                    break;
                case kSock:
                    GenSock(buf + fl.off, f);
                    break;
                case kOp:
                    Put(buf, fl, Pick(10) < 8 ? 1 + Pick(8) : GenNum());
                    break;
                case kOut:
                case kRes:
                    Put(buf, fl, Pick(100) < 85 ? 0 : (Pick(2) ? 1 : R64()));
                    break;
            }
        }
    }

    // What the kernel must answer ENOTTY to by its type, direction, number.
    static bool MustBeEnotty(unsigned long cmd) {
        return _IOC_TYPE(cmd) != NDK_IOCTL_MAGIC || _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
               _IOC_NR(cmd) > kLastNr;
    }

    // A type byte that is not ours, and that the VFS does not handle
    // itself before the driver (0, 'T', 'X', 'f', 0x94).
    std::uint32_t ForeignType() {
        for (;;) {
            std::uint32_t t = Pick(256);
            if (t != NDK_IOCTL_MAGIC && t != 0 && t != 'T' && t != 'X' && t != 'f' && t != 0x94)
                return t;
        }
    }

    void Call(File& f, const File& other, bool foreign = false) {
        std::uint32_t nr = Pick(kLastNr + 1);
        const Cmd& c = cmds_[nr];
        // Half the calls are clean: exact size, our type, a valid pointer,
        // and valid field values but for a few (deeper paths).
        bool clean = Pick(100) < 50;
        // Size of the argument.
        std::uint32_t size = c.size;
        bool nonzero_tail = false;
        std::uint32_t r = clean ? 100 : Pick(100);
        if (r < 5)
            size = 0;
        else if (r < 10)
            size = Pick(c.size);
        else if (r < 15)
            size = c.size + 8 * (1 + Pick(8));
        else if (r < 20) {
            size = c.size + 1 + Pick(64);
            nonzero_tail = true;
        } else if (r < 23)
            size = Pick(1u << 14);
        else if (r < 25 && nr == 0x05)
            size = offsetof(ndk_u_mem_register, cache_slot);  // the first version
        unsigned long cmd = _IOC(_IOC_READ | _IOC_WRITE, NDK_IOCTL_MAGIC, nr, size);
        // The command number itself.
        r = clean ? 100 : Pick(100);
        if (r < 4)
            cmd = _IOC(_IOC_READ | _IOC_WRITE, NDK_IOCTL_MAGIC,
                       kLastNr + 1 + Pick(256 - kLastNr - 1), size);
        else if (r < 7)
            cmd = _IOC(Pick(3), NDK_IOCTL_MAGIC, nr, size);  // NONE, WRITE or READ only
        else if (r < 10)
            cmd = _IOC(_IOC_READ | _IOC_WRITE, ForeignType(), nr, size);
        else if (r < 12)
            cmd = (static_cast<unsigned long>(R64()) & 0xffff00ffu) | (ForeignType() << 8);

        // The argument.
        unsigned char* base = argmap_->get();
        std::memset(base, 0, 7 * kPage);
        Fill(c, base, f, other, clean);
        if (nonzero_tail)
            base[c.size + Pick(size - c.size)] = static_cast<unsigned char>(1 + Pick(255));
        unsigned char* arg = base;
        r = clean ? 100 : Pick(100);
        if (r < 3) {
            arg = nullptr;
        } else if (r < 5) {
            arg = hole_->get() + kPage;
        } else if (r < 7) {
            arg = reinterpret_cast<unsigned char*>(0xffff888000000000ull);
        } else if (r < 10) {
            arg = base + 1 + Pick(7);  // misaligned copy
            std::memmove(arg, base, c.size + 64);
        } else if (r < 12) {
            mprotect(ro_->get(), kPage, PROT_READ | PROT_WRITE);
            std::memcpy(ro_->get(), base, std::min<std::uint32_t>(kPage, c.size));
            mprotect(ro_->get(), kPage, PROT_READ);
            arg = ro_->get();
        } else if (r < 15 && c.size <= kPage) {
            // Right before the PROT_NONE page: the exact size fits, no more.
            arg = base + 7 * kPage - c.size;
            std::memmove(arg, base, c.size);
        }

        errno = 0;
        double t0 = rel::Now();
        int rc = ioctl(f.fd, cmd, arg);
        int err = rc == 0 ? 0 : errno;
        double dt = rel::Now() - t0;
        ++calls_;
        std::string name = MustBeEnotty(cmd) ? "(foreign)" : c.name;
        if (foreign) name = "foreign:" + name;
        ++errnos_[err];
        ++per_cmd_[name][err];
        if (trace_)
            std::printf("call %ld: cmd %#lx arg %p -> %s\n", calls_, cmd, static_cast<void*>(arg),
                        err ? strerrorname_np(err) : "0");
        if (dt > max_secs_) {
            max_secs_ = dt;
            max_what_ = name;
        }
        bool bad = false;
        if (dt > 2.0) {
            ++slow_;
            bad = true;
        }
        if (err && !documented_.count(err)) bad = true;
        if (MustBeEnotty(cmd) && err != ENOTTY) bad = true;
        if (foreign && !MustBeEnotty(cmd) && nr >= 0x02 && err == 0) bad = true;
        if (bad) {
            ++violations_;
            std::fprintf(stderr, "call %ld: cmd %#lx (%s) size %u arg %p: rc %d %s, %.3f s%s\n",
                         calls_, cmd, name.c_str(), size, static_cast<void*>(arg), rc,
                         err ? strerrorname_np(err) : "", dt,
                         err && !documented_.count(err) ? " (errno not in uapi.md)" : "");
        }
        if (rc != 0 || arg != base || MustBeEnotty(cmd) || foreign) return;
        ++successes_;
        Learn(f, c, nr, base, size);
    }

    // Track what a successful call created, closed or returned.
    void Learn(File& f, const Cmd& c, std::uint32_t nr, const unsigned char* buf,
               std::uint32_t size) {
        auto u32 = [&](std::size_t off) {
            std::uint32_t v = 0;
            if (off + 4 <= size) std::memcpy(&v, buf + off, 4);
            return v;
        };
        if (c.creates != kAny) {
            std::uint32_t h = u32(c.handle_off);
            bool known = false;
            for (auto& v : f.pool.live) known |= std::find(v.begin(), v.end(), h) != v.end();
            if (!known) f.pool.Add(c.creates, h);  // MEM_REGISTER may return a known one
        }
        switch (nr) {
            case 0x05:
                Token(u32(offsetof(ndk_u_mem_register, local_token)));
                break;
            case 0x06:
                if (u32(offsetof(ndk_u_mem_deregister, references)) == 0)
                    f.pool.Gone(u32(offsetof(ndk_u_mem_deregister, handle)));
                break;
            case 0x07:
                f.pool.Gone(u32(offsetof(ndk_u_handle_close, handle)));
                break;
            case 0x0f:
                Token(u32(offsetof(ndk_u_mr_register, remote_token)));
                break;
            case 0x0c:
                Token(u32(offsetof(ndk_u_qp_post, token)));
                break;
            case 0x13:
                Token(u32(offsetof(ndk_u_token_query, remote_token)));
                break;
            case 0x1d: {
                ndk_u_event_get g;
                std::memcpy(&g, buf, sizeof(g));
                std::uintptr_t s = scratch_->addr();
                if (g.events < s || g.events + g.count * sizeof(ndk_u_event) > s + scratch_->size())
                    break;
                for (std::uint32_t i = 0; i < g.count; i++) {
                    ndk_u_event e;
                    std::memcpy(&e, reinterpret_cast<const void*>(g.events + i * sizeof(e)),
                                sizeof(e));
                    if (e.type == NDK_U_EVENT_CONNECT_REQUEST) f.pool.Add(kCon, e.object);
                }
                break;
            }
            default:
                break;
        }
    }

    std::mt19937_64 rng_;
    bool trace_;
    const std::set<int>& documented_;
    std::vector<Cmd> cmds_;
    std::unique_ptr<rel::Mapping> arena_, scratch_, argmap_, ro_, hole_;
    std::vector<std::uint32_t> tokens_;

  public:
    long connections_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s UAPI_MD [--seed N] [--calls N] [--trace]\n", argv[0]);
        return kTestFail;
    }
    std::random_device rd;
    std::uint64_t seed = (static_cast<std::uint64_t>(rd()) << 32) | rd();
    if (const char* s = std::getenv("NDK_FUZZ_SEED")) seed = std::strtoull(s, nullptr, 0);
    long total = rel::Scaled(100000, 20000);
    bool trace = false;
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--seed" && i + 1 < argc)
            seed = std::strtoull(argv[++i], nullptr, 0);
        else if (a == "--calls" && i + 1 < argc)
            total = std::strtol(argv[++i], nullptr, 0);
        else if (a == "--trace")
            trace = true;
    }
    std::string names;
    std::set<int> documented = DocumentedErrnos(argv[1], &names);
    std::printf("rel-fuzz: seed %#llx (replay: rel-fuzz %s --seed %#llx --calls %ld)\n",
                static_cast<unsigned long long>(seed), argv[1],
                static_cast<unsigned long long>(seed), total);
    std::printf("documented errnos (%zu, from %s): %s\n", documented.size(), argv[1],
                names.c_str());
    if (documented.size() < 10) {
        std::fprintf(stderr, "cannot read the errno list of %s\n", argv[1]);
        return kTestFail;
    }
    rel::Counters base = rel::ReadCounters();
    long pin0 = t_vmpin_kb();
    rel::PrintCounters("baseline", base);
    if (base.objects < 0) {
        std::fprintf(stderr, "no debugfs counters\n");
        return kTestFail;
    }

    Fuzzer fz(seed, trace, documented);
    constexpr long kEpoch = 2500;
    long done = 0, epochs = 0, unrestored = 0;
    double t0 = rel::Now();
    while (done < total) {
        fz.Epoch(std::min(kEpoch, total - done), &done);
        ++epochs;
        if (!rel::WaitCounters(base, 10) || t_vmpin_kb() != pin0) {
            ++unrestored;
            rel::PrintCounters("not restored after an epoch", rel::ReadCounters());
        }
    }
    // A forked child on the parent's file: object commands refused.
    long foreign = rel::Scaled(2000, 500);
    int pfd = t_open_ndk();
    std::uint32_t ad = t_adapter_open(pfd, static_cast<std::uint32_t>(t_first_adapter(pfd)));
    std::uint32_t pd = t_pd_create(pfd, ad);
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        Fuzzer child(seed ^ 0x9e3779b97f4a7c15ull, trace, documented);
        child.ForeignCalls(pfd, foreign);
        for (auto& [name, m] : child.per_cmd_)
            if (name.rfind("foreign:", 0) == 0 && m.count(0) && name != "foreign:QUERY_INFO" &&
                name != "foreign:ADAPTER_QUERY" && name != "foreign:(foreign)")
                child.violations_ += m[0];
        std::printf("foreign process on the parent's file: %ld calls, EPERM %ld, violations %ld\n",
                    child.calls_, child.errnos_[EPERM], child.violations_);
        std::fflush(stdout);
        _exit(child.violations_ ? 1 : 0);
    }
    int st = 0;
    T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ndk_u_adapter_info ai{};
    ai.handle = ad;
    T_CHECK(pd != 0 && ioctl(pfd, NDK_IOCTL_ADAPTER_INFO, &ai) == 0);  // still the parent's
    T_CHECK(t_handle_close(pfd, pd) == 0);
    close(pfd);
    double secs = rel::Now() - t0;

    std::printf(
        "\ncalls %ld (%ld fuzzed, %ld epochs of two files, %ld loopback connections), "
        "%ld succeeded, %.1f s, slowest %.3f s (%s)\n",
        fz.calls_, done, epochs, fz.connections_, fz.successes_, secs, fz.max_secs_,
        fz.max_what_.c_str());
    std::printf("errnos seen:\n");
    for (auto& [e, n] : fz.errnos_)
        std::printf("  %-12s %8ld%s\n", e ? strerrorname_np(e) : "success", n,
                    e && !documented.count(e) ? "  NOT DOCUMENTED" : "");
    std::printf("per command (errno: count):\n");
    for (auto& [name, m] : fz.per_cmd_) {
        std::printf("  %-18s", name.c_str());
        for (auto& [e, n] : m) std::printf(" %s:%ld", e ? strerrorname_np(e) : "ok", n);
        std::printf("\n");
    }
    rel::PrintCounters("after", rel::ReadCounters());
    T_CHECK(fz.violations_ == 0);
    T_CHECK(fz.slow_ == 0);
    T_CHECK(unrestored == 0);
    T_CHECK(rel::WaitCounters(base, 10));
    T_CHECK(t_vmpin_kb() == pin0);
    std::printf("violations %ld, calls over 2 s %ld, epochs not restored %ld\n", fz.violations_,
                fz.slow_, unrestored);
    if (t_failures)
        std::printf("replay: NDK_FUZZ_SEED=%#llx\n", static_cast<unsigned long long>(seed));
    return t_result("rel-fuzz");
}
