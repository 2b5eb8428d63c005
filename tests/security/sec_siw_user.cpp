// SPDX-License-Identifier: GPL-2.0
// sec-siw-user: /dev/ndk does not open siw adapters for users without
// CAP_SYS_RAWIO.
//
// siw (6.1) serves a remote read through any STag of the QP's PD without
// checking its remote-read right, and every siw PD has a DMA MR over all
// of memory (no local DMA lkey): a user with two connected QPs of its own
// could read kernel memory through a guessed token of its own PD
// (Documentation/security.md, "Known limits").  Run on the debug guest's
// siw0 (tests/vm/siw-run.sh): nobody gets EPERM, root opens it.
#include <cstring>
#include "sec_common.hpp"

namespace {

// The id of the adapter named siw0, or -1.
long SiwAdapter(int fd) {
    ndk_u_adapter_query q{};
    for (;;) {
        q.flags = NDK_U_ADAPTER_QUERY_F_NEXT;
        if (ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &q) != 0) return -1;
        if (std::strcmp(reinterpret_cast<const char*>(q.name), "siw0") == 0) return q.adapter_id;
        q.adapter_id++;
    }
}

// ADAPTER_OPEN of siw0: 0 or errno.
int OpenSiw() {
    rel::Dev d;
    long id = SiwAdapter(d.fd());
    if (id < 0) {
        std::printf("no adapter named siw0\n");
        return ENODEV;
    }
    return t_adapter_open(d.fd(), static_cast<std::uint32_t>(id)) ? 0 : errno;
}

}  // namespace

int main() {
    int root = OpenSiw();
    std::printf("ADAPTER_OPEN of siw0 as root: %s\n", root ? strerrorname_np(root) : "ok");
    T_CHECK(root == 0);
    int rc = sec::AsNobody("siw-user", [] {
        int e = OpenSiw();
        std::printf("ADAPTER_OPEN of siw0 as nobody: %s\n", e ? strerrorname_np(e) : "ok");
        return e == EPERM ? kTestPass : kTestFail;
    });
    T_CHECK(rc == kTestPass);
    return t_result("sec-siw-user");
}
