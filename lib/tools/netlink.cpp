// SPDX-License-Identifier: BSD-2-Clause
// ndk::nl::Client over libnl-3 / libnl-genl-3 (Documentation/netlink.md).
#include "netlink.hpp"

#include <ndk/ndk_netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <poll.h>

#include <cerrno>
#include <cstring>
#include <functional>

namespace ndk::nl {

static_assert(kObjectTypes == NDK_NL_OBJ_MAX + 1);

namespace {

const char* const kObjectNames[kObjectTypes] = {
    nullptr, "adapter", "pd", "cq", "qp", "mr", "mw", "connector", "listener", "mem",
};

// enum ndk_nl_info: NDK_ADAPTER_INFO field names as ndkinfo prints them.
const char* InfoName(int attr) noexcept {
    switch (attr) {
        case NDK_NL_INFO_VERSION:
            return "version";
        case NDK_NL_INFO_VENDOR_ID:
            return "vendor_id";
        case NDK_NL_INFO_DEVICE_ID:
            return "device_id";
        case NDK_NL_INFO_MAX_REGISTRATION_SIZE:
            return "max_registration_size";
        case NDK_NL_INFO_MAX_WINDOW_SIZE:
            return "max_window_size";
        case NDK_NL_INFO_FRMR_PAGE_COUNT:
            return "frmr_page_count";
        case NDK_NL_INFO_MAX_INITIATOR_REQUEST_SGE:
            return "max_initiator_request_sge";
        case NDK_NL_INFO_MAX_RECEIVE_REQUEST_SGE:
            return "max_receive_request_sge";
        case NDK_NL_INFO_MAX_READ_REQUEST_SGE:
            return "max_read_request_sge";
        case NDK_NL_INFO_MAX_TRANSFER_LENGTH:
            return "max_transfer_length";
        case NDK_NL_INFO_MAX_INLINE_DATA_SIZE:
            return "max_inline_data_size";
        case NDK_NL_INFO_MAX_INBOUND_READ_LIMIT:
            return "max_inbound_read_limit";
        case NDK_NL_INFO_MAX_OUTBOUND_READ_LIMIT:
            return "max_outbound_read_limit";
        case NDK_NL_INFO_MAX_RECEIVE_QUEUE_DEPTH:
            return "max_receive_queue_depth";
        case NDK_NL_INFO_MAX_INITIATOR_QUEUE_DEPTH:
            return "max_initiator_queue_depth";
        case NDK_NL_INFO_MAX_SRQ_DEPTH:
            return "max_srq_depth";
        case NDK_NL_INFO_MAX_CQ_DEPTH:
            return "max_cq_depth";
        case NDK_NL_INFO_LARGE_REQUEST_THRESHOLD:
            return "large_request_threshold";
        case NDK_NL_INFO_MAX_CALLER_DATA:
            return "max_caller_data";
        case NDK_NL_INFO_MAX_CALLEE_DATA:
            return "max_callee_data";
        case NDK_NL_INFO_ADAPTER_FLAGS:
            return "adapter_flags";
        case NDK_NL_INFO_RDMA_TECHNOLOGY:
            return "rdma_technology";
        default:
            return nullptr;
    }
}

// enum ndk_nl_stat.
const char* StatName(int attr) noexcept {
    switch (attr) {
        case NDK_NL_STAT_REGISTRATIONS:
            return "registrations";
        case NDK_NL_STAT_DEREGISTRATIONS:
            return "deregistrations";
        case NDK_NL_STAT_REGISTERED_BYTES:
            return "registered_bytes";
        case NDK_NL_STAT_PINNED_PAGES:
            return "pinned_pages";
        case NDK_NL_STAT_FAST_REGISTERS:
            return "fast_registers";
        case NDK_NL_STAT_BINDS:
            return "binds";
        case NDK_NL_STAT_INVALIDATES:
            return "invalidates";
        case NDK_NL_STAT_CACHE_HITS:
            return "cache_hits";
        case NDK_NL_STAT_CACHE_MISSES:
            return "cache_misses";
        case NDK_NL_STAT_CACHE_INVALIDATIONS:
            return "cache_invalidations";
        case NDK_NL_STAT_ERRORS:
            return "errors";
        case NDK_NL_STAT_EVENTS_DROPPED:
            return "events_dropped";
        default:
            return nullptr;
    }
}

// A libnl error code as an errno.
int ErrnoFromNl(int err) noexcept {
    switch (err < 0 ? -err : err) {
        case NLE_PERM:
            return EPERM;
        case NLE_NOACCESS:
            return EACCES;
        case NLE_OBJ_NOTFOUND:
            return ENOENT;
        case NLE_NODEV:
            return ENODEV;
        case NLE_INTR:
            return EINTR;
        case NLE_NOMEM:
            return ENOMEM;
        case NLE_INVAL:
            return EINVAL;
        case NLE_AGAIN:
            return EAGAIN;
        case NLE_RANGE:
            return ERANGE;
        case NLE_MSGSIZE:
            return EMSGSIZE;
        case NLE_OPNOTSUPP:
            return EOPNOTSUPP;
        case NLE_BUSY:
            return EBUSY;
        default:
            return EIO;
    }
}

struct SockDeleter {
    void operator()(nl_sock* s) const noexcept { nl_socket_free(s); }
};
struct MsgDeleter {
    void operator()(nl_msg* m) const noexcept { nlmsg_free(m); }
};
struct CbDeleter {
    void operator()(nl_cb* c) const noexcept { nl_cb_put(c); }
};
using Sock = std::unique_ptr<nl_sock, SockDeleter>;
using Msg = std::unique_ptr<nl_msg, MsgDeleter>;
using Cb = std::unique_ptr<nl_cb, CbDeleter>;

Result<Sock> Connect() {
    Sock sk(nl_socket_alloc());
    if (!sk) return Error::FromErrno(ENOMEM);
    if (int err = genl_connect(sk.get()); err < 0) return Error::FromErrno(ErrnoFromNl(err));
    return sk;
}

// The attributes of a message of the family; tb[i] null when absent.
using Attrs = std::array<nlattr*, NDK_NL_ATTR_MAX + 1>;

bool Parse(nl_msg* msg, Attrs& tb) noexcept {
    tb.fill(nullptr);
    return genlmsg_parse(nlmsg_hdr(msg), 0, tb.data(), NDK_NL_ATTR_MAX, nullptr) == 0;
}

std::uint32_t U32(const Attrs& tb, int a) noexcept { return tb[a] ? nla_get_u32(tb[a]) : 0; }
std::uint64_t U64(const Attrs& tb, int a) noexcept { return tb[a] ? nla_get_u64(tb[a]) : 0; }
std::string Str(const Attrs& tb, int a) {
    return tb[a] ? std::string(nla_get_string(tb[a])) : std::string();
}
std::optional<std::uint32_t> OptU32(const Attrs& tb, int a) noexcept {
    if (!tb[a]) return std::nullopt;
    return nla_get_u32(tb[a]);
}
std::optional<std::uint64_t> OptU64(const Attrs& tb, int a) noexcept {
    if (!tb[a]) return std::nullopt;
    return nla_get_u64(tb[a]);
}

// A nest of integers: each attribute's value by its type (u32 or u64 by
// payload length), named by `name`, or "attr_N" for one this build does
// not know (a newer module).
Fields Integers(nlattr* nest, const char* (*name)(int) noexcept) {
    Fields out;
    if (!nest) return out;
    nlattr* pos;
    int rem;
    nla_for_each_nested(pos, nest, rem) {
        const int type = nla_type(pos);
        std::uint64_t v = 0;
        if (nla_len(pos) == 8)
            v = nla_get_u64(pos);
        else if (nla_len(pos) == 4)
            v = nla_get_u32(pos);
        else
            continue;  // padding
        const char* n = name(type);
        out.emplace_back(n ? n : "attr_" + std::to_string(type), v);
    }
    return out;
}

Counts Objects(nlattr* nest) noexcept {
    Counts c{};
    if (!nest) return c;
    nlattr* pos;
    int rem;
    nla_for_each_nested(pos, nest, rem) {
        const int type = nla_type(pos);
        if (type > 0 && static_cast<std::size_t>(type) < kObjectTypes && nla_len(pos) == 4)
            c[type] = nla_get_u32(pos);
    }
    return c;
}

}  // namespace

const char* ObjectTypeName(std::uint32_t type) noexcept {
    return type > 0 && type < kObjectTypes ? kObjectNames[type] : "unknown";
}

std::uint32_t ObjectTypeFromName(std::string_view name) noexcept {
    for (std::uint32_t t = 1; t < kObjectTypes; ++t)
        if (name == kObjectNames[t]) return t;
    return 0;
}

const char* EventName(Event::Kind kind) noexcept {
    switch (kind) {
        case Event::Kind::kAdapterAdded:
            return "adapter-added";
        case Event::Kind::kAdapterRemoved:
            return "adapter-removed";
        case Event::Kind::kMemInvalidated:
            return "mem-invalidated";
    }
    return "unknown";
}

struct Client::Impl {
    Sock sk;      // requests
    Sock events;  // multicast, once subscribed
    int family = 0;

