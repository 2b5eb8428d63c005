// SPDX-License-Identifier: GPL-2.0
// Helpers of the tests/security programs: running a function as user
// nobody in a child process, waiting for a child with a deadline, a hung
// child's kernel stack and wait channel, the kernel log's reports, a short
// hung-task timeout while a test runs, cgroup v2, and /proc/meminfo.
#pragma once

#include <grp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <functional>
#include <string>

#include "rel_common.hpp"

namespace sec {

inline constexpr uid_t kNobody = 65534;

// Drop to nobody/nogroup for good (no capability left).
inline bool BecomeNobody() {
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) {
        std::perror("dropping to nobody");
        return false;
    }
    return getuid() == kNobody && geteuid() == kNobody;
}

// Runs @fn in a child process: @as_root first (as root), then as nobody.
// @fn returns the child's exit code (kTestPass or kTestFail).  Returns
// the child's exit code, kTestFail when it died.
inline int AsNobody(const char* what, const std::function<int()>& fn,
                    const std::function<bool()>& as_root = {}) {
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) return kTestFail;
    if (pid == 0) {
        t_failures = 0;  // the child's own verdict
        if (as_root && !as_root()) _exit(kTestFail);
        if (!BecomeNobody()) _exit(kTestFail);
        int rc = fn();
        std::fflush(nullptr);
        _exit(rc);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return kTestFail;
    if (WIFSIGNALED(st)) {
        std::fprintf(stderr, "%s: child killed by signal %d\n", what, WTERMSIG(st));
        return kTestFail;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : kTestFail;
}

inline bool WriteFile(const std::string& path, const std::string& value) {
    std::ofstream out(path);
    out << value;
    out.flush();
    if (!out) std::fprintf(stderr, "writing '%s' to %s failed\n", value.c_str(), path.c_str());
    return static_cast<bool>(out);
}

inline long ReadLong(const std::string& path) {
    std::ifstream in(path);
    long v = -1;
    in >> v;
    return in ? v : -1;
}

// A /proc/meminfo field in kB, or -1.
inline long MemInfoKb(const char* field) {
    std::ifstream in("/proc/meminfo");
    std::string line, want = std::string(field) + ":";
    while (std::getline(in, line))
        if (line.rfind(want, 0) == 0) return std::stol(line.substr(want.size()));
    return -1;
}

// The cgroup v2 root, mounted at /sys/fs/cgroup when nothing is (the
// guest's init mounts only proc, sysfs and devtmpfs), with the memory
// controller enabled for its children.  Empty on failure.
inline std::string Cgroup2Root() {
    const std::string root = "/sys/fs/cgroup";
    std::ifstream m("/proc/self/mounts");
    std::string dev, dir, type;
    bool mounted = false;
    for (std::string rest; m >> dev >> dir >> type && std::getline(m, rest);)
        if (type == "cgroup2" && dir == root) mounted = true;
    if (!mounted && mount("cgroup2", root.c_str(), "cgroup2", 0, nullptr) != 0) {
        std::perror("mount cgroup2 on /sys/fs/cgroup");
        return {};
    }
    std::ifstream ctl(root + "/cgroup.subtree_control");
    std::string enabled((std::istreambuf_iterator<char>(ctl)), std::istreambuf_iterator<char>());
    if (enabled.find("memory") == std::string::npos &&
        !WriteFile(root + "/cgroup.subtree_control", "+memory"))
        return {};
    return root;
}

// A fresh child @name of the cgroup v2 root with @max bytes of
// memory.max: its path, or "" (said on stderr) without one.
inline std::string MemcgCreate(const std::string& name, long max) {
    std::string root = Cgroup2Root();
    if (root.empty()) {
        std::fprintf(stderr, "%s: no cgroup v2 memory controller\n", name.c_str());
        return {};
    }
    std::string cg = root + "/" + name;
    rmdir(cg.c_str());
    if (mkdir(cg.c_str(), 0755) != 0 && errno != EEXIST) {
        std::perror(cg.c_str());
        return {};
    }
    if (!WriteFile(cg + "/memory.max", std::to_string(max))) {
        rmdir(cg.c_str());
        return {};
    }
    return cg;
}

// A number read from the start of an open file (a cgroup's
// memory.current) into a stack buffer: nothing of the process's own is
// charged by the read, so it works at a cgroup's limit too.  -1 on error.
inline long PreadLong(int fd) {
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    return std::strtol(buf, nullptr, 10);
}

// Writes @value to the start of an open file (a cgroup's memory.max)
// from a stack buffer, as PreadLong() reads: false (said) on error.
inline bool PwriteLong(int fd, long value) {
    char buf[32];
    int n = std::snprintf(buf, sizeof(buf), "%ld", value);
    if (pwrite(fd, buf, n, 0) != n) {
        std::perror("pwrite memory.max");
        return false;
    }
    return true;
}

// Waits up to 10 s for the memory.current open at @fd to come back within
// @slack of @base (struct file and part of the rest are freed after an
// RCU grace period), says where it is; true if it did.
inline bool MemcgSettles(int fd, long base, long slack, const char* what) {
    double end = rel::Now() + 10;
    while (PreadLong(fd) > base + slack && rel::Now() < end) usleep(20000);
    long now = PreadLong(fd);
    std::printf("%s: memory.current %+ld kB from before\n", what, (now - base) / 1024);
    return now <= base + slack;
}

// Everything the test's files made went with them: ndk.ko's user_objects
// counter back at @base within @seconds (the last releases may run after
// a process's exit).
inline bool UserObjectsBack(long base, double seconds) {
    double end = rel::Now() + seconds;
    while (t_ndk_counter("user_objects") != base && rel::Now() < end) usleep(10000);
    return t_ndk_counter("user_objects") == base;
}

// ADAPTER_INFO of @adapter on @fd.
inline bool AdapterInfo(int fd, std::uint32_t adapter, ndk_u_adapter_info* info) {
    *info = {};
    info->handle = adapter;
    return ioctl(fd, NDK_IOCTL_ADAPTER_INFO, info) == 0;
}

}  // namespace sec

