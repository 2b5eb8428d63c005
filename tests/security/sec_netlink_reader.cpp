// SPDX-License-Identifier: GPL-2.0
// sec-netlink-reader: what a RES_GET dump of the "ndk" generic netlink
// family shows is decided by whoever asked, not by whoever reads it.
//
// A process of nobody (the attacker) with 150 PDs asks for a dump of the
// PDs on its own netlink socket, reads nothing, and hands the socket to
// another process (the victim, root here, with a PD of its own), which
// reads one message batch from it, as a process may do with a descriptor
// it was given.  The dump's first batch is made when it is asked for;
// every later batch when the previous one is read, in the reader's
// context.  The attacker then reads the rest: every object in it must be
// its own.  Before the fix each batch listed the files of the process
// that read the previous one: the victim's PD, with its pid, came into
// the attacker's socket.
//
// Then a file whose command holds its lock (the root-only test hook
// debugfs ndk/hold_file_lock_ms, as a command waiting under it for a
// notifier's removal would) must stall only a netlink request that asks
// for that file, and that one for a second at most (EAGAIN), while
// another file opens and closes at once.  Before the fix the request
// waited for the file's lock holding the registry's, so every open() and
// close() of /dev/ndk on the host waited with it.
//
// sec-netlink-reader exec (test sec-netlink-exec): the requester's
// address space, not its thread group, decides.  A process of nobody with
// 150 PDs in one file asks for a dump of the PDs, reads nothing, hands the
// socket to a child and execs; the new image (same thread group, new
// address space, as a setuid program would be) opens a file with a PD of
// its own; the child then reads the whole dump: the old file's 150 PDs and
// nothing of the new one.  Before the fix the later batches listed the
// new image's PD too (a setuid program's registrations: addresses,
// lengths, handles).
//
// A PROC_GET request of the new image's own pid likewise lists only the
// file it opened itself (until 2026-12-03 also the old image's).
//
// sec-netlink-reader walk (test sec-netlink-walk): a PROC_GET counts the
// handles of each file it shows.  As nobody, a file with 100000 PDs (20000
// on the debug kernel) and a thread asking PROC_GET of its own files back
// to back for 3 s; meanwhile other files are opened and closed, every
// open() and close() timed.  The walk (tens of milliseconds under TCG)
// must not hold up the other files: the longest open and close is under
// half the longest walk (an open that waited for a walk takes at least
// the rest of it).  Before the fix the walk ran under the registry's
// lock, which every open() and close() of /dev/ndk takes: they waited
// for it.
// sec-netlink-reader files (test sec-netlink-files): a STAT_GET totals
// the cache counters of every open file, and a PROC_GET of a pid (or a
// non-admin's own) passes every file that is not the one asked for.  As
// nobody, a holder process opens 100000 files (20000 on the debug
// kernel); another process asks STAT_GET and PROC_GET of its own pid back
// to back for 3 s while it opens and closes files of its own, each open()
// and close() timed: at most one in a hundred takes half the longest
// request or longer.
// Before the fix both requests passed every file under the registry's
// lock, which every open() and close() of /dev/ndk takes.
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <ndk/ndk_netlink.h>

#include "sec_common.hpp"

namespace {

constexpr int kPds = 150;

// Sends a generic netlink request of @cmd to family @family with @attrs
// (already laid out); false on error.
bool Send(int fd, std::uint16_t family, std::uint8_t cmd, std::uint16_t flags,
          const std::vector<unsigned char>& attrs) {
    std::vector<unsigned char> m(NLMSG_HDRLEN + GENL_HDRLEN + attrs.size());
    auto* nlh = reinterpret_cast<nlmsghdr*>(m.data());
    nlh->nlmsg_len = static_cast<std::uint32_t>(m.size());
    nlh->nlmsg_type = family;
    nlh->nlmsg_flags = NLM_F_REQUEST | flags;
    nlh->nlmsg_seq = 1;
    auto* g = reinterpret_cast<genlmsghdr*>(m.data() + NLMSG_HDRLEN);
    g->cmd = cmd;
    g->version = 1;
    std::memcpy(m.data() + NLMSG_HDRLEN + GENL_HDRLEN, attrs.data(), attrs.size());
    return send(fd, m.data(), m.size(), 0) == static_cast<ssize_t>(m.size());
}

// One attribute, padded.
void Put(std::vector<unsigned char>* out, std::uint16_t type, const void* data, std::size_t len) {
    nlattr a{static_cast<std::uint16_t>(NLA_HDRLEN + len), type};
    std::size_t at = out->size();
    out->resize(at + NLA_ALIGN(NLA_HDRLEN + len));
    std::memcpy(out->data() + at, &a, sizeof(a));
    std::memcpy(out->data() + at + NLA_HDRLEN, data, len);
}

// Calls @fn(type, payload, len) for each attribute of a generic netlink
// message.
template <typename F>
void Attrs(const nlmsghdr* nlh, F fn) {
    const auto* p = reinterpret_cast<const unsigned char*>(nlh) + NLMSG_HDRLEN + GENL_HDRLEN;
    const auto* end = reinterpret_cast<const unsigned char*>(nlh) + nlh->nlmsg_len;
    while (p + NLA_HDRLEN <= end) {
        const auto* a = reinterpret_cast<const nlattr*>(p);
        if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end) break;
        fn(a->nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN, a->nla_len - NLA_HDRLEN);
        p += NLA_ALIGN(a->nla_len);
    }
}