    // Sends one request and feeds every reply message to `on_msg`; the
    // kernel's errno (NLMSG_ERROR, or a dump's NLMSG_DONE) is the error.
    Result<void> Request(std::uint8_t cmd, int flags, const std::function<void(nl_msg*)>& fill,
                         const std::function<void(nl_msg*)>& on_msg) {
        Msg msg(nlmsg_alloc());
        if (!msg) return Error::FromErrno(ENOMEM);
        if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd,
                         NDK_GENL_VERSION))
            return Error::FromErrno(ENOMEM);
        if (fill) fill(msg.get());
        if (int err = nl_send_auto(sk.get(), msg.get()); err < 0)
            return Error::FromErrno(ErrnoFromNl(err));

        struct Ctx {
            const std::function<void(nl_msg*)>* on_msg;
            int error = 0;
        } ctx{&on_msg};
        Cb cb(nl_cb_alloc(NL_CB_DEFAULT));
        if (!cb) return Error::FromErrno(ENOMEM);
        nl_cb_set(
            cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
            [](nl_msg* m, void* arg) -> int {
                (*static_cast<Ctx*>(arg)->on_msg)(m);
                return NL_OK;
            },
            &ctx);
        nl_cb_err(
            cb.get(), NL_CB_CUSTOM,
            [](sockaddr_nl*, nlmsgerr* e, void* arg) -> int {
                static_cast<Ctx*>(arg)->error = -e->error;
                return NL_STOP;
            },
            &ctx);
        nl_cb_set(
            cb.get(), NL_CB_FINISH, NL_CB_CUSTOM,
            [](nl_msg* m, void* arg) -> int {
                // A dump's NLMSG_DONE carries the dump's errno, if any.
                nlmsghdr* h = nlmsg_hdr(m);
                if (nlmsg_datalen(h) >= static_cast<int>(sizeof(int))) {
                    int e = 0;
                    std::memcpy(&e, nlmsg_data(h), sizeof(e));
                    if (e < 0) static_cast<Ctx*>(arg)->error = -e;
                }
                return NL_STOP;
            },
            &ctx);
        const int err = nl_recvmsgs(sk.get(), cb.get());
        if (ctx.error) return Error::FromErrno(ctx.error);
        if (err < 0) return Error::FromErrno(ErrnoFromNl(err));
        return {};
    }
};

