// SPDX-License-Identifier: GPL-2.0
// Guest test: `rdma link delete rxe0` while a /dev/ndk file holds live
// objects on it.  The delete must not wait for the file: ndk.ko releases
// the file's objects of that adapter itself (pinned pages come back),
// queues NDK_U_EVENT_ADAPTER_REMOVED (poll() wakes), the adapter's handle
// then fails with ENODEV and its children's handles with ENOENT, and
// HANDLE_CLOSE of the adapter works.  rxe0 is added back at the end.
#include <poll.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdlib>

#include "uobj_common.hpp"

int main() {
    constexpr std::size_t kLen = 64 * 4096;
    int fd = t_open_ndk();
    long id = t_first_adapter(fd);
    if (fd < 0 || id < 0) return kTestFail;
    std::uint32_t ad = t_adapter_open(fd, id);
    std::uint32_t pd = t_pd_create(fd, ad);
    void* buf = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ndk_u_mem_register m{};
    T_CHECK(t_mem_register(fd, pd, buf, kLen, NDK_U_MEM_READWRITE, &m) == 0);
    ndk_u_cq_create cc{};
    cc.adapter_handle = ad;
    cc.depth = 16;
    T_CHECK(ioctl(fd, NDK_IOCTL_CQ_CREATE, &cc) == 0);
    ndk_u_qp_create qc{};
    qc.pd_handle = pd;
    qc.receive_cq_handle = qc.initiator_cq_handle = cc.handle;
    qc.receive_queue_depth = qc.initiator_queue_depth = 4;
    qc.max_receive_request_sge = qc.max_initiator_request_sge = 1;
    T_CHECK(ioctl(fd, NDK_IOCTL_QP_CREATE, &qc) == 0);
    ndk_u_listener_create lc{};
    lc.adapter_handle = ad;
    T_CHECK(ioctl(fd, NDK_IOCTL_LISTENER_CREATE, &lc) == 0);
    T_CHECK(t_vmpin_kb() == static_cast<long>(kLen / 1024));

    auto t0 = std::chrono::steady_clock::now();
    int rc = std::system("timeout 30 rdma link delete rxe0");
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rdma link delete: rc %d after %.1f s with the file open\n", rc, secs);
    T_CHECK(rc == 0);

    pollfd p{fd, POLLIN, 0};
    T_CHECK(poll(&p, 1, 5000) == 1);
    ndk_u_event ev{};
    ndk_u_event_get g{};
    g.count = 1;
    g.events = reinterpret_cast<std::uintptr_t>(&ev);
    T_CHECK(ioctl(fd, NDK_IOCTL_EVENT_GET, &g) == 0 && g.count == 1);
    T_CHECK(ev.type == NDK_U_EVENT_ADAPTER_REMOVED && ev.handle == ad);
    T_CHECK(ev.status == static_cast<std::int32_t>(0xC00002B6));  // STATUS_DEVICE_REMOVED

    // Everything of the adapter is gone, pages first.
    T_CHECK(t_vmpin_kb() == 0);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);
    T_EXPECT_ERRNO(t_mem_deregister(fd, m.handle), ENOENT);
    T_EXPECT_ERRNO(t_handle_close(fd, qc.handle), ENOENT);
    T_EXPECT_ERRNO(t_pd_create(fd, ad) ? 0 : -1, ENODEV);
    ndk_u_adapter_info ai{};
    ai.handle = ad;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_INFO, &ai), ENODEV);
    T_CHECK(t_handle_close(fd, ad) == 0);
    T_CHECK(t_ndk_counter("user_objects") == 0);
    close(fd);

    T_CHECK(std::system("rdma link add rxe0 type rxe netdev v0") == 0);
    fd = t_open_ndk();
    T_CHECK(fd >= 0 && t_first_adapter(fd) > id);
    close(fd);
    return t_result("uobj-removal");
}