// The id of generic netlink family "ndk", or 0.
std::uint16_t FamilyId(int fd) {
    std::vector<unsigned char> a;
    Put(&a, CTRL_ATTR_FAMILY_NAME, NDK_GENL_NAME, sizeof(NDK_GENL_NAME));
    if (!Send(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, a)) return 0;
    std::vector<unsigned char> buf(8192);
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    std::uint16_t id = 0;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); n > 0 && NLMSG_OK(h, n);
         h = NLMSG_NEXT(h, n))
        if (h->nlmsg_type == GENL_ID_CTRL)
            Attrs(h, [&](int type, const unsigned char* p, std::size_t) {
                if (type == CTRL_ATTR_FAMILY_ID) std::memcpy(&id, p, sizeof(id));
            });
    return id;
}

// Reads the rest of a dump from @fd: the values of attribute @attr (u32)
// of its objects, and whether NLMSG_DONE came.
bool ReadDump(int fd, std::vector<std::uint32_t>* pids, int attr = NDK_NL_ATTR_PID) {
    std::vector<unsigned char> buf(32768);
    for (;;) {
        ssize_t n = recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) return false;
        for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE) return true;
            if (h->nlmsg_type == NLMSG_ERROR) return false;
            Attrs(h, [&](int type, const unsigned char* p, std::size_t) {
                std::uint32_t v;
                std::memcpy(&v, p, sizeof(v));
                if (type == attr) pids->push_back(v);
            });
        }
    }
}

int g_pair[2];

// The attacker: its PDs, the dump asked for, the socket handed over; the
// rest read once the victim has read one batch.
int Attacker() {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    int pds = 0;
    for (int i = 0; ad && i < kPds; i++) pds += t_pd_create(d.fd(), ad) != 0;
    T_CHECK(pds == kPds);
    int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    std::uint16_t family = nl >= 0 ? FamilyId(nl) : 0;
    T_CHECK(family != 0);
    std::vector<unsigned char> a;
    std::uint32_t type = NDK_NL_OBJ_PD;
    Put(&a, NDK_NL_ATTR_RES_TYPE, &type, sizeof(type));
    // Tell the victim to open its file now: a later file id than ours.
    T_CHECK(write(g_pair[1], "o", 1) == 1);
    char c;
    T_CHECK(read(g_pair[1], &c, 1) == 1);  // its PD exists
    T_CHECK(Send(nl, family, NDK_NL_CMD_RES_GET, NLM_F_DUMP, a));
    T_CHECK(rel::SendFd(g_pair[1], nl));
    T_CHECK(read(g_pair[1], &c, 1) == 1);  // it read one batch
    std::vector<std::uint32_t> pids;
    T_CHECK(ReadDump(nl, &pids));
    auto own = static_cast<std::uint32_t>(getpid());
    auto foreign = std::count_if(pids.begin(), pids.end(), [&](auto p) { return p != own; });
    std::printf("attacker: %zu objects in the rest of the dump, %ld of another process\n",
                pids.size(), static_cast<long>(foreign));
    T_CHECK(!pids.empty() && foreign == 0);
    close(nl);
    return t_failures ? kTestFail : kTestPass;
}

