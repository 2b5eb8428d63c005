// SPDX-License-Identifier: GPL-2.0
// sec-removal-fault-register (issue 15 item 10): device removal while a
// registration is stalled pinning user memory.  MEM_REGISTER and
// MR_REGISTER pinned their pages with the file's lock held, and the
// removal callback needs that lock: a page fault that user space never
// resolves held `rdma link delete` forever.
//
// The fault: a page of a file on a FUSE mount whose server (this test, as
// root) withholds the READ reply.  Not userfaultfd: in 6.1 a FOLL_LONGTERM
// pin faults without FAULT_FLAG_ALLOW_RETRY, and handle_userfault() then
// fails the fault (-EFAULT at once, with a stack dump under CONFIG_DEBUG_VM)
// instead of waiting; a FUSE read waits for its server like any file.
//
// As nobody, on one /dev/ndk file:
//  1. Two threads MEM_REGISTER the same page while its read is held: both
//     pin, one publishes, the other gets the same handle with one more
//     reference and its pin undone (one page pinned, VmPin one page).
//  2. MEM_REGISTER(MEM_READ) of a MAP_SHARED PROT_READ page of one FUSE
//     file and MR_REGISTER(REMOTE_READ) of a page of another, in two
//     threads.  Checked: both are stalled in the pin at once (the second
//     does not wait for the first's lock); `rdma link delete rxe0` returns
//     within 30 s meanwhile; once the reads are served, both return ENODEV
//     (Documentation/uapi.md); the caller's VmPin is 0 and ndk.ko's
//     user_pinned_pages and user_objects are back to their baseline.
//  3. While a MEM_REGISTER waits in the read of a page of file "d",
//     another thread of its process maps memory at once.  Before the fix
//     ndk.ko pinned file pages long-term, and 6.1 faults those holding the
//     mmap lock (no "locked" for FOLL_LONGTERM): every mmap() and every
//     page-table walk of the process (the driver's pin of another
//     registration, which holds its PD and with it device removal)
//     queued behind the file's server.  The wait itself stays what FUSE
//     makes it: once the server has taken the READ, fuse waits for its
//     answer uninterruptibly, as it does for any read.
#include <linux/fuse.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "sec_common.hpp"

namespace {

// A long-term pin stalled in a FUSE read holds the caller's mmap lock for
// reading (6.1's FOLL_LONGTERM GUP does not drop it to wait), so with such
// a pin this process could not mmap (a thread's stack) or brk until the
// read is served.  ndk.ko's pins of file pages drop it now (part 3 checks
// that), but every registering thread is still created before any of them
// starts, so parts 1 and 2 do not depend on it.
class StartLine {
  public:
    void Wait() {
        while (!go_.load()) usleep(1000);
    }
    void Go() { go_ = true; }