namespace sec {

// Starts `bash -c @cmd`; its pid.
inline pid_t Spawn(const std::string& cmd) {
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/bash", "bash", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    return pid;
}

// Waits up to @secs for @pid: its exit code, -1 when it is still running.
inline int WaitFor(pid_t pid, double secs) {
    double end = rel::Now() + secs;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 || rel::Now() > end) return -1;
        usleep(20000);
    }
}

// `bash -c @cmd` must finish within @secs: its exit code, -1 if it hangs
// (it is left running; the caller unblocks it and reaps it).
inline int RunTimed(const std::string& cmd, double secs, pid_t* hung = nullptr) {
    pid_t pid = Spawn(cmd);
    int rc = WaitFor(pid, secs);
    if (rc == -1) {
        std::fprintf(stderr, "'%s' did not return within %.0f s\n", cmd.c_str(), secs);
        if (hung) *hung = pid;
    }
    return rc;
}

// The adapter id of the RDMA device @name, or -1.
inline long AdapterId(int fd, const char* name) {
    ndk_u_adapter_query q{};
    q.flags = NDK_U_ADAPTER_QUERY_F_NEXT;
    while (ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &q) == 0) {
        if (std::strcmp(reinterpret_cast<const char*>(q.name), name) == 0) return q.adapter_id;
        q.adapter_id++;
    }
    return -1;
}

// The state letter of /proc/<pid>/stat (R, S, D, Z...), or 0.
inline char ProcState(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string s;
    std::getline(in, s);
    auto p = s.rfind(')');
    return p != std::string::npos && p + 2 < s.size() ? s[p + 2] : 0;
}

// State, wait channel and kernel stack of @pid and of its threads.
inline void DumpTask(pid_t pid, const char* why) {
    std::string dir = "/proc/" + std::to_string(pid);
    std::string wchan;
    std::ifstream(dir + "/wchan") >> wchan;
    std::fprintf(stderr, "%s: pid %d state %c wchan %s\n", why, pid, ProcState(pid), wchan.c_str());
    std::ifstream in(dir + "/stack");
    std::string line;
    while (std::getline(in, line)) std::fprintf(stderr, "  %s\n", line.c_str());
}

