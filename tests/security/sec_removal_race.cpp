// SPDX-License-Identifier: GPL-2.0
// sec-removal-race (issue 15 item 5): device removal racing adapter open
// and close.  ndk_ib_remove() took a reference on an adapter whose last
// one a concurrent close had just dropped (refcount warning, removal
// callback on freed memory).
//
// Two processes as nobody open and close adapters of rxe0 in a loop
// (HANDLE_CLOSE, and every 8th round close(fd) with the adapter open),
// while root deletes and re-adds rxe0 for 60 s (x NDK_STRESS_SCALE, at
// least 10 s) and for at least two cycles.  Every delete and add must return within 60 s, the
// openers see only ENOENT/ENODEV besides success, ndk.ko's user object counter comes back, and the
// kernel log stays clean (vm.dmesg-clean: no refcount warning).
#include <sys/mman.h>

#include <atomic>

#include "sec_common.hpp"

namespace {

const char* kRemove = "rdma link delete rxe0";
const char* kAdd = "rdma link add rxe0 type rxe netdev v0";

struct Shared {
    std::atomic<int> stop;
    std::atomic<long> opens, closes, gone, bad;
};

int Opener(Shared* sh) {
    long rounds = 0;
    while (!sh->stop.load()) {
        int fd = t_open_ndk();
        if (fd < 0) return kTestFail;
        for (int i = 0; i < 8 && !sh->stop.load(); i++, rounds++) {
            long id = sec::AdapterId(fd, "rxe0");
            if (id < 0) {
                usleep(1000);
                continue;
            }
            std::uint32_t a = t_adapter_open(fd, static_cast<std::uint32_t>(id));
            if (!a) {
                if (errno == ENOENT || errno == ENODEV)
                    sh->gone++;
                else {
                    std::fprintf(stderr, "ADAPTER_OPEN: %s\n", strerror(errno));
                    sh->bad++;
                }
                continue;
            }
            sh->opens++;
            if (i == 7) break;  // close(fd) with the adapter open
            if (t_handle_close(fd, a) != 0) {
                std::fprintf(stderr, "HANDLE_CLOSE: %s\n", strerror(errno));
                sh->bad++;
            }
            sh->closes++;
        }
        close(fd);
    }
    std::printf("opener %d: %ld rounds\n", getpid(), rounds);
    return kTestPass;
}

}  // namespace

int main() {
    auto* sh = static_cast<Shared*>(
        mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (sh == MAP_FAILED) return kTestFail;
    new (sh) Shared{};
    long base = t_ndk_counter("user_objects");
    const double secs = static_cast<double>(rel::Scaled(60, 10));
    pid_t kids[2];
    for (pid_t& k : kids) {
        std::fflush(nullptr);
        k = fork();
        if (k == 0) _exit(sec::BecomeNobody() ? Opener(sh) : kTestFail);
    }
    double end = rel::Now() + secs;
    long cycles = 0;
    bool hung = false;
    // At least two cycles however long one takes: on the debug kernel under
    // CI load a single delete/add has taken longer than the whole 12 s.
    while ((rel::Now() < end || cycles < 2) && !hung) {
        usleep(static_cast<useconds_t>(cycles % 5) * 20000);  // vary the phase
        if (sec::RunTimed(kRemove, 60) != 0) hung = true;
        if (!hung && sec::RunTimed(kAdd, 60) != 0) hung = true;
        cycles++;
    }
    sh->stop = 1;
    for (pid_t k : kids) T_CHECK(sec::WaitFor(k, 60) == kTestPass);
    std::printf(
        "%ld delete/add cycles in %.0f s; adapters opened %ld, closed %ld, "
        "refused (device gone) %ld, unexpected errors %ld\n",
        cycles, secs, sh->opens.load(), sh->closes.load(), sh->gone.load(), sh->bad.load());
    T_CHECK(!hung);
    T_CHECK(cycles >= 2 && sh->opens.load() > 0 && sh->bad.load() == 0);
    if (access("/sys/class/infiniband/rxe0", F_OK) != 0) T_CHECK(sec::RunTimed(kAdd, 60) == 0);
    double until = rel::Now() + 10;
    while (t_ndk_counter("user_objects") != base && rel::Now() < until) usleep(10000);
    T_CHECK(t_ndk_counter("user_objects") == base);
    return t_result("sec-removal-race");
}