  private:
    std::atomic<bool> go_{false};
};

constexpr const char* kMount = "/tmp/ndk-fuse-stall";
constexpr std::uint64_t kFileSize = 4096;
constexpr std::uint64_t kNodeA = 2, kNodeB = 3, kNodeC = 4, kNodeD = 5;

// A FUSE server of four read-only files, "a" to "d", whose READs are held
// until Serve().
class StallFs {
  public:
    bool Mount() {
        if (std::system("modprobe fuse 2>/dev/null") != 0 || access("/dev/fuse", R_OK) != 0) {
            std::printf("no FUSE in this kernel (modprobe fuse, /dev/fuse)\n");
            return false;
        }
        fd_ = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        mkdir(kMount, 0755);
        std::string opts =
            "fd=" + std::to_string(fd_) + ",rootmode=40000,user_id=0,group_id=0,allow_other";
        if (fd_ < 0 || mount("ndkstall", kMount, "fuse", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
            std::perror("mounting the FUSE file system");
            return false;
        }
        mounted_ = true;
        thread_ = std::thread([this] { Run(); });
        return true;
    }
    ~StallFs() {
        stop_ = true;
        if (mounted_) umount2(kMount, MNT_DETACH);
        if (thread_.joinable()) thread_.join();
        if (fd_ >= 0) close(fd_);
        rmdir(kMount);
    }
    // Waits up to @secs for READs of @n distinct files of @nodes held;
    // how many.
    int WaitStalled(const std::vector<std::uint64_t>& nodes, double secs) {
        double end = rel::Now() + secs;
        for (;;) {
            int got = StalledFiles(nodes);
            if (got >= static_cast<int>(nodes.size()) || rel::Now() > end) return got;
            usleep(20000);
        }
    }
    // Holds every file's READs again.
    void Hold() {
        std::lock_guard<std::mutex> l(mu_);
        served_.clear();
    }
    // Answers @node's READs from now on (0: every file's).
    void Serve(std::uint64_t node = 0) {
        std::lock_guard<std::mutex> l(mu_);
        served_.push_back(node);
        std::vector<Read> keep;
        for (const auto& r : held_)
            if (Served(r.nodeid))
                ReplyRead(r);
            else
                keep.push_back(r);
        held_ = keep;
    }

  private:
    struct Read {
        std::uint64_t unique, nodeid, offset;
        std::uint32_t size;
    };
    int StalledFiles(const std::vector<std::uint64_t>& nodes) {
        std::lock_guard<std::mutex> l(mu_);
        int n = 0;
        for (std::uint64_t node : nodes)
            for (const auto& r : held_)
                if (r.nodeid == node) {
                    n++;
                    break;
                }
        return n;
    }
    bool Served(std::uint64_t node) const {
        for (std::uint64_t s : served_)
            if (!s || s == node) return true;
        return false;
    }
    void Reply(std::uint64_t unique, int error, const void* data, std::size_t len) {
        std::vector<char> buf(sizeof(fuse_out_header) + len);
        fuse_out_header h{};
        h.len = static_cast<std::uint32_t>(buf.size());
        h.error = error;
        h.unique = unique;
        std::memcpy(buf.data(), &h, sizeof(h));
        if (len) std::memcpy(buf.data() + sizeof(h), data, len);
        if (write(fd_, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size()))
            std::perror("fuse reply");
    }
    void ReplyRead(const Read& r) {
        std::uint64_t n =
            r.offset >= kFileSize ? 0 : std::min<std::uint64_t>(r.size, kFileSize - r.offset);
        std::vector<char> data(n, 'F');
        Reply(r.unique, 0, data.data(), n);
    }
    static void Attr(std::uint64_t node, fuse_attr* a) {
        *a = {};
        a->ino = node;
        a->mode = node == FUSE_ROOT_ID ? (S_IFDIR | 0755) : (S_IFREG | 0444);
        a->nlink = node == FUSE_ROOT_ID ? 2 : 1;
        a->size = node == FUSE_ROOT_ID ? 0 : kFileSize;
        a->blocks = a->size / 512;
        a->blksize = 4096;
    }
    void Run() {
        std::vector<char> buf(FUSE_MIN_READ_BUFFER + 256 * 1024);
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0) continue;
            ssize_t len = read(fd_, buf.data(), buf.size());
            if (len < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT)) continue;
            if (len < static_cast<ssize_t>(sizeof(fuse_in_header))) break;  // unmounted
            fuse_in_header in;
            std::memcpy(&in, buf.data(), sizeof(in));
            const char* arg = buf.data() + sizeof(in);
            switch (in.opcode) {
                case FUSE_INIT: {
                    fuse_init_in ii;
                    std::memcpy(&ii, arg, sizeof(ii.major) * 2 + sizeof(ii.max_readahead));
                    fuse_init_out o{};
                    o.major = FUSE_KERNEL_VERSION;
                    o.minor = std::min<std::uint32_t>(ii.minor, FUSE_KERNEL_MINOR_VERSION);
                    o.max_readahead = ii.max_readahead;
                    o.max_write = 4096;
                    // 6.1's struct is 64 bytes; a longer reply is refused.
                    Reply(in.unique, 0, &o, std::min<std::size_t>(sizeof(o), 64));
                    break;
                }
                case FUSE_LOOKUP: {
                    std::string name(arg);
                    std::uint64_t node = name == "a"   ? kNodeA
                                         : name == "b" ? kNodeB
                                         : name == "c" ? kNodeC
                                         : name == "d" ? kNodeD
                                                       : 0;
                    if (in.nodeid != FUSE_ROOT_ID || !node) {
                        Reply(in.unique, -ENOENT, nullptr, 0);
                        break;
                    }
                    fuse_entry_out e{};
                    e.nodeid = node;
                    e.generation = 1;
                    e.entry_valid = e.attr_valid = 3600;
                    Attr(node, &e.attr);
                    Reply(in.unique, 0, &e, sizeof(e));
                    break;
                }
                case FUSE_GETATTR: {
                    fuse_attr_out a{};
                    a.attr_valid = 3600;
                    Attr(in.nodeid, &a.attr);
                    Reply(in.unique, 0, &a, sizeof(a));
                    break;
                }
                case FUSE_OPEN: {
                    fuse_open_out o{};  // page cache, no direct I/O: mmap works
                    o.fh = in.nodeid;
                    Reply(in.unique, 0, &o, sizeof(o));
                    break;
                }
                case FUSE_READ: {
                    fuse_read_in ri;
                    std::memcpy(&ri, arg, sizeof(ri));
                    Read r{in.unique, in.nodeid, ri.offset, ri.size};
                    std::lock_guard<std::mutex> l(mu_);
                    if (Served(r.nodeid))
                        ReplyRead(r);
                    else
                        held_.push_back(r);
                    break;
                }
                case FUSE_FLUSH:
                case FUSE_RELEASE:
                    Reply(in.unique, 0, nullptr, 0);
                    break;
                case FUSE_FORGET:
                case FUSE_BATCH_FORGET:
                case FUSE_INTERRUPT:
                    break;  // no reply
                default:
                    Reply(in.unique, -ENOSYS, nullptr, 0);
                    break;
            }
        }
    }

    int fd_ = -1;
    bool mounted_ = false;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::mutex mu_;
    std::vector<std::uint64_t> served_;
    std::vector<Read> held_;
};

