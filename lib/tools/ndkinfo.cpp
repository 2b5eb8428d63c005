// SPDX-License-Identifier: BSD-2-Clause
// ndkinfo: what /dev/ndk offers, like ibv_devinfo for NDK adapters.
//   ndkinfo [-d DEVICE]     ABI version, features, and every adapter with
//                           every NDK_ADAPTER_INFO field
//   ndkinfo --json          the same as one JSON object
//   ndkinfo -l              adapter names only, one per line (for scripts)
// Exit status: 0 ok, 1 the device could not be opened or queried, 2 usage.
#include <getopt.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "ndk/ndk.hpp"

namespace {

// One NDK_ADAPTER_INFO field: its ndkinfo.h name in snake case and value.
struct Field {
    const char* name;
    std::uint64_t value;
    bool hex;
};

std::vector<Field> Fields(const ndk::AdapterInfo& i) {
    return {
        {"vendor_id", i.vendor_id, true},
        {"device_id", i.device_id, true},
        {"max_registration_size", i.max_registration_size, false},
        {"max_window_size", i.max_window_size, false},
        {"frmr_page_count", i.frmr_page_count, false},
        {"max_initiator_request_sge", i.max_initiator_request_sge, false},
        {"max_receive_request_sge", i.max_receive_request_sge, false},
        {"max_read_request_sge", i.max_read_request_sge, false},
        {"max_transfer_length", i.max_transfer_length, false},
        {"max_inline_data_size", i.max_inline_data_size, false},
        {"max_inbound_read_limit", i.max_inbound_read_limit, false},
        {"max_outbound_read_limit", i.max_outbound_read_limit, false},
        {"max_receive_queue_depth", i.max_receive_queue_depth, false},
        {"max_initiator_queue_depth", i.max_initiator_queue_depth, false},
        {"max_srq_depth", i.max_srq_depth, false},
        {"max_cq_depth", i.max_cq_depth, false},
        {"large_request_threshold", i.large_request_threshold, false},
        {"max_caller_data", i.max_caller_data, false},
        {"max_callee_data", i.max_callee_data, false},
        {"adapter_flags", i.adapter_flags, true},
        {"rdma_technology", i.rdma_technology, false},
    };
}

// NDK_ADAPTER_FLAG_* names (ndkinfo.h).
std::vector<const char*> FlagNames(std::uint32_t flags) {
    static const struct {
        std::uint32_t bit;
        const char* name;
    } kFlags[] = {
#define NDK_FLAG(n) {NDK_U_ADAPTER_FLAG_##n, #n}
        NDK_FLAG(IN_ORDER_DMA_SUPPORTED),
        NDK_FLAG(RDMA_READ_SINK_NOT_REQUIRED),
        NDK_FLAG(CQ_INTERRUPT_MODERATION_SUPPORTED),
        NDK_FLAG(MULTI_ENGINE_SUPPORTED),
        NDK_FLAG(RDMA_READ_LOCAL_INVALIDATE_SUPPORTED),
        NDK_FLAG(CQ_RESIZE_SUPPORTED),
        NDK_FLAG(LOOPBACK_CONNECTIONS_SUPPORTED),
    };
#undef NDK_FLAG
    std::vector<const char*> names;
    for (const auto& f : kFlags)
        if (flags & f.bit) names.push_back(f.name);
    return names;
}

const char* TechnologyName(std::uint32_t t) {
    static const char* const kNames[] = {"Undefined", "iWARP", "InfiniBand", "RoCE", "RoCEv2"};
    return t < sizeof(kNames) / sizeof(kNames[0]) ? kNames[t] : "unknown";
}

// One adapter: its listing and, if it could be opened, its info.
struct Entry {
    ndk::AdapterDescription desc;
    ndk::Result<ndk::AdapterInfo> info;
};

// JSON string contents: adapter names are ib_device names, but escape anyway.
std::string JsonEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

void PrintText(const char* path, const ndk::Device& dev, const std::vector<Entry>& entries) {
    std::printf("device:      %s\n", path);
    std::printf("abi_version: %" PRIu32 "\n", dev.info().abi_version);
    std::printf("features:    0x%016" PRIx64 "\n", dev.info().features);
    std::printf("adapters:    %zu\n", entries.size());
    for (const auto& e : entries) {
        const auto& a = e.desc;
        std::printf("  adapter %" PRIu32 ": %-16s node_guid %016" PRIx64 " ib_index %" PRIu32
                    " ports %" PRIu32 "\n",
                    a.id, a.name.c_str(), a.node_guid, a.ib_index, a.port_count);
        if (!e.info) {
            std::printf("    info: %s\n", e.info.error().Message().c_str());
            continue;
        }
        const auto& i = *e.info;
        std::printf("    %-27s %u.%u\n", "version", i.version_major, i.version_minor);
        for (const auto& f : Fields(i)) {
            if (f.hex)
                std::printf("    %-27s 0x%08" PRIx64 "\n", f.name, f.value);
            else
                std::printf("    %-27s %" PRIu64 "\n", f.name, f.value);
        }
        for (const char* n : FlagNames(i.adapter_flags)) std::printf("    %-27s %s\n", "", n);
        std::printf("    %-27s %s\n", "", TechnologyName(i.rdma_technology));
    }
}

void PrintJson(const char* path, const ndk::Device& dev, const std::vector<Entry>& entries) {
    std::printf("{\"device\": \"%s\", \"abi_version\": %" PRIu32 ", \"features\": %" PRIu64
                ", \"adapters\": [",
                JsonEscape(path).c_str(), dev.info().abi_version, dev.info().features);
    const char* sep = "";
    for (const auto& e : entries) {
        const auto& a = e.desc;
        std::printf("%s\n  {\"id\": %" PRIu32 ", \"name\": \"%s\", \"node_guid\": \"%016" PRIx64
                    "\", \"ib_index\": %" PRIu32 ", \"port_count\": %" PRIu32,
                    sep, a.id, JsonEscape(a.name).c_str(), a.node_guid, a.ib_index, a.port_count);
        sep = ",";
        if (!e.info) {
            std::printf(", \"info_error\": {\"errno\": %d, \"status\": %d}}", e.info.error().errnum,
                        static_cast<int>(e.info.error().status));
            continue;
        }
        const auto& i = *e.info;
        std::printf(", \"info\": {\"version\": {\"major\": %u, \"minor\": %u}", i.version_major,
                    i.version_minor);
        for (const auto& f : Fields(i)) std::printf(", \"%s\": %" PRIu64, f.name, f.value);
        std::printf(", \"adapter_flag_names\": [");
        const char* fsep = "";
        for (const char* n : FlagNames(i.adapter_flags)) {
            std::printf("%s\"%s\"", fsep, n);
            fsep = ", ";
        }
        std::printf("], \"rdma_technology_name\": \"%s\"}}", TechnologyName(i.rdma_technology));
    }
    std::printf("\n]}\n");
}

}  // namespace