// Asks for a dump of the PDs on a new netlink socket: the socket, or -1.
int AskPdDump() {
    int nl = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
    std::uint16_t family = nl >= 0 ? FamilyId(nl) : 0;
    std::vector<unsigned char> a;
    std::uint32_t type = NDK_NL_OBJ_PD;
    Put(&a, NDK_NL_ATTR_RES_TYPE, &type, sizeof(type));
    if (!family || !Send(nl, family, NDK_NL_CMD_RES_GET, NLM_F_DUMP, a)) {
        if (nl >= 0) close(nl);
        return -1;
    }
    return nl;
}

// The requester before its exec: a file with kPds PDs (kept open across
// the exec), the dump asked for, a child that reads it once told to.
int ExecRequester() {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    int pds = 0;
    for (int i = 0; ad && i < kPds; i++) pds += t_pd_create(d.fd(), ad) != 0;
    T_CHECK(pds == kPds && fcntl(d.fd(), F_SETFD, 0) == 0);
    int go[2];
    T_CHECK(pipe(go) == 0);
    int nl = AskPdDump();
    T_CHECK(nl >= 0);
    if (t_failures) return kTestFail;
    std::fflush(nullptr);
    pid_t reader = fork();
    if (reader == 0) {
        close(go[1]);
        char c;
        if (read(go[0], &c, 1) != 1) _exit(kTestFail);
        std::vector<std::uint32_t> files;
        T_CHECK(ReadDump(nl, &files, NDK_NL_ATTR_FILE_ID));
        std::size_t first = files.empty() ? 0 : files.front();
        auto others = std::count_if(files.begin(), files.end(), [&](auto f) { return f != first; });
        std::printf(
            "reader: %zu PDs in the dump, %ld of a file the requester opened after its exec\n",
            files.size(), static_cast<long>(others));
        T_CHECK(files.size() == kPds && others == 0);
        std::fflush(nullptr);
        _exit(t_failures ? kTestFail : kTestPass);
    }
    close(go[0]);
    close(nl);
    std::string wr = std::to_string(go[1]), child = std::to_string(reader);
    execl("/proc/self/exe", "sec-netlink-reader", "exec-new", wr.c_str(), child.c_str(),
          static_cast<char*>(nullptr));
    std::perror("execl");
    return kTestFail;
}

// Asks for a PROC_GET of this process's files on @nl and receives the
// reply into @buf: its length, or -1.
ssize_t ProcGetReply(int nl, std::uint16_t family, std::vector<unsigned char>* buf) {
    std::vector<unsigned char> a;
    auto pid = static_cast<std::uint32_t>(getpid());
    Put(&a, NDK_NL_ATTR_PID, &pid, sizeof(pid));
    if (!family || !Send(nl, family, NDK_NL_CMD_PROC_GET, 0, a)) return -1;
    buf->resize(32768);
    return recv(nl, buf->data(), buf->size(), 0);
}

// The files a PROC_GET of this process lists (one message each), or -1.
int ProcGetFiles() {
    int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    std::uint16_t family = nl >= 0 ? FamilyId(nl) : 0;
    std::vector<unsigned char> buf;
    ssize_t len = ProcGetReply(nl, family, &buf);
    int files = len > 0 ? 0 : -1;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); len > 0 && NLMSG_OK(h, len);
         h = NLMSG_NEXT(h, len))
        files += h->nlmsg_type == family;
    if (nl >= 0) close(nl);
    return files;
}

// The requester after its exec: a file with a PD of its own; a PROC_GET
// of its pid lists that file, not the one its old image opened (still
// open: same thread group, another address space); then the reader's
// verdict.
int ExecNew(int go, pid_t reader) {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    T_CHECK(ad && t_pd_create(d.fd(), ad) != 0);
    int files = ProcGetFiles();
    std::printf("exec: PROC_GET of the requester's pid lists %d files (its new image's 1)\n",
                files);
    T_CHECK(files == 1);
    T_CHECK(write(go, "g", 1) == 1);
    int st = 0;
    T_CHECK(waitpid(reader, &st, 0) == reader && WIFEXITED(st) && WEXITSTATUS(st) == kTestPass);
    return t_failures ? kTestFail : kTestPass;
}

// One PROC_GET of this process's files on @nl: 0 when it was answered,
// the errno it was refused with, or -1 when nothing came back.
int ProcGet(int nl, std::uint16_t family) {
    std::vector<unsigned char> buf;
    ssize_t n = ProcGetReply(nl, family, &buf);
    auto* h = reinterpret_cast<nlmsghdr*>(buf.data());
    if (n <= 0 || !NLMSG_OK(h, n)) return -1;
    return h->nlmsg_type == NLMSG_ERROR ? -static_cast<nlmsgerr*>(NLMSG_DATA(h))->error : 0;
}