// The child, as nobody, first: two threads register the same page of
// "c" while its read is held, so both miss the existing-registration
// lookup and pin; the one that comes second under the lock must take a
// reference on the other's registration and undo its own pin.
void SameBuffer(rel::Dev& d, std::uint32_t pd, int out, int in) {
    std::string path = std::string(kMount) + "/c";
    int f = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    void* p = f < 0 ? MAP_FAILED : mmap(nullptr, kFileSize, PROT_READ, MAP_SHARED, f, 0);
    if (f >= 0) close(f);
    T_CHECK(p != MAP_FAILED);
    ndk_u_mem_register m[2] = {};
    int rc[2] = {-1, -1};
    std::vector<std::thread> t;
    StartLine start;
    t.reserve(2);
    for (int i = 0; i < 2 && p != MAP_FAILED; i++)
        t.emplace_back([&, i] {
            start.Wait();
            m[i].pd_handle = pd;
            m[i].flags = NDK_U_MEM_READ;
            m[i].address = reinterpret_cast<std::uintptr_t>(p);
            m[i].length = kFileSize;
            rc[i] = d.Ioctl(NDK_IOCTL_MEM_REGISTER, &m[i]);
        });
    char c = 'r';
    start.Go();
    T_CHECK(write(out, &c, 1) == 1);
    T_CHECK(read(in, &c, 1) == 1);  // read of "c" held, then served
    for (auto& th : t) th.join();
    std::printf("same buffer from two threads: handles %u and %u, references %u and %u\n",
                m[0].handle, m[1].handle, m[0].references, m[1].references);
    T_CHECK(rc[0] == 0 && rc[1] == 0);
    T_CHECK(m[0].handle != 0 && m[0].handle == m[1].handle);
    T_CHECK(m[0].references + m[1].references == 3);
    T_CHECK(t_vmpin_kb() == static_cast<long>(kFileSize / 1024));  // one pin left
    c = 's';
    T_CHECK(write(out, &c, 1) == 1);
    T_CHECK(read(in, &c, 1) == 1);  // counters read
    std::uint32_t left = 9;
    T_CHECK(t_mem_deregister(d.fd(), m[0].handle, &left) == 0 && left == 1);
    T_CHECK(t_mem_deregister(d.fd(), m[0].handle, &left) == 0 && left == 0);
    T_CHECK(t_vmpin_kb() == 0);
    if (p != MAP_FAILED) munmap(p, kFileSize);
}