Client::Client(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Result<Client> Client::Open() {
    auto sk = Connect();
    if (!sk) return sk.error();
    auto impl = std::make_unique<Impl>();
    impl->sk = std::move(*sk);
    nl_socket_disable_auto_ack(impl->sk.get());
    impl->family = genl_ctrl_resolve(impl->sk.get(), NDK_GENL_NAME);
    if (impl->family < 0) return Error::FromErrno(ErrnoFromNl(impl->family));
    return Client(std::move(impl));
}

namespace {

Adapter ParseAdapter(const Attrs& tb) {
    Adapter a;
    a.id = U32(tb, NDK_NL_ATTR_ADAPTER_ID);
    a.name = Str(tb, NDK_NL_ATTR_ADAPTER_NAME);
    a.node_guid = U64(tb, NDK_NL_ATTR_NODE_GUID);
    a.ib_index = U32(tb, NDK_NL_ATTR_IB_INDEX);
    a.port_count = U32(tb, NDK_NL_ATTR_PORT_COUNT);
    a.info = Integers(tb[NDK_NL_ATTR_ADAPTER_INFO], InfoName);
    a.objects = Objects(tb[NDK_NL_ATTR_OBJECTS]);
    return a;
}

}  // namespace

Result<std::vector<Adapter>> Client::Adapters() {
    std::vector<Adapter> out;
    auto r = impl_->Request(NDK_NL_CMD_ADAPTER_GET, NLM_F_DUMP, nullptr, [&](nl_msg* m) {
        Attrs tb;
        if (Parse(m, tb)) out.push_back(ParseAdapter(tb));
    });
    if (!r) return r.error();
    return out;
}

Result<Adapter> Client::FindAdapter(std::string_view name) {
    std::optional<Adapter> out;
    const std::string n(name);
    auto r = impl_->Request(
        NDK_NL_CMD_ADAPTER_GET, 0,
        [&](nl_msg* m) { nla_put_string(m, NDK_NL_ATTR_ADAPTER_NAME, n.c_str()); },
        [&](nl_msg* m) {
            Attrs tb;
            if (Parse(m, tb)) out = ParseAdapter(tb);
        });
    if (!r) return r.error();
    if (!out) return Error::FromErrno(ENODEV);
    return *out;
}

Result<Stats> Client::GetStats() {
    std::optional<Stats> out;
    auto r = impl_->Request(NDK_NL_CMD_STAT_GET, 0, nullptr, [&](nl_msg* m) {
        Attrs tb;
        if (!Parse(m, tb)) return;
        Stats s;
        s.version = U32(tb, NDK_NL_ATTR_VERSION);
        s.counters = Integers(tb[NDK_NL_ATTR_STATS], StatName);
        if (tb[NDK_NL_ATTR_ERRORS]) {
            nlattr* pos;
            int rem;
            nla_for_each_nested(pos, tb[NDK_NL_ATTR_ERRORS], rem) {
                nlattr* e[NDK_NL_ATTR_MAX + 1] = {};
                if (nla_parse_nested(e, NDK_NL_ATTR_MAX, pos, nullptr) < 0) continue;
                if (!e[NDK_NL_ATTR_ERROR_STATUS] || !e[NDK_NL_ATTR_ERROR_COUNT]) continue;
                s.errors.emplace_back(nla_get_u32(e[NDK_NL_ATTR_ERROR_STATUS]),
                                      nla_get_u64(e[NDK_NL_ATTR_ERROR_COUNT]));
            }
        }
        out = std::move(s);
    });
    if (!r) return r.error();
    if (!out) return Error::FromErrno(EIO);
    return *out;
}

Result<std::vector<Process>> Client::Processes(std::optional<std::uint32_t> pid) {
    std::vector<Process> out;
    auto r = impl_->Request(
        NDK_NL_CMD_PROC_GET, NLM_F_DUMP,
        [&](nl_msg* m) {
            if (pid) nla_put_u32(m, NDK_NL_ATTR_PID, *pid);
        },
        [&](nl_msg* m) {
            Attrs tb;
            if (!Parse(m, tb)) return;
            Process p;
            p.file_id = U32(tb, NDK_NL_ATTR_FILE_ID);
            p.pid = U32(tb, NDK_NL_ATTR_PID);
            p.comm = Str(tb, NDK_NL_ATTR_COMM);
            p.objects = Objects(tb[NDK_NL_ATTR_OBJECTS]);
            p.counters = Integers(tb[NDK_NL_ATTR_STATS], StatName);
            out.push_back(std::move(p));
        });
    if (!r) return r.error();
    return out;
}

Result<std::vector<Resource>> Client::Resources(std::uint32_t type,
                                                std::optional<std::uint32_t> pid) {
    std::vector<Resource> out;
    auto r = impl_->Request(
        NDK_NL_CMD_RES_GET, NLM_F_DUMP,
        [&](nl_msg* m) {
            nla_put_u32(m, NDK_NL_ATTR_RES_TYPE, type);
            if (pid) nla_put_u32(m, NDK_NL_ATTR_PID, *pid);
        },
        [&](nl_msg* m) {
            Attrs tb;
            if (!Parse(m, tb)) return;
            Resource x;
            x.file_id = U32(tb, NDK_NL_ATTR_FILE_ID);
            x.pid = U32(tb, NDK_NL_ATTR_PID);
            x.comm = Str(tb, NDK_NL_ATTR_COMM);
            x.type = U32(tb, NDK_NL_ATTR_RES_TYPE);
            x.handle = U32(tb, NDK_NL_ATTR_HANDLE);
            x.parent = OptU32(tb, NDK_NL_ATTR_PARENT_HANDLE);
            x.adapter_id = OptU32(tb, NDK_NL_ATTR_ADAPTER_ID);
            x.adapter = Str(tb, NDK_NL_ATTR_ADAPTER_NAME);
            x.address = OptU64(tb, NDK_NL_ATTR_ADDRESS);
            x.length = OptU64(tb, NDK_NL_ATTR_LENGTH);
            x.pages = OptU64(tb, NDK_NL_ATTR_PAGES);
            x.flags = OptU32(tb, NDK_NL_ATTR_FLAGS);
            x.refs = OptU32(tb, NDK_NL_ATTR_REFS);
            out.push_back(std::move(x));
        });
    if (!r) return r.error();
    return out;
}

Result<void> Client::Subscribe(Groups groups) {
    if (!impl_->events) {
        auto sk = Connect();
        if (!sk) return sk.error();
        nl_socket_disable_seq_check(sk->get());
        impl_->events = std::move(*sk);
    }
    const std::pair<bool, const char*> wanted[] = {
        {groups.adapter, NDK_GENL_MCGRP_ADAPTER},
        {groups.mem, NDK_GENL_MCGRP_MEM},
    };
    for (const auto& [want, name] : wanted) {
        if (!want) continue;
        const int grp = genl_ctrl_resolve_grp(impl_->sk.get(), NDK_GENL_NAME, name);
        if (grp < 0) return Error::FromErrno(ErrnoFromNl(grp));
        if (int err = nl_socket_add_membership(impl_->events.get(), grp); err < 0)
            return Error::FromErrno(ErrnoFromNl(err));
    }
    return {};
}

Result<Event> Client::NextEvent(int timeout_ms) {
    if (!impl_->events) return Error::FromErrno(EINVAL);
    std::optional<Event> out;
    Cb cb(nl_cb_alloc(NL_CB_DEFAULT));
    if (!cb) return Error::FromErrno(ENOMEM);
    nl_cb_set(
        cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
        [](nl_msg* m, void* arg) -> int {
            auto* ev = static_cast<std::optional<Event>*>(arg);
            Attrs tb;
            if (!Parse(m, tb)) return NL_OK;
            Event e;
            switch (static_cast<genlmsghdr*>(nlmsg_data(nlmsg_hdr(m)))->cmd) {
                case NDK_NL_CMD_ADAPTER_ADDED:
                    e.kind = Event::Kind::kAdapterAdded;
                    break;
                case NDK_NL_CMD_ADAPTER_REMOVED:
                    e.kind = Event::Kind::kAdapterRemoved;
                    break;
                case NDK_NL_CMD_MEM_INVALIDATED:
                    e.kind = Event::Kind::kMemInvalidated;
                    break;
                default:
                    return NL_OK;  // a newer event: ignored
            }
            e.adapter_id = U32(tb, NDK_NL_ATTR_ADAPTER_ID);
            e.adapter = Str(tb, NDK_NL_ATTR_ADAPTER_NAME);
            e.node_guid = U64(tb, NDK_NL_ATTR_NODE_GUID);
            e.file_id = U32(tb, NDK_NL_ATTR_FILE_ID);
            e.pid = U32(tb, NDK_NL_ATTR_PID);
            e.handle = U32(tb, NDK_NL_ATTR_HANDLE);
            e.address = U64(tb, NDK_NL_ATTR_ADDRESS);
            e.length = U64(tb, NDK_NL_ATTR_LENGTH);
            e.dropped = U64(tb, NDK_NL_ATTR_DROPPED);
            *ev = std::move(e);
            return NL_OK;
        },
        &out);
    // Events carry sequence number 0: no sequence check here.
    nl_cb_set(
        cb.get(), NL_CB_SEQ_CHECK, NL_CB_CUSTOM, [](nl_msg*, void*) -> int { return NL_OK; },
        nullptr);
    while (!out) {
        pollfd p{nl_socket_get_fd(impl_->events.get()), POLLIN, 0};
        const int n = poll(&p, 1, timeout_ms);
        if (n < 0) return Error::FromErrno(errno);
        if (n == 0) return Error::FromErrno(ETIMEDOUT);
        if (int err = nl_recvmsgs(impl_->events.get(), cb.get()); err < 0)
            return Error::FromErrno(ErrnoFromNl(err));
    }
    return *out;
}

}  // namespace ndk::nl
