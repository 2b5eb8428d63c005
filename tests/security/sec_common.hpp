// SPDX-License-Identifier: GPL-2.0
// Helpers of the security tests that watch an unprivileged child from a
// root parent: dropping to user nobody, waiting for a child with a
// deadline, a hung child's kernel stack and wait channel, the kernel log's
// reports, and a short hung-task timeout while a test runs.
#pragma once

#include <grp.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <string>

#include "rel_common.hpp"

namespace sec {

inline bool DropToNobody() {
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
        std::perror("drop to nobody");
        return false;
    }
    return true;
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
    std::fprintf(stderr, "%s: pid %d state %c wchan %s\n", why, pid, ProcState(pid),
                 wchan.c_str());
    std::ifstream in(dir + "/stack");
    std::string line;
    while (std::getline(in, line)) std::fprintf(stderr, "  %s\n", line.c_str());
}

// Waits up to @secs for @pid; its wait status, or -1 if still there.
inline int WaitFor(pid_t pid, double secs) {
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

// Lines of the kernel log that report a kernel problem.
inline long KernelReports() {
    FILE* f = popen(
        "dmesg | grep -cE 'WARNING:|BUG:|Poison overwritten|KASAN|UBSAN|KFENCE|"
        "general protection|refcount_t|list_(add|del) corruption|blocked for more than|"
        "circular locking|lock held when returning|inconsistent lock state|"
        "suspicious RCU|soft lockup'",
        "r");
    long n = -1;
    if (f) {
        if (std::fscanf(f, "%ld", &n) != 1) n = -1;
        pclose(f);
    }
    return n;
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

}  // namespace sec