// A PROC_GET of this process's files while one of them is busy: the
// request's errno and how long it took, and how long another file's
// open() and close() took meanwhile.
void BusyFile() {
    rel::Dev busy;
    if (!sec::WriteFile("/sys/kernel/debug/ndk/hold_file_lock_ms", "3000")) {
        T_CHECK(!"the test hook");
        return;
    }
    std::thread holder([&] { busy.OpenAdapter(); });  // holds the lock 3 s
    usleep(200000);
    int err = 0;
    double asked = 0, answered = 0;
    std::thread asker([&] {
        int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
        std::uint16_t family = nl >= 0 ? FamilyId(nl) : 0;
        asked = rel::Now();
        err = ProcGet(nl, family);
        answered = rel::Now();
        if (nl >= 0) close(nl);
    });
    usleep(300000);
    double t0 = rel::Now();
    { rel::Dev other; }
    double open_close = rel::Now() - t0;
    asker.join();
    holder.join();
    std::printf("busy file: PROC_GET %s after %.2f s; another file opened and closed in %.3f s\n",
                err > 0 ? strerrorname_np(err)
                : err   ? "no answer"
                        : "answered",
                answered - asked, open_close);
    T_CHECK(open_close < 0.5);
    T_CHECK(err == EAGAIN && answered - asked > 0.9 && answered - asked < 2.5);
}

// What a thread sending requests back to back does to open() and close()
// of /dev/ndk for 3 s meanwhile.
struct Contention {
    std::vector<double> opens;  // each open and close of a file of our own
    double request_max = 0;     // the longest request
    int requests = 0, unanswered = 0;
};

// @answered(): one request, true when it was answered.
template <typename F>
Contention OpensDuring(F answered) {
    Contention c;
    std::atomic<bool> stop{false};
    std::thread asker([&] {
        while (!stop) {
            double t0 = rel::Now();
            if (!answered()) c.unanswered++;
            c.request_max = std::max(c.request_max, rel::Now() - t0);
            c.requests++;
        }
    });
    double end = rel::Now() + 3;
    while (rel::Now() < end) {
        double t0 = rel::Now();
        { rel::Dev other; }
        c.opens.push_back(rel::Now() - t0);
        usleep(2000);
    }
    stop = true;
    asker.join();
    return c;
}

