// SPDX-License-Identifier: GPL-2.0
// Description: per-file object handles of /dev/ndk.  A handle works only
// on the file that created it (another open: ENOENT; handle 0: ENOENT),
// only in the opening process (a forked child: EPERM on the inherited
// file, ENOENT with the same numbers on its own open), with the right
// type (EINVAL); every new command rejects reserved fields and flags;
// HANDLE_CLOSE refuses a parent with children (EBUSY); ADAPTER_INFO
// returns NDK_ADAPTER_INFO, also through ndk::Adapter.
#include <sys/wait.h>

#include <ndk/ndk.hpp>

#include "uobj_common.hpp"

namespace {

void CheckReservedAndFlags(int fd, std::uint32_t adapter, std::uint32_t pd) {
    ndk_u_adapter_open ao{};
    ao.adapter_id = 0;
    ao.flags = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_OPEN, &ao), EINVAL);
    ao = {};
    ao.reserved = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_OPEN, &ao), EINVAL);

    ndk_u_adapter_info ai{};
    ai.handle = adapter;
    ai.flags = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_INFO, &ai), EINVAL);
    ai = {};
    ai.handle = adapter;
    ai.reserved0 = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_INFO, &ai), EINVAL);
    ai = {};
    ai.handle = adapter;
    ai.reserved1 = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_INFO, &ai), EINVAL);

    ndk_u_pd_create pc{};
    pc.adapter_handle = adapter;
    pc.flags = 0x80000000u;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_PD_CREATE, &pc), EINVAL);
    pc = {};
    pc.adapter_handle = adapter;
    pc.reserved = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_PD_CREATE, &pc), EINVAL);

    ndk_u_mem_deregister md{};
    md.handle = pd;
    md.flags = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_MEM_DEREGISTER, &md), EINVAL);
    md = {};
    md.handle = pd;
    md.reserved = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_MEM_DEREGISTER, &md), EINVAL);

    ndk_u_handle_close hc{};
    hc.handle = pd;
    hc.flags = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_HANDLE_CLOSE, &hc), EINVAL);
}

}  // namespace