// Then the two stalled registrations of the removal.
int Stall(int out, int in) {
    rel::Dev d;
    long id = sec::AdapterId(d.fd(), "rxe0");
    std::uint32_t adapter = id >= 0 ? t_adapter_open(d.fd(), static_cast<std::uint32_t>(id)) : 0;
    std::uint32_t pd = adapter ? t_pd_create(d.fd(), adapter) : 0;
    ndk_u_mr_create mc{};
    mc.pd_handle = pd;
    std::uint32_t mr = pd ? d.Create(NDK_IOCTL_MR_CREATE, &mc) : 0;
    T_CHECK(mr != 0);
    if (mr) SameBuffer(d, pd, out, in);
    void* map[2] = {MAP_FAILED, MAP_FAILED};
    for (int i = 0; i < 2; i++) {
        std::string path = std::string(kMount) + (i ? "/b" : "/a");
        int f = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (f < 0) std::perror(path.c_str());
        map[i] = f < 0 ? MAP_FAILED : mmap(nullptr, kFileSize, PROT_READ, MAP_SHARED, f, 0);
        if (f >= 0) close(f);
        T_CHECK(map[i] != MAP_FAILED);
    }
    char c = t_failures ? 'f' : 'p';
    if (t_failures) {
        T_CHECK(write(out, &c, 1) == 1);
        return kTestFail;
    }

    int mem_rc = 0, mem_errno = 0, mr_rc = 0, mr_errno = 0;
    StartLine start;
    std::thread mem([&] {
        start.Wait();
        ndk_u_mem_register m{};
        m.pd_handle = pd;
        m.flags = NDK_U_MEM_READ;
        m.address = reinterpret_cast<std::uintptr_t>(map[0]);
        m.length = kFileSize;
        mem_rc = d.Ioctl(NDK_IOCTL_MEM_REGISTER, &m);
        mem_errno = errno;
    });
    std::thread reg([&] {
        start.Wait();
        ndk_u_mr_register r{};
        r.handle = mr;
        r.flags = NDK_U_MR_FLAG_ALLOW_REMOTE_READ;
        r.address = reinterpret_cast<std::uintptr_t>(map[1]);
        r.length = kFileSize;
        mr_rc = d.Ioctl(NDK_IOCTL_MR_REGISTER, &r);
        mr_errno = errno;
    });
    start.Go();
    T_CHECK(write(out, &c, 1) == 1);
    T_CHECK(read(in, &c, 1) == 1);  // removal tried, reads served
    mem.join();
    reg.join();
    std::printf("after the removal: MEM_REGISTER returned %d (%s), MR_REGISTER %d (%s)\n", mem_rc,
                mem_rc ? strerrorname_np(mem_errno) : "0", mr_rc,
                mr_rc ? strerrorname_np(mr_errno) : "0");
    T_CHECK(mem_rc == -1 && mem_errno == ENODEV);
    T_CHECK(mr_rc == -1 && mr_errno == ENODEV);
    long vmpin = t_vmpin_kb();
    std::printf("VmPin with the file still open: %ld kB\n", vmpin);
    T_CHECK(vmpin == 0);
    c = t_failures ? 'f' : 'j';
    T_CHECK(write(out, &c, 1) == 1);
    T_CHECK(read(in, &c, 1) == 1);  // counters read
    for (void* p : map) munmap(p, kFileSize);
    return t_failures ? kTestFail : kTestPass;
}

// Part 3, as nobody: a registration of a page of "d" waits in its read
// while the main thread maps memory; the mmap's time in ms (capped at
// 250) goes to @out once @in says the read is held.
int StallMmap(int out, int in) {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    std::uint32_t pd = ad ? t_pd_create(d.fd(), ad) : 0;
    std::string path = std::string(kMount) + "/d";
    int f = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    void* p = f < 0 ? MAP_FAILED : mmap(nullptr, kFileSize, PROT_READ, MAP_SHARED, f, 0);
    if (!pd || p == MAP_FAILED) return kTestFail;
    ndk_u_mem_register m{};
    m.pd_handle = pd;
    m.flags = NDK_U_MEM_READ;
    m.address = reinterpret_cast<std::uintptr_t>(p);
    m.length = kFileSize;
    std::thread reg([&] { d.Ioctl(NDK_IOCTL_MEM_REGISTER, &m); });
    char c;
    T_CHECK(read(in, &c, 1) == 1);  // the read is held
    double t0 = rel::Now();
    void* q = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    c = static_cast<char>(std::min(250.0, (rel::Now() - t0) * 1000));
    T_CHECK(q != MAP_FAILED && write(out, &c, 1) == 1);
    reg.join();  // served
    munmap(q, 1 << 20);
    return t_failures ? kTestFail : kTestPass;
}

// The kernel stacks of @pid's threads, when it does not answer.
void DumpStacks(pid_t pid) {
    std::string cmd =
        "for t in /proc/" + std::to_string(pid) + "/task/*; do echo \"== $t\"; cat $t/stack; done";
    std::fflush(nullptr);
    std::system(cmd.c_str());
}

