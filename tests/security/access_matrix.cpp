// SPDX-License-Identifier: GPL-2.0
// The access-rights matrix of Documentation/security.md, run as an
// unprivileged user (access-matrix.sh drops to nobody): every MR_REGISTER
// flag set and every MEM_REGISTER mode, over every kind of mapping, tried
// with every way the device can write a registration's pages:
//
//   recv     a peer's send lands in a receive posted on the registration
//   sink     an RDMA read whose sink is the registration
//   mrwrite  a peer's RDMA write through the MR's own remote token
//   fr-lw    fast-register over it with local write, then a receive
//   fr-rs    fast-register with read sink, then an RDMA read into it
//   fr-rw    fast-register with remote write, then a peer's RDMA write
//   bind-rw  a window bound with remote write, then a peer's RDMA write
//
// Each cell ends refused (registration or post, with a documented errno),
// failed (an error completion), or completed; bytes may land only in
// memory the caller could write itself, and a registration or a
// fast-register/bind that would give the device a write right over pages
// the caller cannot write must be refused.  Positive controls prove each
// way of writing works on writable memory.  The root-owned files are also
// checked by access-matrix.sh with pread before and after dropping caches.
//
//   vm-sec-access-matrix DIR_TMPFS DIR_EXT4
// DIR_*: directories holding root.dat (root's, 0644, bytes 0x11) and
// own.dat (the caller's, bytes 0x11), two pages each.
#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loopback.hpp"

using namespace ndk_t;

namespace {

constexpr std::size_t kLen = 64;  // bytes each write moves
constexpr unsigned char kOld = 0x11, kNew = 0xAB;

struct Mapping {
    std::string name;
    char* base = nullptr;
    std::size_t map_len = 0;
    bool caller_writable = false;  // the caller may write these bytes itself
    bool file_writeback = false;   // a shared mapping of a regular file
    std::string file;              // the file behind it, checked with pread
};

int Open(const std::string& path, int flags) {
    int fd = open(path.c_str(), flags);
    if (fd < 0) throw Failure{"open " + path + ": " + std::strerror(errno)};
    return fd;
}

char* Map(std::size_t len, int prot, int flags, int fd, const std::string& what) {
    void* p = mmap(nullptr, len, prot, flags, fd, 0);
    if (p == MAP_FAILED) throw Failure{"mmap " + what + ": " + std::strerror(errno)};
    return static_cast<char*>(p);
}

std::vector<Mapping> MakeMappings(const std::string& tmpfs, const std::string& ext4) {
    std::vector<Mapping> v;
    auto anon = [&](const char* name, int prot, int flags) {
        char* p = Map(2 * kPage, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, name);
        std::memset(p, kOld, 2 * kPage);
        if (prot != (PROT_READ | PROT_WRITE) && mprotect(p, 2 * kPage, prot))
            throw Failure{"mprotect"};
        v.push_back({name, p, 2 * kPage, prot & PROT_WRITE ? true : false, false, ""});
    };
    anon("anon-private", PROT_READ | PROT_WRITE, MAP_PRIVATE);
    anon("anon-shared", PROT_READ | PROT_WRITE, MAP_SHARED);
    anon("anon-private-ro", PROT_READ, MAP_PRIVATE);

    int fd = static_cast<int>(syscall(SYS_memfd_create, "sec", 0));
    if (fd < 0 || ftruncate(fd, 2 * kPage)) throw Failure{"memfd"};
    char* p = Map(2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, "memfd");
    std::memset(p, kOld, 2 * kPage);
    v.push_back({"shmem-memfd", p, 2 * kPage, true, false, ""});
    close(fd);

    const std::size_t huge = 2u << 20;
    fd = static_cast<int>(syscall(SYS_memfd_create, "sec-huge", MFD_HUGETLB));
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(huge)))
        throw Failure{"hugetlbfs memfd (access-matrix.sh reserves huge pages): " +
                      std::string(std::strerror(errno))};
    p = Map(huge, PROT_READ | PROT_WRITE, MAP_SHARED, fd, "hugetlbfs");
    std::memset(p, kOld, 2 * kPage);
    v.push_back({"hugetlbfs", p, huge, true, false, ""});
    close(fd);

    for (const auto& [fs, dir] : {std::pair{"tmpfs", tmpfs}, std::pair{"ext4", ext4}}) {
        const std::string root = dir + "/root.dat", own = dir + "/own.dat";
        const bool writeback = std::string(fs) == "ext4";
        fd = Open(root, O_RDONLY);
        v.push_back({std::string(fs) + "-root-shared-rdonly",
                     Map(2 * kPage, PROT_READ, MAP_SHARED, fd, root), 2 * kPage, false, writeback,
                     root});
        v.push_back({std::string(fs) + "-root-private",
                     Map(2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, root), 2 * kPage, true,
                     false, root});
        v.push_back({std::string(fs) + "-root-private-ro",
                     Map(2 * kPage, PROT_READ, MAP_PRIVATE, fd, root), 2 * kPage, false, false,
                     root});
        close(fd);
        fd = Open(own, O_RDWR);
        v.push_back({std::string(fs) + "-own-shared-rdwr",
                     Map(2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, own), 2 * kPage, true,
                     writeback, ""});
        close(fd);
    }
    return v;
}