// Waits up to @secs for @pid; its wait status, or -1 if still there.
inline int WaitStatus(pid_t pid, double secs) {
    double end = rel::Now() + secs;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return st;
        if (r < 0) return -1;
        if (rel::Now() > end) return -1;
        usleep(5000);
    }
}

// Lines of the kernel log that match the extended regular expression
// @ere (no single quote in it), or -1.
inline long DmesgCount(const std::string& ere) {
    FILE* f = popen(("dmesg | grep -cE '" + ere + "'").c_str(), "r");
    long n = -1;
    if (f) {
        if (std::fscanf(f, "%ld", &n) != 1) n = -1;
        pclose(f);
    }
    return n;
}

// Lines of the kernel log that report a kernel problem.
inline long KernelReports() {
    return DmesgCount(
        "WARNING:|BUG:|Poison overwritten|KASAN|UBSAN|KFENCE|"
        "general protection|refcount_t|list_(add|del) corruption|blocked for more than|"
        "circular locking|lock held when returning|inconsistent lock state|"
        "suspicious RCU|soft lockup");
}

// Runs @fn as user nobody in a child, watched by this process (root): the
// child must exit 0 within @secs (else its state and kernel stack are
// dumped and it is killed), ndk.ko's counters must come back to their
// baseline and the kernel log must stay free of reports.  The number of
// those failures.
inline int RunAsNobody(const std::function<int()>& fn, const char* what, double secs = 300) {
    rel::Counters base = rel::ReadCounters();
    long reports = KernelReports();
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) _exit(BecomeNobody() ? fn() : 1);
    int fails = 0;
    int st = pid < 0 ? -1 : WaitStatus(pid, secs);
    if (st == -1) {
        if (pid > 0) {
            DumpTask(pid, what);
            kill(pid, SIGKILL);
            WaitStatus(pid, 10.0);
        }
        fails++;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        std::fprintf(stderr, "%s: child status %#x\n", what, st);
        fails++;
    }
    if (!rel::WaitCounters(base, 10.0)) {
        rel::PrintCounters(what, rel::ReadCounters());
        fails++;
    }
    if (KernelReports() != reports) {
        std::fprintf(stderr, "%s: new kernel reports\n", what);
        fails++;
    }
    return fails;
}

// Waits up to @secs for the file @path to exist; whether it does.
inline bool WaitForFile(const std::string& path, double secs) {
    for (double end = rel::Now() + secs;; usleep(100000)) {
        if (access(path.c_str(), F_OK) == 0) return true;
        if (rel::Now() > end) return false;
    }
}

// Sets /proc/sys/kernel/hung_task_timeout_secs to @secs while it lives
// (where the kernel has hung-task detection and the file is writable).
class HungTaskTimeout {
  public:
    explicit HungTaskTimeout(long secs) {
        std::ifstream in(kPath);
        if (!(in >> old_)) return;
        std::ofstream out(kPath);
        out << secs << "\n";
        set_ = static_cast<bool>(out.flush());
        std::printf("hung_task_timeout_secs: %s (was %ld)\n",
                    set_ ? std::to_string(secs).c_str() : "not writable", old_);
    }
    ~HungTaskTimeout() {
        if (!set_) return;
        std::ofstream out(kPath);
        out << old_ << "\n";
    }
    HungTaskTimeout(const HungTaskTimeout&) = delete;
    HungTaskTimeout& operator=(const HungTaskTimeout&) = delete;

  private:
    static constexpr const char* kPath = "/proc/sys/kernel/hung_task_timeout_secs";
    long old_ = -1;
    bool set_ = false;
};

// rxe0's adapter, a PD and a listener on a free port of 10.99.0.1 (@to),
// opened on @d: the passive end of loopback connections.  A member is 0
// when its open failed (and so are the ones after it).
struct Listening {
    std::uint32_t ad = 0, pd = 0, lis = 0;
    sockaddr_in to{};
};

inline Listening OpenListening(rel::Dev& d) {
    Listening l;
    l.ad = d.fd() >= 0 ? d.OpenAdapter() : 0;
    l.pd = l.ad ? t_pd_create(d.fd(), l.ad) : 0;
    l.lis = l.pd ? rel::Listen(d, l.ad, &l.to) : 0;
    return l;
}

