// SPDX-License-Identifier: GPL-2.0
// vm.netlink: the generic netlink family "ndk" through ndk::nl::Client.
//  - adapters: the same ids, names, GUIDs as ADAPTER_QUERY, every
//    NDK_ADAPTER_INFO field equal to ADAPTER_INFO's;
//  - object counts of the adapter and of this process's file move as a
//    PD and a registration come and go; RES_GET lists the registration
//    with its address, length and pages; module-wide statistics move;
//  - the registration cache's self-reported hits and misses;
//  - MEM_INVALIDATED on munmap of a registered buffer, with pid, handle,
//    address and length, and the file's cache_invalidations;
//  - privilege: a process running as nobody sees only its own file, gets
//    EPERM for another pid and for the "mem" group; root sees both.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <map>

#include <ndk/ndk_ioctl.h>
#include <ndk/ndk_netlink.h>

#include "ndk/ndk.hpp"
#include "netlink.hpp"
#include "t_helpers.hpp"

namespace {

constexpr const char* kDev = "rxe0";

std::map<std::string, std::uint64_t> ToMap(const ndk::nl::Fields& f) {
    std::map<std::string, std::uint64_t> m;
    for (const auto& [k, v] : f) m[k] = v;
    return m;
}

std::uint64_t Counter(const ndk::nl::Fields& f, const std::string& name) {
    auto m = ToMap(f);
    auto it = m.find(name);
    if (it == m.end()) {
        std::fprintf(stderr, "no counter %s\n", name.c_str());
        ++t_failures;
        return 0;
    }
    return it->second;
}

std::optional<ndk::nl::Process> OwnFile(ndk::nl::Client& nl, pid_t pid) {
    auto r = nl.Processes(static_cast<std::uint32_t>(pid));
    if (!r || r->size() != 1) {
        std::fprintf(stderr, "PROC_GET pid %d: %s, %zu files\n", pid,
                     r ? "ok" : r.error().Message().c_str(), r ? r->size() : 0);
        ++t_failures;
        return std::nullopt;
    }
    return (*r)[0];
}

void CheckAdapters(ndk::nl::Client& nl) {
    auto list = nl.Adapters();
    T_CHECK(list.ok());
    if (!list) return;
    auto dev = ndk::Device::Open();
    T_CHECK(dev.ok());
    if (!dev) return;
    T_CHECK(dev->info().features & NDK_U_FEATURE_NETLINK);
    auto ref = dev->ListAdapters();
    T_CHECK(ref.ok());
    if (!ref) return;
    T_CHECK(list->size() == ref->size());
    for (std::size_t i = 0; i < std::min(list->size(), ref->size()); ++i) {
        const auto& a = (*list)[i];
        const auto& b = (*ref)[i];
        std::printf("adapter %u %s guid %016" PRIx64 " ib_index %u ports %u\n", a.id,
                    a.name.c_str(), a.node_guid, a.ib_index, a.port_count);
        T_CHECK(a.id == b.id && a.name == b.name && a.node_guid == b.node_guid &&
                a.ib_index == b.ib_index && a.port_count == b.port_count);
    }
    auto one = nl.FindAdapter(kDev);
    T_CHECK(one.ok());
    auto missing = nl.FindAdapter("no-such-adapter");
    T_CHECK(!missing && missing.error().errnum == ENODEV);
    if (!one) return;
    std::optional<ndk::Adapter> adapter;
    if (auto a = ndk::Adapter::OpenByName(kDev)) adapter.emplace(std::move(*a));
    T_CHECK(adapter.has_value());
    if (!adapter) return;
    auto info = adapter->QueryInfo();
    T_CHECK(info.ok());
    if (!info) return;
    auto m = ToMap(one->info);
    const std::pair<const char*, std::uint64_t> want[] = {
        {"version", (std::uint64_t{info->version_major} << 16) | info->version_minor},
        {"vendor_id", info->vendor_id},
        {"device_id", info->device_id},
        {"max_registration_size", info->max_registration_size},
        {"max_window_size", info->max_window_size},
        {"frmr_page_count", info->frmr_page_count},
        {"max_initiator_request_sge", info->max_initiator_request_sge},
        {"max_receive_request_sge", info->max_receive_request_sge},
        {"max_read_request_sge", info->max_read_request_sge},
        {"max_transfer_length", info->max_transfer_length},
        {"max_inline_data_size", info->max_inline_data_size},
        {"max_inbound_read_limit", info->max_inbound_read_limit},
        {"max_outbound_read_limit", info->max_outbound_read_limit},
        {"max_receive_queue_depth", info->max_receive_queue_depth},
        {"max_initiator_queue_depth", info->max_initiator_queue_depth},
        {"max_srq_depth", info->max_srq_depth},
        {"max_cq_depth", info->max_cq_depth},
        {"large_request_threshold", info->large_request_threshold},
        {"max_caller_data", info->max_caller_data},
        {"max_callee_data", info->max_callee_data},
        {"adapter_flags", info->adapter_flags},
        {"rdma_technology", info->rdma_technology},
    };
    T_CHECK(m.size() == std::size(want));
    for (const auto& [name, value] : want) {
        if (!m.count(name) || m[name] != value) {
            std::fprintf(stderr, "info %s: netlink %" PRIu64 " ioctl %" PRIu64 "\n", name,
                         m.count(name) ? m[name] : 0, value);
            ++t_failures;
        }
    }
    // The adapter this function opened is counted on the device.
    auto again = nl.FindAdapter(kDev);
    T_CHECK(again && again->objects[NDK_NL_OBJ_ADAPTER] == one->objects[NDK_NL_OBJ_ADAPTER] + 1);
    adapter.reset();
    auto gone = nl.FindAdapter(kDev);
    T_CHECK(gone && gone->objects[NDK_NL_OBJ_ADAPTER] == one->objects[NDK_NL_OBJ_ADAPTER]);
}

void CheckCounts(ndk::nl::Client& nl) {
    const pid_t self = getpid();
    auto before_dev = nl.FindAdapter(kDev);
    auto before_stat = nl.GetStats();
    T_CHECK(before_dev.ok() && before_stat.ok());
    if (!before_dev || !before_stat) return;

    auto adapter = ndk::Adapter::OpenByName(kDev);
    T_CHECK(adapter.ok());
    if (!adapter) return;
    auto pd = adapter->CreateProtectionDomain();
    T_CHECK(pd.ok());
    if (!pd) return;
    const std::size_t len = 3 * 4096 + 100;
    void* buf = mmap(nullptr, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T_CHECK(buf != MAP_FAILED);
    auto* start = static_cast<char*>(buf) + 50;
    auto reg = pd->RegisterMemory(start, len, ndk::kMemReadWrite);
    T_CHECK(reg.ok());
    if (!reg) return;

    auto dev = nl.FindAdapter(kDev);
    T_CHECK(dev.ok());
    if (dev) {
        std::printf("adapter objects: pd %u mr %u (before %u, %u)\n", dev->objects[NDK_NL_OBJ_PD],
                    dev->objects[NDK_NL_OBJ_MR], before_dev->objects[NDK_NL_OBJ_PD],
                    before_dev->objects[NDK_NL_OBJ_MR]);
        T_CHECK(dev->objects[NDK_NL_OBJ_ADAPTER] == before_dev->objects[NDK_NL_OBJ_ADAPTER] + 1);
        T_CHECK(dev->objects[NDK_NL_OBJ_PD] == before_dev->objects[NDK_NL_OBJ_PD] + 1);
        T_CHECK(dev->objects[NDK_NL_OBJ_MR] == before_dev->objects[NDK_NL_OBJ_MR] + 1);
    }
    if (auto p = OwnFile(nl, self)) {
        std::printf("file %u pid %u comm %s: adapter %u pd %u mem %u\n", p->file_id, p->pid,
                    p->comm.c_str(), p->objects[NDK_NL_OBJ_ADAPTER], p->objects[NDK_NL_OBJ_PD],
                    p->objects[NDK_NL_OBJ_MEM]);
        T_CHECK(p->pid == static_cast<std::uint32_t>(self));
        T_CHECK(p->objects[NDK_NL_OBJ_ADAPTER] == 1 && p->objects[NDK_NL_OBJ_PD] == 1 &&
                p->objects[NDK_NL_OBJ_MEM] == 1 && p->objects[NDK_NL_OBJ_QP] == 0);
        T_CHECK(Counter(p->counters, "registered_bytes") == len);
        T_CHECK(Counter(p->counters, "pinned_pages") == 4);
    }
    auto res = nl.Resources(NDK_NL_OBJ_MEM, static_cast<std::uint32_t>(self));
    T_CHECK(res.ok() && res->size() == 1);
    if (res && res->size() == 1) {
        const auto& r = (*res)[0];
        T_CHECK(r.handle == reg->handle());
        T_CHECK(r.address && *r.address == reinterpret_cast<std::uintptr_t>(start));
        T_CHECK(r.length && *r.length == len);
        T_CHECK(r.pages && *r.pages == 4);
        T_CHECK(r.refs && *r.refs == 1);
        T_CHECK(r.adapter == kDev);
        T_CHECK(r.flags && *r.flags == ndk::kMemReadWrite);
    }
    auto stat = nl.GetStats();
    T_CHECK(stat.ok());
    if (stat) {
        T_CHECK(Counter(stat->counters, "registrations") ==
                Counter(before_stat->counters, "registrations") + 1);
        T_CHECK(Counter(stat->counters, "registered_bytes") ==
                Counter(before_stat->counters, "registered_bytes") + len);
        T_CHECK(Counter(stat->counters, "pinned_pages") ==
                Counter(before_stat->counters, "pinned_pages") + 4);
    }

    T_CHECK(reg->Deregister().ok());
    if (auto p = OwnFile(nl, self)) {
        T_CHECK(p->objects[NDK_NL_OBJ_MEM] == 0);
        T_CHECK(Counter(p->counters, "registered_bytes") == 0);
    }
    auto after = nl.GetStats();
    T_CHECK(after.ok());
    if (after && stat) {
        T_CHECK(Counter(after->counters, "deregistrations") ==
                Counter(stat->counters, "deregistrations") + 1);
        T_CHECK(Counter(after->counters, "registered_bytes") ==
                Counter(before_stat->counters, "registered_bytes"));
    }
    munmap(buf, 4 * 4096);
}

void CheckCacheAndInvalidation(ndk::nl::Client& nl) {
    const pid_t self = getpid();
    auto events = ndk::nl::Client::Open();
    T_CHECK(events.ok());
    if (!events) return;
    T_CHECK(events->Subscribe(ndk::nl::Groups{false, true}).ok());

    auto adapter = ndk::Adapter::OpenByName(kDev);
    T_CHECK(adapter.ok());
    if (!adapter) return;
    auto pd = adapter->CreateProtectionDomain();
    T_CHECK(pd.ok());
    if (!pd) return;
    auto cache = ndk::RegistrationCache::Create(*pd);
    T_CHECK(cache.ok());
    if (!cache) return;
    auto before = nl.GetStats();
    T_CHECK(before.ok());

    void* buf = mmap(nullptr, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T_CHECK(buf != MAP_FAILED);
    std::uint32_t handle = 0;
    {
        auto l1 = cache->Acquire(buf, 8192, ndk::kMemReadWrite);
        T_CHECK(l1.ok());
        if (l1) handle = l1->handle();
    }
    {
        auto l2 = cache->Acquire(buf, 4096, ndk::kMemRead);
        T_CHECK(l2.ok() && l2->handle() == handle);
    }
    auto cs = cache->stats();
    std::printf("cache: hits %" PRIu64 " misses %" PRIu64 "\n", cs.hits, cs.misses);
    if (auto p = OwnFile(nl, self)) {
        T_CHECK(Counter(p->counters, "cache_hits") == cs.hits);
        T_CHECK(Counter(p->counters, "cache_misses") == cs.misses);
        T_CHECK(cs.hits == 1 && cs.misses == 1);
        T_CHECK(Counter(p->counters, "cache_invalidations") == 0);
    }
    auto mid = nl.GetStats();
    if (before && mid) {
        T_CHECK(Counter(mid->counters, "cache_hits") >=
                Counter(before->counters, "cache_hits") + 1);
        T_CHECK(Counter(mid->counters, "cache_misses") >=
                Counter(before->counters, "cache_misses") + 1);
    }

    // The cached registration stays while the buffer goes.
    T_CHECK(munmap(buf, 2 * 4096) == 0);
    auto e = events->NextEvent(10000);
    T_CHECK(e.ok());
    if (e) {
        std::printf("event %s pid %u handle %u address 0x%" PRIx64 " length %" PRIu64 "\n",
                    ndk::nl::EventName(e->kind), e->pid, e->handle, e->address, e->length);
        T_CHECK(e->kind == ndk::nl::Event::Kind::kMemInvalidated);
        T_CHECK(e->pid == static_cast<std::uint32_t>(self));
        T_CHECK(e->handle == handle);
        T_CHECK(e->address == reinterpret_cast<std::uintptr_t>(buf));
        T_CHECK(e->length == 8192);
    } else {
        std::fprintf(stderr, "no MEM_INVALIDATED: %s\n", e.error().Message().c_str());
    }
    if (auto p = OwnFile(nl, self)) T_CHECK(Counter(p->counters, "cache_invalidations") >= 1);
    auto after = nl.GetStats();
    if (before && after)
        T_CHECK(Counter(after->counters, "cache_invalidations") >
                Counter(before->counters, "cache_invalidations"));
}

std::uint64_t ErrorCount(const ndk::nl::Stats& s, std::uint32_t status) {
    for (const auto& [st, n] : s.errors)
        if (st == status) return n;
    return 0;
}

// A refused NdkFastRegister (the QP is not connected) is counted under its
// status in the errors by status, and in the errors total.
void CheckErrors(ndk::nl::Client& nl) {
    auto adapter = ndk::Adapter::OpenByName(kDev);
    T_CHECK(adapter.ok());
    if (!adapter) return;
    auto pd = adapter->CreateProtectionDomain();
    auto cq = ndk::CompletionQueue::Create(*adapter, 16);
    T_CHECK(pd.ok() && cq.ok());
    if (!pd || !cq) return;
    auto qp = ndk::QueuePair::Create(*pd, *cq, *cq, ndk::QueuePairParams{});
    auto fr = ndk::MemoryRegion::Create(*pd, /*fast_register=*/true);
    T_CHECK(qp.ok() && fr.ok());
    if (!qp || !fr) return;
    T_CHECK(fr->InitializeFastRegister(2, /*remote_access=*/true).ok());
    static char buf[4096] __attribute__((aligned(4096)));
    auto reg = pd->RegisterMemory(buf, sizeof(buf), ndk::kMemReadWrite);
    T_CHECK(reg.ok());
    if (!reg) return;
    auto before = nl.GetStats();
    T_CHECK(before.ok());
    if (!before) return;
    auto token = qp->FastRegister(1, *fr, *reg, buf, 1024, ndk::op_flag::kAllowRemoteWrite);
    T_CHECK(!token.ok());
    if (token) return;
    const auto status = static_cast<std::uint32_t>(token.error().status);
    std::printf("unconnected fast register: %s\n", token.error().Message().c_str());
    auto after = nl.GetStats();
    T_CHECK(after.ok());
    if (!after) return;
    T_CHECK(ErrorCount(*after, status) == ErrorCount(*before, status) + 1);
    T_CHECK(Counter(after->counters, "errors") == Counter(before->counters, "errors") + 1);
    T_CHECK(Counter(after->counters, "fast_registers") ==
            Counter(before->counters, "fast_registers"));
}

// As nobody: own file only.  Returns the child's verdict.
int Unprivileged(pid_t parent, int ready_fd, int done_fd) {
    if (setgid(65534) != 0 || setuid(65534) != 0) {
        std::perror("setuid nobody");
        return kTestFail;
    }
    auto adapter = ndk::Adapter::OpenByName(kDev);
    T_CHECK(adapter.ok());
    if (!adapter) return kTestFail;
    auto pd = adapter->CreateProtectionDomain();
    T_CHECK(pd.ok());
    static char buf[4096] __attribute__((aligned(4096)));
    auto reg = pd ? pd->RegisterMemory(buf, sizeof(buf), ndk::kMemRead)
                  : ndk::Result<ndk::Registration>(ndk::Error::FromErrno(EBADF));
    T_CHECK(reg.ok());
    auto nl = ndk::nl::Client::Open();
    T_CHECK(nl.ok());
    if (!nl) return kTestFail;
    auto procs = nl->Processes();
    T_CHECK(procs.ok());
    if (procs) {
        std::printf("nobody sees %zu file(s)\n", procs->size());
        T_CHECK(procs->size() == 1);
        for (const auto& p : *procs) T_CHECK(p.pid == static_cast<std::uint32_t>(getpid()));
    }
    auto other = nl->Processes(static_cast<std::uint32_t>(parent));
    T_CHECK(!other && other.error().errnum == EPERM);
    auto res = nl->Resources(NDK_NL_OBJ_MEM, static_cast<std::uint32_t>(parent));
    T_CHECK(!res && res.error().errnum == EPERM);
    auto own = nl->Resources(NDK_NL_OBJ_MEM);
    T_CHECK(own.ok() && own->size() == 1);
    T_CHECK(nl->Subscribe(ndk::nl::Groups{true, false}).ok());
    auto mem = nl->Subscribe(ndk::nl::Groups{false, true});
    T_CHECK(!mem && mem.error().errnum == EPERM);
    // The module-wide statistics are for everybody.
    T_CHECK(nl->GetStats().ok());
    T_CHECK(nl->Adapters().ok());
    char c = 1;
    T_CHECK(write(ready_fd, &c, 1) == 1);
    T_CHECK(read(done_fd, &c, 1) == 1);  // root looks at our file meanwhile
    return t_failures ? kTestFail : kTestPass;
}

void CheckPrivilege(ndk::nl::Client& nl) {
    // This process holds a file too, which nobody must not see.
    auto adapter = ndk::Adapter::OpenByName(kDev);
    T_CHECK(adapter.ok());
    int ready[2], done[2];
    T_CHECK(pipe(ready) == 0 && pipe(done) == 0);
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child == 0) _exit(Unprivileged(parent, ready[1], done[0]));
    char c = 0;
    if (read(ready[0], &c, 1) == 1) {
        auto procs = nl.Processes();
        T_CHECK(procs.ok());
        bool saw_child = false, saw_self = false;
        if (procs)
            for (const auto& p : *procs) {
                saw_child |= p.pid == static_cast<std::uint32_t>(child);
                saw_self |= p.pid == static_cast<std::uint32_t>(parent);
            }
        T_CHECK(saw_child && saw_self);
        auto res = nl.Resources(NDK_NL_OBJ_MEM, static_cast<std::uint32_t>(child));
        T_CHECK(res.ok() && res->size() == 1);
    } else {
        ++t_failures;
    }
    T_CHECK(write(done[1], &c, 1) == 1);
    int status = 0;
    T_CHECK(waitpid(child, &status, 0) == child);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    // Unknown pid.
    auto none = nl.Processes(0x7ffffff0);
    T_CHECK(!none && none.error().errnum == ESRCH);
}

// Helper modes for the shell tests (tests/vm/ndk-tool.sh, tracing.sh):
//   hold         two registrations (4096 and 3 * 4096 + 1 bytes) and a
//                cache hit, then "holding" on stdout until stdin closes
//   unmap LEN    a cached registration of LEN bytes, then munmap
//   refused      a connect to 10.99.0.1:9, where nobody listens: prints
//                "refused" when it fails with ECONNREFUSED
int Refused() {
    using namespace std::chrono_literals;
    auto adapter = ndk::Adapter::OpenByName(kDev);
    if (!adapter) return kTestFail;
    auto pd = adapter->CreateProtectionDomain();
    auto cq = ndk::CompletionQueue::Create(*adapter, 16);
    if (!pd || !cq) return kTestFail;
    auto qp = ndk::QueuePair::Create(*pd, *cq, *cq, ndk::QueuePairParams{});
    auto conn = ndk::Connector::Create(*adapter);
    auto to = ndk::SockAddr::Parse("10.99.0.1:9");
    if (!qp || !conn || !to) return kTestFail;
    if (!conn->Connect(*qp, *to)) return kTestFail;
    auto done = conn->WaitFor(ndk::RequestKind::kConnect, 30s);
    if (done || done.error().errnum != ECONNREFUSED) return kTestFail;
    std::printf("refused\n");
    return kTestPass;
}

int Helper(int argc, char** argv) {
    const std::string mode = argv[1];
    if (mode == "refused") return Refused();
    auto adapter = ndk::Adapter::OpenByName(kDev);
    if (!adapter) return kTestFail;
    auto pd = adapter->CreateProtectionDomain();
    if (!pd) return kTestFail;
    auto cache = ndk::RegistrationCache::Create(*pd);
    if (!cache) return kTestFail;
    if (mode == "hold") {
        static char buf[8 * 4096] __attribute__((aligned(4096)));
        auto r1 = pd->RegisterMemory(buf, 4096, ndk::kMemRead);
        auto l1 = cache->Acquire(buf + 4096, 3 * 4096 + 1, ndk::kMemReadWrite);
        auto l2 = cache->Acquire(buf + 4096, 100, ndk::kMemRead);  // a hit
        if (!r1 || !l1 || !l2) return kTestFail;
        std::printf("holding %d\n", getpid());
        std::fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0) {
        }
        return kTestPass;
    }
    if (mode == "unmap" && argc == 3) {
        const std::size_t len = std::strtoul(argv[2], nullptr, 0);
        void* buf = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED || !len) return kTestFail;
        {
            auto l = cache->Acquire(buf, len, ndk::kMemReadWrite);
            if (!l) return kTestFail;
            std::printf("registered %zu bytes at %p handle %u pid %d\n", len, buf, l->handle(),
                        getpid());
        }
        return munmap(buf, len) == 0 ? kTestPass : kTestFail;
    }
    std::fprintf(stderr, "usage: %s [hold | unmap LEN | refused]\n", argv[0]);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) return Helper(argc, argv);
    auto nl = ndk::nl::Client::Open();
    if (!nl) {
        std::fprintf(stderr, "netlink family ndk: %s\n", nl.error().Message().c_str());
        return kTestFail;
    }
    CheckAdapters(*nl);
    CheckCounts(*nl);
    CheckCacheAndInvalidation(*nl);
    CheckErrors(*nl);
    CheckPrivilege(*nl);
    return t_result("netlink");
}