// The bytes a file holds at offset 0, read with pread (not the mapping).
bool FileUnchanged(const std::string& path) {
    unsigned char buf[kLen];
    int fd = Open(path, O_RDONLY);
    ssize_t n = pread(fd, buf, sizeof(buf), 0);
    close(fd);
    if (n != static_cast<ssize_t>(sizeof(buf))) return false;
    for (unsigned char c : buf)
        if (c != kOld) return false;
    return true;
}

bool Landed(const Mapping& m) {
    for (std::size_t i = 0; i < kLen; i++)
        if (static_cast<unsigned char>(m.base[i]) != kOld) return true;
    return false;
}

// A registration under test: MR_REGISTER (an MR) or MEM_REGISTER.
struct Reg {
    std::string name;
    bool is_mr = false;
    std::uint32_t flags = 0;
    bool writes = false;  // the device may write through it
    // Its one write right is RDMA_READ_SINK on an adapter that needs no
    // sink rights: NdkRegisterMr must not fail because of it, so over
    // pages that cannot be pinned writable it registers without it.
    bool sink_optional = false;
};

// @sink_rights: the adapter needs RDMA_READ_SINK for a read sink (no
// NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED: iWARP).
std::vector<Reg> Registrations(bool sink_rights) {
    using namespace ndk::mr_flag;
    std::vector<Reg> v;
    // Every valid NDK_MR_FLAG_* set (0x4 without 0x1 is no NDK value).
    for (std::uint32_t f = 0; f <= 0xF; f++) {
        if ((f & 0x4) && !(f & kAllowLocalWrite)) continue;
        char name[16];
        std::snprintf(name, sizeof(name), "mr-0x%x", f);
        const bool sink_only = (f & (kAllowLocalWrite | kRdmaReadSink)) == kRdmaReadSink;
        v.push_back({name, true, f, (f & (kAllowLocalWrite | kRdmaReadSink)) != 0,
                     sink_only && !sink_rights});
    }
    v.push_back({"mem-read", false, ndk::kMemRead, false});
    v.push_back({"mem-write", false, ndk::kMemWrite, true});
    v.push_back({"mem-readwrite", false, ndk::kMemReadWrite, true});
    return v;
}

enum class Outcome { kRefused, kFailed, kCompleted };

struct Tally {
    long cells = 0, refused_reg = 0, refused_post = 0, failed = 0, completed = 0, landed = 0;
    std::map<int, long> errnos;
    std::vector<std::string> failures;
    void Fail(const std::string& what) {
        failures.push_back(what);
        std::printf("FAIL %s\n", what.c_str());
    }
};

class Matrix {
  public:
    explicit Matrix(Tally& t) : t_(t), src_(4) {
        lb_.Open();
        src_mr_.emplace(Must(ndk::MemoryRegion::Create(*lb_.pd), "create MR"));
        std::memset(src_.base, kNew, src_.len);
        Must(src_mr_->Register(src_.base, src_.len,
                               ndk::mr_flag::kAllowLocalWrite | ndk::mr_flag::kAllowRemoteRead),
             "register the source");
        lb_.read_limit = 4;
        lb_.Connect();
    }