// One byte from @fd within @secs; on a timeout, @kid's stacks.
bool ReadTimed(int fd, char* c, double secs, pid_t kid) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(secs * 1000)) == 1) return read(fd, c, 1) == 1;
    std::printf("no answer from the child within %.0f s; its threads:\n", secs);
    DumpStacks(kid);
    return false;
}

}  // namespace

int main() {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    rel::Counters base = rel::ReadCounters();
    rel::PrintCounters("baseline", base);
    StallFs fs;
    if (!fs.Mount()) {
        // Both guest kernels have FUSE (scripts/debug-kernel.config).
        std::printf("sec-removal-fault-register: no FUSE mount: the test bed is broken\n");
        return kTestFail;
    }
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) return kTestFail;
    std::fflush(nullptr);
    pid_t kid = fork();
    if (kid == 0) {
        close(up[0]);
        close(down[1]);
        t_failures = 0;
        int rc = sec::BecomeNobody() ? Stall(up[1], down[0]) : kTestFail;
        std::fflush(nullptr);
        _exit(rc);
    }
    close(up[1]);
    close(down[0]);
    char c = 0;
    if (read(up[0], &c, 1) == 1 && c == 'r') {
        T_CHECK(fs.WaitStalled({kNodeC}, 10) == 1);
        sleep(1);  // the second thread gets past the lookup into the pin
        fs.Serve(kNodeC);
        T_CHECK(write(down[1], &c, 1) == 1);
        T_CHECK(ReadTimed(up[0], &c, 60, kid) && c == 's');
        rel::Counters same = rel::ReadCounters();
        rel::PrintCounters("same buffer registered twice", same);
        T_CHECK(same.pinned == base.pinned + 1);
        T_CHECK(write(down[1], &c, 1) == 1);
        c = 0;
        T_CHECK(ReadTimed(up[0], &c, 60, kid));
    }
    T_CHECK(c == 'p');
    int stalled = fs.WaitStalled({kNodeA, kNodeB}, 10);
    std::printf("registrations stalled in a FUSE read at once: %d of 2\n", stalled);
    T_CHECK(stalled >= 1);
    T_CHECK(stalled == 2);  // neither waits for the other's file lock

    pid_t hung = 0;
    double t0 = rel::Now();
    int rc = sec::RunTimed("rdma link delete rxe0", 30, &hung);
    std::printf(
        "rdma link delete rxe0 with MEM_REGISTER and MR_REGISTER stalled in a fault: "
        "%s after %.1f s\n",
        rc == 0 ? "returned" : "did not return", rel::Now() - t0);
    T_CHECK(rc == 0);
    fs.Serve();
    if (hung) {
        int hrc = sec::WaitFor(hung, 60);
        if (hrc == -1) DumpStacks(hung);
        T_CHECK(hrc == 0);
    }
    c = 'x';
    T_CHECK(write(down[1], &c, 1) == 1);
    T_CHECK(ReadTimed(up[0], &c, 60, kid) && c == 'j');
    rel::Counters live = rel::ReadCounters();
    rel::PrintCounters("registrations returned, file open", live);
    T_CHECK(live.pinned == base.pinned);
    T_CHECK(write(down[1], &c, 1) == 1);
    T_CHECK(sec::WaitFor(kid, 60) == kTestPass);
    T_CHECK(rel::WaitCounters(base, 10));
    rel::PrintCounters("file closed", rel::ReadCounters());
    T_CHECK(sec::RunTimed("rdma link add rxe0 type rxe netdev v0", 60) == 0);

    fs.Hold();
    int up3[2], down3[2];
    T_CHECK(pipe(up3) == 0 && pipe(down3) == 0);
    std::fflush(nullptr);
    pid_t kid3 = fork();
    if (kid3 == 0) _exit(sec::BecomeNobody() ? StallMmap(up3[1], down3[0]) : kTestFail);
    int held = fs.WaitStalled({kNodeD}, 10);
    T_CHECK(held == 1);
    c = 'h';
    T_CHECK(write(down3[1], &c, 1) == 1);
    bool mapped = ReadTimed(up3[0], &c, 10, kid3);
    std::printf("a registration waits in a FUSE read: its process mapped memory %s\n",
                mapped ? (std::to_string(static_cast<unsigned char>(c)) + " ms later").c_str()
                       : "NOT within 10 s");
    T_CHECK(held == 1 && mapped && static_cast<unsigned char>(c) < 250);
    fs.Serve();
    T_CHECK(sec::WaitFor(kid3, 60) == kTestPass);
    T_CHECK(rel::WaitCounters(base, 10));
    return t_result("sec-removal-fault-register");
}
