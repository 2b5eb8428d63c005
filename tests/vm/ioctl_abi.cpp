// SPDX-License-Identifier: GPL-2.0
// Description: the ioctl dispatcher's validation, one otherwise-valid call
// per error path (botching-up-ioctls): foreign type byte, unknown number
// and wrong direction give ENOTTY; a struct shorter than version 1,
// non-zero reserved fields and unknown flags give EINVAL; a longer struct
// is accepted with a zero tail (and the tail comes back zeroed) and gives
// E2BIG with a non-zero tail; bad pointers give EFAULT, and an argument
// the kernel cannot write back fails before the command does anything (a
// PD_CREATE or MEM_REGISTER from a read-only struct makes no object and
// pins nothing); unknown adapters give ENOENT.
#include <fcntl.h>
#include <ndk/ndk_ioctl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "uobj_common.hpp"

namespace {

// The same command with another argument size (a newer or older library).
constexpr unsigned long Resized(unsigned long cmd, unsigned size) {
    return _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), size);
}

struct BiggerInfo {
    ndk_u_query_info v1;
    std::uint64_t future[2];
};

}  // namespace

int main() {
    int fd = open("/dev/ndk", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        perror("open /dev/ndk");
        return kTestFail;
    }

    ndk_u_query_info qi{};
    T_CHECK(ioctl(fd, NDK_IOCTL_QUERY_INFO, &qi) == 0);
    T_CHECK(qi.abi_version == NDK_U_ABI_VERSION && qi.reserved == 0);

    // ENOTTY: foreign type byte, unknown numbers, wrong direction.
    T_EXPECT_ERRNO(ioctl(fd, _IOWR(0x1b, 0x00, ndk_u_query_info), &qi), ENOTTY);
    T_EXPECT_ERRNO(ioctl(fd, _IOWR(NDK_IOCTL_MAGIC, 0x3f, ndk_u_query_info), &qi), ENOTTY);
    T_EXPECT_ERRNO(ioctl(fd, _IOWR(NDK_IOCTL_MAGIC, 0xff, ndk_u_query_info), &qi), ENOTTY);
    T_EXPECT_ERRNO(ioctl(fd, _IOR(NDK_IOCTL_MAGIC, 0x00, ndk_u_query_info), &qi), ENOTTY);
    T_EXPECT_ERRNO(ioctl(fd, _IOW(NDK_IOCTL_MAGIC, 0x00, ndk_u_query_info), &qi), ENOTTY);
    T_EXPECT_ERRNO(ioctl(fd, _IO(NDK_IOCTL_MAGIC, 0x00)), ENOTTY);

    // EINVAL: shorter than version 1, dirty reserved field, unknown flags.
    T_EXPECT_ERRNO(ioctl(fd, Resized(NDK_IOCTL_QUERY_INFO, 8), &qi), EINVAL);
    T_EXPECT_ERRNO(ioctl(fd, Resized(NDK_IOCTL_QUERY_INFO, 0), &qi), EINVAL);
    qi = {};
    qi.reserved = 1;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_QUERY_INFO, &qi), EINVAL);
    qi = {};
    qi.flags = 0x80000000u;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_QUERY_INFO, &qi), EINVAL);
    ndk_u_adapter_query aq{};
    aq.flags = 0x2;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &aq), EINVAL);

    // A newer caller: zero tail accepted and zero-filled on the way out...
    BiggerInfo big{};
    std::memset(&big, 0, sizeof(big));
    T_CHECK(ioctl(fd, Resized(NDK_IOCTL_QUERY_INFO, sizeof(big)), &big) == 0);
    T_CHECK(big.v1.abi_version == NDK_U_ABI_VERSION);
    T_CHECK(big.future[0] == 0 && big.future[1] == 0);
    // ...and a non-zero tail is refused, whatever byte carries it.
    big = {};
    reinterpret_cast<unsigned char*>(&big)[sizeof(big) - 1] = 1;
    T_EXPECT_ERRNO(ioctl(fd, Resized(NDK_IOCTL_QUERY_INFO, sizeof(big)), &big), E2BIG);
    big = {};
    big.future[0] = 1;
    T_EXPECT_ERRNO(ioctl(fd, Resized(NDK_IOCTL_QUERY_INFO, sizeof(big)), &big), E2BIG);

    // EFAULT: no memory, read-only memory for an output, a kernel address.
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_QUERY_INFO, nullptr), EFAULT);
    void* ro = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T_CHECK(ro != MAP_FAILED);
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_QUERY_INFO, ro), EFAULT);
    munmap(ro, 4096);
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_QUERY_INFO, reinterpret_cast<void*>(0xffff888000000000ull)),
                   EFAULT);

    // EFAULT before the command: a create or a registration whose
    // argument cannot be written back would otherwise lose its handle
    // (and the registration's pinned pages) behind the error.
    long adapter = t_first_adapter(fd);
    std::uint32_t ad = adapter >= 0 ? t_adapter_open(fd, static_cast<std::uint32_t>(adapter)) : 0;
    std::uint32_t pd = ad ? t_pd_create(fd, ad) : 0;
    T_CHECK(pd != 0);
    auto* args = static_cast<unsigned char*>(
        mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    T_CHECK(args != MAP_FAILED);
    if (pd && args != MAP_FAILED) {
        auto* pc = reinterpret_cast<ndk_u_pd_create*>(args);
        pc->adapter_handle = ad;
        auto* mr = reinterpret_cast<ndk_u_mem_register*>(args + 64);
        mr->pd_handle = pd;
        mr->flags = NDK_U_MEM_READWRITE;
        mr->address = reinterpret_cast<std::uintptr_t>(args + 4096);
        mr->length = 4096;
        args[4096] = 1;
        long objects = t_ndk_counter("user_objects"), vmpin = t_vmpin_kb();
        T_CHECK(mprotect(args, 4096, PROT_READ) == 0);
        T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_PD_CREATE, pc), EFAULT);
        T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_MEM_REGISTER, mr), EFAULT);
        std::printf("read-only arguments: user_objects %ld -> %ld, VmPin %ld -> %ld kB\n", objects,
                    t_ndk_counter("user_objects"), vmpin, t_vmpin_kb());
        T_CHECK(t_ndk_counter("user_objects") == objects);
        T_CHECK(t_vmpin_kb() == vmpin);
        munmap(args, 8192);
    }
    if (ad) T_CHECK(t_handle_close(fd, pd) == 0 && t_handle_close(fd, ad) == 0);

    // ENOENT: an adapter that does not exist, with and without F_NEXT.
    aq = {};
    aq.adapter_id = 0xffffffffu;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &aq), ENOENT);
    aq = {};
    aq.adapter_id = 0xffffffffu;
    aq.flags = NDK_U_ADAPTER_QUERY_F_NEXT;
    T_EXPECT_ERRNO(ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &aq), ENOENT);

    // A valid query writes every output field (name NUL-terminated).
    std::memset(&aq, 0xa5, sizeof(aq));
    aq.adapter_id = 0;
    aq.flags = NDK_U_ADAPTER_QUERY_F_NEXT;
    T_CHECK(ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &aq) == 0);
    T_CHECK(memchr(aq.name, 0, sizeof(aq.name)) != nullptr);
    T_CHECK(aq.name[sizeof(aq.name) - 1] == 0);
    T_CHECK(aq.port_count == 1);

    close(fd);
    return t_result("ioctl-abi");
}