    // Whether the adapter needs RDMA_READ_SINK for a read sink (iWARP).
    bool SinkRights() {
        auto info = Must(lb_.adapter->QueryInfo(), "query adapter info");
        return !(info.adapter_flags & ndk::adapter_flag::kRdmaReadSinkNotRequired);
    }

    // One registration over one mapping, every way of writing.
    void Run(const Mapping& m, const Reg& reg) {
        Reg r = reg;
        // An optional sink gives a write right only where the pages can
        // be pinned writable (ndk_umem_mode()).
        if (r.sink_optional) r.writes = m.caller_writable && !m.file_writeback;
        std::optional<ndk::Registration> mem;
        std::optional<ndk::MemoryRegion> mr;
        std::uint32_t local = 0, remote = 0;
        const std::string cell = m.name + " " + r.name;
        if (r.is_mr) {
            mr.emplace(Must(ndk::MemoryRegion::Create(*lb_.pd), "create MR"));
            auto res = mr->Register(m.base, kPage, r.flags);
            if (!res) return Refused(m, r, res.error().errnum, cell);
            local = mr->local_token();
            remote = mr->remote_token();
        } else {
            auto res = lb_.pd->RegisterMemory(m.base, kPage, r.flags);
            if (!res) return Refused(m, r, res.error().errnum, cell);
            mem.emplace(std::move(*res));
            local = mem->local_token();
        }
        if (r.writes && !m.caller_writable)
            t_.Fail(cell + ": a write right over memory the caller cannot write was registered");
        if (r.writes && m.file_writeback)
            t_.Fail(cell + ": a writable long-term pin of a file's page cache was registered");
        ndk::MemorySource source = r.is_mr ? ndk::MemorySource(*mr) : ndk::MemorySource(*mem);

        Check(m, cell + " recv", Receive(m, local));
        Check(m, cell + " sink", ReadInto(m, local));
        if (r.is_mr) Check(m, cell + " mrwrite", PeerWrite(m, remote));
        for (auto [name, op] : {std::pair{"fr-lw", ndk::op_flag::kAllowLocalWrite},
                                std::pair{"fr-rs", ndk::op_flag::kRdmaReadSink},
                                std::pair{"fr-rw", ndk::op_flag::kAllowRemoteWrite}})
            Check(m, cell + " " + name, FastRegister(m, r, source, op, cell + " " + name));
        Check(m, cell + " bind-rw", Bind(m, r, source, cell + " bind-rw"));
    }

    // Writable memory: each way of writing must land (the test can see).
    void Controls() {
        Pages p(1);
        Mapping m{"control", p.base, p.len, true, false, ""};
        auto control = [&](const char* what, std::uint32_t flags, auto&& how) {
            std::memset(p.base, kOld, p.len);
            ndk::MemoryRegion mr = Must(ndk::MemoryRegion::Create(*lb_.pd), "create MR");
            Must(mr.Register(p.base, p.len, flags), what);
            Outcome o = how(mr);
            if (o == Outcome::kFailed) Reconnect();
            if (o != Outcome::kCompleted || !Landed(m))
                t_.Fail(std::string("positive control ") + what + ": the write did not land");
            else
                std::printf("ok   positive control: %s\n", what);
        };
        using namespace ndk::mr_flag;
        control("receive into local write", kAllowLocalWrite,
                [&](ndk::MemoryRegion& mr) { return Receive(m, mr.local_token()); });
        control("read sink alone", kRdmaReadSink,
                [&](ndk::MemoryRegion& mr) { return ReadInto(m, mr.local_token()); });
        control("remote write through the MR", kAllowRemoteWrite,
                [&](ndk::MemoryRegion& mr) { return PeerWrite(m, mr.remote_token()); });
        Reg rs{"mem-write", false, ndk::kMemWrite, true};
        for (auto op : {ndk::op_flag::kRdmaReadSink, ndk::op_flag::kAllowRemoteWrite}) {
            std::memset(p.base, kOld, p.len);
            ndk::Registration mem =
                Must(lb_.pd->RegisterMemory(p.base, p.len, ndk::kMemWrite), "register memory");
            Outcome o = FastRegister(m, rs, mem, op, "control");
            if (o == Outcome::kFailed) Reconnect();
            const char* what = op == ndk::op_flag::kRdmaReadSink ? "fast-register read sink"
                                                                 : "fast-register remote write";
            if (o != Outcome::kCompleted || !Landed(m))
                t_.Fail(std::string("positive control ") + what + " over MEM_WRITE: no write");
            else
                std::printf("ok   positive control: %s over MEM_WRITE\n", what);
        }
    }