int main() {
    int fd1 = t_open_ndk(), fd2 = t_open_ndk();
    if (fd1 < 0 || fd2 < 0) return kTestFail;
    ndk_u_query_info qi{};
    T_CHECK(ioctl(fd1, NDK_IOCTL_QUERY_INFO, &qi) == 0);
    T_CHECK(qi.features & NDK_U_FEATURE_OBJECTS);
    long id = t_first_adapter(fd1);
    if (id < 0) {
        std::fprintf(stderr, "no adapter\n");
        return kTestFail;
    }

    std::uint32_t a1 = t_adapter_open(fd1, id);
    std::uint32_t a2 = t_adapter_open(fd2, id);
    T_CHECK(a1 != 0 && a2 != 0);
    T_EXPECT_ERRNO(t_adapter_open(fd1, 0xfffffff0u) ? 0 : -1, ENOENT);

    ndk_u_adapter_info ai{};
    ai.handle = a1;
    T_CHECK(ioctl(fd1, NDK_IOCTL_ADAPTER_INFO, &ai) == 0);
    T_CHECK(ai.info_version_major == 1 && ai.info_version_minor == 2);
    T_CHECK(ai.max_registration_size >= 4096);
    T_CHECK(ai.frmr_page_count >= 16 && ai.max_cq_depth > 0);
    T_CHECK(ai.reserved0 == 0 && ai.reserved1 == 0);

    std::uint32_t pd1 = t_pd_create(fd1, a1);
    T_CHECK(pd1 != 0);

    // Handle 0 and handles of another file (even where the number exists
    // there too) are not this file's.
    ai = {};
    T_EXPECT_ERRNO(ioctl(fd1, NDK_IOCTL_ADAPTER_INFO, &ai), ENOENT);
    T_EXPECT_ERRNO(t_pd_create(fd2, pd1) ? 0 : -1, pd1 == a2 ? EINVAL : ENOENT);
    T_EXPECT_ERRNO(t_handle_close(fd2, pd1), pd1 == a2 ? EBUSY : ENOENT);
    T_EXPECT_ERRNO(t_handle_close(fd1, 0), ENOENT);
    T_EXPECT_ERRNO(t_handle_close(fd1, 0x7fffffffu), ENOENT);
    // Wrong type.
    T_EXPECT_ERRNO(t_pd_create(fd1, pd1) ? 0 : -1, EINVAL);
    ai = {};
    ai.handle = pd1;
    T_EXPECT_ERRNO(ioctl(fd1, NDK_IOCTL_ADAPTER_INFO, &ai), EINVAL);
    T_EXPECT_ERRNO(t_mem_deregister(fd1, pd1), EINVAL);
    char buf[64];
    T_EXPECT_ERRNO(t_mem_register(fd1, a1, buf, sizeof(buf), NDK_U_MEM_READ), EINVAL);

    CheckReservedAndFlags(fd1, a1, pd1);

    // A forked child: the inherited file refuses it, its own open does not
    // know the parent's handles.
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        ndk_u_adapter_info ci{};
        ci.handle = a1;
        if (ioctl(fd1, NDK_IOCTL_ADAPTER_INFO, &ci) == 0 || errno != EPERM) bad |= 1;
        if (t_pd_create(fd1, a1) != 0 || errno != EPERM) bad |= 2;
        if (t_handle_close(fd1, pd1) == 0 || errno != EPERM) bad |= 4;
        ndk_u_query_info cq{};
        if (ioctl(fd1, NDK_IOCTL_QUERY_INFO, &cq) != 0) bad |= 8;  // not an object command
        int own = t_open_ndk();
        ci = {};
        ci.handle = a1;
        if (own < 0 || ioctl(own, NDK_IOCTL_ADAPTER_INFO, &ci) == 0 || errno != ENOENT) bad |= 16;
        if (t_pd_create(own, a1) != 0 || errno != ENOENT) bad |= 32;
        _exit(bad);
    }
    int status = 0;
    T_CHECK(waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFEXITED(status) && WEXITSTATUS(status))
        std::fprintf(stderr, "child checks failed: mask %#x\n", WEXITSTATUS(status));
    // The parent's objects are untouched.
    ai = {};
    ai.handle = a1;
    T_CHECK(ioctl(fd1, NDK_IOCTL_ADAPTER_INFO, &ai) == 0);

    // Parents with children cannot close; children first.
    T_EXPECT_ERRNO(t_handle_close(fd1, a1), EBUSY);
    T_CHECK(t_handle_close(fd1, pd1) == 0);
    T_EXPECT_ERRNO(t_handle_close(fd1, pd1), ENOENT);
    T_CHECK(t_handle_close(fd1, a1) == 0);
    T_EXPECT_ERRNO(t_pd_create(fd1, a1) ? 0 : -1, ENOENT);
    // A closed handle is not soon reused.
    std::uint32_t again = t_adapter_open(fd1, id);
    T_CHECK(again != 0 && again != a1 && again != pd1);

    // The library reads the same NDK_ADAPTER_INFO.
    {
        auto ad = ndk::Adapter::Open(static_cast<std::uint32_t>(id));
        T_CHECK(ad.ok());
        if (ad) {
            auto info = ad->QueryInfo();
            T_CHECK(info.ok());
            if (info) {
                T_CHECK(info->max_registration_size == ai.max_registration_size);
                T_CHECK(info->frmr_page_count == ai.frmr_page_count);
                T_CHECK(info->vendor_id == ai.vendor_id && info->device_id == ai.device_id);
                T_CHECK(info->rdma_technology == ai.rdma_technology);
                T_CHECK(info->adapter_flags == ai.adapter_flags);
                T_CHECK(info->max_callee_data == ai.max_callee_data);
            }
            auto byname = ndk::Adapter::OpenByName("rxe0");
            T_CHECK(byname.ok() && byname->id() == static_cast<std::uint32_t>(id));
            T_CHECK(ndk::Adapter::OpenByName("no-such-device").error().errnum == ENOENT);
            T_CHECK(ndk::Adapter::Open(0xfffffff0u).error().errnum == ENOENT);
            // A PD keeps its adapter (and its file) alive after a move.
            auto pd = ad->CreateProtectionDomain();
            T_CHECK(pd.ok());
            ndk::Adapter moved = std::move(*ad);
            T_CHECK(ad->fd() == -1 && moved.fd() >= 0);
        }
    }

    close(fd2);
    close(fd1);
    T_CHECK(t_ndk_counter("user_objects") == 0);
    return t_result("uobj-handles");
}