int main(int argc, char** argv) {
    const char* path = ndk::kDefaultDevicePath;
    bool names_only = false;
    bool json = false;
    static const option kLong[] = {{"json", no_argument, nullptr, 'j'},
                                   {"device", required_argument, nullptr, 'd'},
                                   {"help", no_argument, nullptr, 'h'},
                                   {nullptr, 0, nullptr, 0}};
    for (int opt; (opt = getopt_long(argc, argv, "d:ljh", kLong, nullptr)) != -1;) {
        switch (opt) {
            case 'd':
                path = optarg;
                break;
            case 'l':
                names_only = true;
                break;
            case 'j':
                json = true;
                break;
            default:
                std::fprintf(stderr, "usage: %s [-d device] [-l | --json]\n", argv[0]);
                return 2;
        }
    }

    auto dev = ndk::Device::Open(path);
    if (!dev) {
        std::fprintf(stderr, "ndkinfo: %s: %s\n", path, dev.error().Message().c_str());
        return 1;
    }
    auto adapters = dev->ListAdapters();
    if (!adapters) {
        std::fprintf(stderr, "ndkinfo: adapter query: %s\n", adapters.error().Message().c_str());
        return 1;
    }
    if (names_only) {
        for (const auto& a : *adapters) std::printf("%s\n", a.name.c_str());
        return 0;
    }
    std::vector<Entry> entries;
    for (const auto& a : *adapters) {
        auto adapter = ndk::Adapter::Open(a.id, path);
        entries.push_back(
            {a, adapter ? adapter->QueryInfo() : ndk::Result<ndk::AdapterInfo>(adapter.error())});
    }
    if (json)
        PrintJson(path, *dev, entries);
    else
        PrintText(path, *dev, entries);
    return 0;
}