  private:
    void Refused(const Mapping& m, const Reg& r, int err, const std::string& cell) {
        t_.cells++;
        t_.refused_reg++;
        t_.errnos[err]++;
        // Registrations without a write right are refused only when the
        // range cannot be read at all; with one, only where the caller
        // cannot write or the pin would be of a file's page cache.
        static const std::set<int> documented = {EFAULT, EOPNOTSUPP};
        if (!documented.count(err))
            t_.Fail(cell + ": registration refused with undocumented errno " + std::to_string(err));
        else if (!r.writes)
            t_.Fail(cell + ": a read-only registration was refused (" + std::strerror(err) + ")");
        else if (m.caller_writable && !m.file_writeback)
            t_.Fail(cell + ": refused over writable memory (" + std::strerror(err) + ")");
        else if (m.file_writeback && m.caller_writable && err != EOPNOTSUPP)
            t_.Fail(cell + ": a shared file mapping's writable pin must be EOPNOTSUPP, got " +
                    std::strerror(err));
    }

    void Check(const Mapping& m, const std::string& cell, Outcome o) {
        t_.cells++;
        (o == Outcome::kRefused  ? t_.refused_post
         : o == Outcome::kFailed ? t_.failed
                                 : t_.completed)++;
        if (Landed(m)) {
            t_.landed++;
            if (!m.caller_writable) t_.Fail(cell + ": the device wrote memory the caller cannot");
            if (m.caller_writable) std::memset(m.base, kOld, kLen);
        }
        if (!m.file.empty() && !FileUnchanged(m.file)) t_.Fail(cell + ": " + m.file + " changed");
        if (o == Outcome::kFailed) Reconnect();
    }

    // After an error completion the QPs are in error: a new connection.
    void Reconnect() {
        lb_.Disconnect();
        ndk::CompletionResult r[16];
        while (true) {
            auto n = lb_.cq->PollUntil(r, 16, 100ms);
            if (!n || *n == 0) break;
        }
        lb_.Connect();
    }

    // Waits for n completions; kFailed unless all succeeded.
    Outcome Wait(int n) {
        bool ok = true;
        for (int i = 0; i < n; i++) {
            ndk::CompletionResult r[1];
            auto got = lb_.cq->PollUntil(r, 1, 5s);
            if (!got || *got != 1) return Outcome::kFailed;
            ok = ok && ndk::NtSuccess(r[0].status);
        }
        return ok ? Outcome::kCompleted : Outcome::kFailed;
    }

    Outcome Post(ndk::Result<void> r, int completions) {
        if (!r) {
            t_.errnos[r.error().errnum]++;
            return Outcome::kRefused;
        }
        return Wait(completions);
    }

    ndk::Sge Src() { return {src_.base, kLen, src_mr_->local_token()}; }

    Outcome Receive(const Mapping& m, std::uint32_t token) {
        ndk::Sge sink{m.base, kLen, token}, src = Src();
        auto r = lb_.server->Receive(1, {&sink, 1});
        if (!r) return Post(r, 0);
        return Post(lb_.client->Send(2, {&src, 1}), 2);
    }

    Outcome ReadInto(const Mapping& m, std::uint32_t token) {
        ndk::Sge sink{m.base, kLen, token};
        return Post(lb_.server->Read(3, {&sink, 1}, reinterpret_cast<std::uintptr_t>(src_.base),
                                     src_mr_->remote_token()),
                    1);
    }