double Longest(const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

// 100000 PDs, scaled down on the debug kernel (KASAN slows the walk too).
const int kWalkPds = static_cast<int>(rel::Scaled(100000, 20000));

int Walk() {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    int pds = 0;
    while (ad && pds < kWalkPds && t_pd_create(d.fd(), ad)) pds++;
    T_CHECK(pds == kWalkPds);
    int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    std::uint16_t family = nl >= 0 ? FamilyId(nl) : 0;
    T_CHECK(family != 0);
    if (t_failures) return kTestFail;
    Contention c = OpensDuring([&] { return ProcGet(nl, family) == 0; });
    close(nl);
    double open_max = Longest(c.opens);
    std::printf(
        "a file of %d PDs: %d PROC_GETs (%d unanswered), the longest %.1f ms; "
        "%zu other files opened and closed meanwhile, the longest %.1f ms\n",
        pds, c.requests, c.unanswered, c.request_max * 1e3, c.opens.size(), open_max * 1e3);
    T_CHECK(c.unanswered == 0 && c.requests > 0);
    T_CHECK(open_max < c.request_max / 2);
    return t_failures ? kTestFail : kTestPass;
}

// A STAT_GET: 0 when answered with the family's reply, else -1.
int StatGet(int nl, std::uint16_t family) {
    if (!Send(nl, family, NDK_NL_CMD_STAT_GET, 0, {})) return -1;
    std::vector<unsigned char> buf(32768);
    ssize_t n = recv(nl, buf.data(), buf.size(), 0);
    auto* h = reinterpret_cast<nlmsghdr*>(buf.data());
    return n > 0 && NLMSG_OK(h, n) && h->nlmsg_type == family ? 0 : -1;
}

const int kWalkFiles = static_cast<int>(rel::Scaled(100000, 20000));

// As root, before the test becomes nobody: room for the holder's files.
bool RaiseFileLimit() {
    rlimit r{static_cast<rlim_t>(kWalkFiles) + 1024, static_cast<rlim_t>(kWalkFiles) + 1024};
    return setrlimit(RLIMIT_NOFILE, &r) == 0;
}

int Files() {
    int ready[2], done[2];
    if (pipe(ready) || pipe(done)) return kTestFail;
    std::fflush(nullptr);
    pid_t holder = fork();
    if (holder == 0) {
        int n = 0;
        while (n < kWalkFiles && open("/dev/ndk", O_RDWR | O_CLOEXEC) >= 0) n++;
        char c;
        if (write(ready[1], &n, sizeof(n)) != sizeof(n) || read(done[0], &c, 1) != 1) _exit(1);
        _exit(0);  // closes them
    }
    int opened = 0;
    T_CHECK(read(ready[0], &opened, sizeof(opened)) == sizeof(opened));
    T_CHECK(opened == kWalkFiles);
    int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    std::uint16_t family = nl >= 0 ? FamilyId(nl) : 0;
    T_CHECK(family != 0);
    // PROC_GET of this process (ENOENT or its one file, after passing the
    // holder's) and STAT_GET in turn.
    int k = 0;
    Contention c = OpensDuring(
        [&] { return family && (k++ % 2 ? ProcGet(nl, family) : StatGet(nl, family)) >= 0; });
    if (nl >= 0) close(nl);
    T_CHECK(write(done[1], "d", 1) == 1);
    int st = 0;
    T_CHECK(waitpid(holder, &st, 0) == holder && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    // An open() that waited for a request took at least the rest of it;
    // one that met something else (a kmemleak scan on the debug kernel)
    // is let off, one in a hundred.
    auto slow = std::count_if(c.opens.begin(), c.opens.end(),
                              [&](double t) { return t >= c.request_max / 2; });
    std::printf(
        "%d files of another process: %d STAT_GETs and PROC_GETs (%d unanswered), the longest "
        "%.1f ms; %zu files of our own opened and closed meanwhile, the longest %.1f ms, %zd "
        "of them half as long as that request or longer\n",
        opened, c.requests, c.unanswered, c.request_max * 1e3, c.opens.size(),
        Longest(c.opens) * 1e3, slow);
    T_CHECK(c.unanswered == 0 && c.requests > 0 && !c.opens.empty());
    T_CHECK(slow <= static_cast<std::ptrdiff_t>(c.opens.size() / 100));
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "files") {
        T_CHECK(sec::AsNobody("sec-netlink-files", Files, RaiseFileLimit) == kTestPass);
        return t_result("sec-netlink-files");
    }
    if (argc > 1 && std::string(argv[1]) == "walk") {
        T_CHECK(sec::AsNobody("sec-netlink-walk", Walk) == kTestPass);
        return t_result("sec-netlink-walk");
    }
    if (argc == 4 && std::string(argv[1]) == "exec-new")
        return ExecNew(std::atoi(argv[2]), static_cast<pid_t>(std::atoi(argv[3])));
    if (argc > 1 && std::string(argv[1]) == "exec") {
        T_CHECK(sec::AsNobody("sec-netlink-exec", ExecRequester) == kTestPass);
        return t_result("sec-netlink-exec");
    }
    T_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, g_pair) == 0);
    std::fflush(nullptr);
    pid_t child = fork();
    if (child == 0) {
        close(g_pair[0]);
        int rc = sec::BecomeNobody() ? Attacker() : kTestFail;
        std::fflush(nullptr);
        _exit(rc);
    }
    close(g_pair[1]);
    // The victim: a file with a PD, opened after the attacker's.
    char c;
    T_CHECK(read(g_pair[0], &c, 1) == 1);
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    T_CHECK(ad && t_pd_create(d.fd(), ad) != 0);
    T_CHECK(write(g_pair[0], "p", 1) == 1);
    int nl = rel::RecvFd(g_pair[0]);
    T_CHECK(nl >= 0);
    std::vector<unsigned char> buf(32768);
    ssize_t n = nl >= 0 ? recv(nl, buf.data(), buf.size(), 0) : -1;
    std::printf("victim (pid %d): read one batch of %zd bytes from the attacker's socket\n",
                getpid(), n);
    T_CHECK(n > 0);
    if (nl >= 0) close(nl);
    T_CHECK(write(g_pair[0], "r", 1) == 1);
    int st = 0;
    waitpid(child, &st, 0);
    T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == kTestPass);
    BusyFile();
    return t_result("sec-netlink-reader");
}
