// SPDX-License-Identifier: GPL-2.0
// sec-uffd-mappings: no mapping of /dev/ndk can be registered with
// userfaultfd.
//
// The pages /dev/ndk shares with its opener (a CQ's completion ring, a
// QP's submission ring, the cache counters page, the generation array)
// are mapped by vm_map_pages_zero() and set no vm_ops.  An audit took them
// for anonymous memory (vma_is_anonymous() is !vm_ops), which an
// unprivileged userfaultfd (UFFD_USER_MODE_ONLY) would register and whose
// UFFDIO_ZEROPAGE would hit a WARN_ON_ONCE in 6.1's mm/userfaultfd.c.  It
// is not so: 6.1's vma_init() gives every mapping a dummy vm_ops and only
// anonymous ones are set back to NULL, so the registration is refused.
// This test keeps it so, as nobody: a private anonymous mapping registers
// (userfaultfd works for this user), and every /dev/ndk mapping is
// refused with EINVAL (Documentation/security.md).
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <ndk/ndk_netlink.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "sec_common.hpp"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

namespace {

// UFFDIO_REGISTER (missing pages) of [@p, @p + @len) on a new
// userfaultfd: 0, or the errno of the step that failed.
int Register(void* p, std::size_t len) {
    int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
    if (uffd < 0) return errno;
    int ret = 0;
    uffdio_api api{};
    api.api = UFFD_API;
    uffdio_register reg{};
    reg.range.start = reinterpret_cast<std::uintptr_t>(p);
    reg.range.len = len;
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(uffd, UFFDIO_API, &api) != 0 || ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) ret = errno;
    close(uffd);
    return ret;
}

// Maps @len bytes at @off of @fd and registers them: true if the
// registration was refused with EINVAL.
bool Refused(const char* what, int fd, std::uint64_t off, std::size_t len, int prot) {
    void* p = mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(off));
    if (p == MAP_FAILED) {
        std::printf("%s: mmap: %s\n", what, strerrorname_np(errno));
        return false;
    }
    int e = Register(p, len);
    std::printf("%s (%zu bytes): userfaultfd registration %s\n", what, len,
                e ? strerrorname_np(e) : "accepted");
    munmap(p, len);
    return e == EINVAL;
}

int Child() {
    // Control: userfaultfd works for nobody on its own memory.
    void* anon = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T_CHECK(anon != MAP_FAILED);
    int e = anon == MAP_FAILED ? ENOMEM : Register(anon, 4096);
    std::printf("a private anonymous page: userfaultfd registration %s\n",
                e ? strerrorname_np(e) : "accepted");
    T_CHECK(e == 0);
    if (anon != MAP_FAILED) munmap(anon, 4096);

    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    T_CHECK(ad != 0);
    if (!ad) return kTestFail;
    ndk_u_cq_create c{};
    c.adapter_handle = ad;
    c.depth = 64;
    c.flags = NDK_U_CQ_CREATE_F_RING;
    T_CHECK(d.Ioctl(NDK_IOCTL_CQ_CREATE, &c) == 0);
    std::uint32_t pd = t_pd_create(d.fd(), ad);
    T_CHECK(pd != 0);
    ndk_u_qp_create q{};
    q.pd_handle = pd;
    q.receive_cq_handle = q.initiator_cq_handle = c.handle;
    q.receive_queue_depth = q.initiator_queue_depth = 16;
    q.max_receive_request_sge = q.max_initiator_request_sge = 1;
    q.flags = NDK_U_QP_CREATE_F_RING;
    T_CHECK(d.Ioctl(NDK_IOCTL_QP_CREATE, &q) == 0);
    if (t_failures) return kTestFail;

    const int rw = PROT_READ | PROT_WRITE;
    T_CHECK(Refused("completion ring", d.fd(), c.ring_offset, c.ring_size, rw));
    T_CHECK(Refused("submission ring", d.fd(), q.ring_offset, q.ring_size, rw));
    T_CHECK(Refused("cache counters page", d.fd(), NDK_U_MMAP_CACHE_COUNTERS, 4096, rw));
    // Read-only and never writable: refused before (no VM_MAYWRITE).
    T_CHECK(
        Refused("generation array", d.fd(), NDK_U_MMAP_CACHE, NDK_U_CACHE_SLOTS * 8, PROT_READ));
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    T_CHECK(sec::AsNobody("sec-uffd-mappings", Child) == kTestPass);
    return t_result("sec-uffd-mappings");
}