    Outcome PeerWrite(const Mapping& m, std::uint32_t token) {
        ndk::Sge src = Src();
        return Post(
            lb_.client->Write(4, {&src, 1}, reinterpret_cast<std::uintptr_t>(m.base), token), 1);
    }

    // A write right asked of a read-only pin must be refused inline, with
    // STATUS_ACCESS_VIOLATION (EACCES).
    void ExpectRefusal(const Reg& r, const ndk::Error& e, const std::string& cell) {
        t_.errnos[e.errnum]++;
        if (!r.writes && e.errnum != EACCES)
            t_.Fail(cell + ": a write right over a read-only pin refused with " +
                    std::strerror(e.errnum) + ", not EACCES");
    }

    Outcome FastRegister(const Mapping& m, const Reg& r, ndk::MemorySource source, std::uint32_t op,
                         const std::string& cell) {
        auto fr = Must(ndk::MemoryRegion::Create(*lb_.pd, true), "create FR MR");
        Must(fr.InitializeFastRegister(1, true), "initialize FR MR");
        auto token = lb_.server->FastRegister(5, fr, source, m.base, kPage, op);
        if (!token) {
            ExpectRefusal(r, token.error(), cell);
            return Outcome::kRefused;
        }
        if (!r.writes) t_.Fail(cell + ": a write right over a read-only pin was fast-registered");
        if (Wait(1) != Outcome::kCompleted) return Outcome::kFailed;
        if (op == ndk::op_flag::kAllowLocalWrite) return Receive(m, fr.local_token());
        if (op == ndk::op_flag::kRdmaReadSink) return ReadInto(m, fr.local_token());
        return PeerWrite(m, *token);
    }

    Outcome Bind(const Mapping& m, const Reg& r, ndk::MemorySource source,
                 const std::string& cell) {
        auto mw = Must(ndk::MemoryWindow::Create(*lb_.pd), "create window");
        auto token =
            lb_.server->Bind(6, source, mw, m.base, kPage, ndk::op_flag::kAllowRemoteWrite);
        if (!token) {
            t_.errnos[token.error().errnum]++;
            // Remote write needs an MR registered with local write (NdkBind).
            const bool local_write =
                r.is_mr ? (r.flags & ndk::mr_flag::kAllowLocalWrite) != 0 : r.writes;
            if (token.error().errnum != EACCES || local_write)
                t_.Fail(cell + ": bind refused with " + std::strerror(token.error().errnum));
            return Outcome::kRefused;
        }
        if (!r.writes) t_.Fail(cell + ": a window with remote write over a read-only pin");
        if (Wait(1) != Outcome::kCompleted) return Outcome::kFailed;
        return PeerWrite(m, *token);
    }

    Tally& t_;
    Loopback lb_;
    Pages src_;
    std::optional<ndk::MemoryRegion> src_mr_;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s DIR_TMPFS DIR_EXT4\n", argv[0]);
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Tally t;
    try {
        std::printf("running as uid %d\n", static_cast<int>(getuid()));
        auto maps = MakeMappings(argv[1], argv[2]);
        Matrix matrix(t);
        auto regs = Registrations(matrix.SinkRights());
        matrix.Controls();
        for (const auto& m : maps) {
            long before = t.failures.size();
            for (const auto& r : regs) matrix.Run(m, r);
            std::printf("%s %s: %zu registrations x every way of writing (%ld cells so far)\n",
                        static_cast<long>(t.failures.size()) == before ? "ok  " : "FAIL",
                        m.name.c_str(), regs.size(), t.cells);
        }
    } catch (const Failure& f) {
        std::printf("FAIL %s\n", f.what.c_str());
        return 1;
    }
    std::printf(
        "cells %ld: registration refused %ld, post refused %ld, failed %ld, completed %ld, "
        "landed (in writable memory) %ld\n",
        t.cells, t.refused_reg, t.refused_post, t.failed, t.completed, t.landed);
    for (auto [e, n] : t.errnos) std::printf("  errno %d (%s): %ld\n", e, std::strerror(e), n);
    std::printf("%zu failure(s)\n", t.failures.size());
    return t.failures.empty() ? 0 : 1;
}