// A CQ of depth 8 on @adapter, a QP of @pd on it and a connector: the
// active end of a connection.  A member is 0 when its create failed (and
// so are the ones after it).
struct Endpoint {
    std::uint32_t cq = 0, qp = 0, con = 0;
};

// QP_POST of @p (its token and status fields filled in); 0 or errno.
inline int PostErrno(rel::Dev& d, ndk_u_qp_post* p) {
    return d.Ioctl(NDK_IOCTL_QP_POST, p) == 0 ? 0 : errno;
}

// An RDMA write of 64 bytes from @src (under @lkey) on QP @side of @c to
// @raddr through @rtoken, which must be refused: inline, or with a failed
// result, and @target's first byte (0x5a in @src) not written.  Prints
// what happened under @what.
inline bool WriteRefused(rel::Dev& d, const rel::Conn& c, int side, std::uint64_t src,
                         std::uint32_t lkey, std::uint64_t raddr, std::uint32_t rtoken,
                         const unsigned char* target, const char* what) {
    std::int32_t status = -1;
    bool done = rel::Rdma(d, c, NDK_U_OP_WRITE, src, 64, lkey, raddr, rtoken, &status, side);
    bool touched = target[0] == 0x5a;
    std::printf("a write through %s %#x: %s, status %#x, buffer %s\n", what, rtoken,
                done ? "completed" : "refused inline or no result", static_cast<unsigned>(status),
                touched ? "WRITTEN" : "untouched");
    return (!done || status != 0) && !touched;
}

// A QP_POST on @qp of @op (NDK_U_OP_BIND or NDK_U_OP_FAST_REGISTER) of
// window or MR @object over @len bytes at @addr of registration @mr, with
// @flags; a fast-register gives the peer @addr as the region's address.
inline ndk_u_qp_post RegPost(std::uint32_t qp, std::uint32_t op, std::uint64_t context,
                             std::uint32_t object, std::uint32_t mr, std::uint64_t addr,
                             std::uint64_t len, std::uint32_t flags) {
    ndk_u_qp_post p{};
    p.qp_handle = qp;
    p.op = op;
    p.request_context = context;
    p.object_handle = object;
    p.mr_handle = mr;
    p.address = addr;
    p.length = len;
    if (op == NDK_U_OP_FAST_REGISTER) p.remote_address = addr;
    p.flags = flags;
    return p;
}

// A window and a fast-register MR initialised for one page (@fr_flags:
// NDK_U_MR_INIT_FR_F_*) in PD @pd; false when any step failed.
inline bool WindowAndFrMr(rel::Dev& d, std::uint32_t pd, std::uint32_t fr_flags, std::uint32_t* mw,
                          std::uint32_t* fr) {
    ndk_u_mw_create mc{};
    mc.pd_handle = pd;
    *mw = d.Create(NDK_IOCTL_MW_CREATE, &mc);
    ndk_u_mr_create fc{};
    fc.pd_handle = pd;
    fc.flags = NDK_U_MR_CREATE_F_FAST_REGISTER;
    *fr = d.Create(NDK_IOCTL_MR_CREATE, &fc);
    ndk_u_mr_init_fr init{*fr, 1, fr_flags, 0};
    return *mw && *fr && d.Ioctl(NDK_IOCTL_MR_INIT_FR, &init) == 0;
}

inline Endpoint MakeEndpoint(rel::Dev& d, std::uint32_t adapter, std::uint32_t pd) {
    Endpoint e;
    ndk_u_cq_create cc{};
    cc.adapter_handle = adapter;
    cc.depth = 8;
    e.cq = d.Create(NDK_IOCTL_CQ_CREATE, &cc);
    e.qp = e.cq ? rel::CreateQp(d.fd(), pd, e.cq, 1) : 0;
    ndk_u_connector_create ccr{};
    ccr.adapter_handle = adapter;
    e.con = e.qp ? d.Create(NDK_IOCTL_CONNECTOR_CREATE, &ccr) : 0;
    return e;
}

}  // namespace sec
