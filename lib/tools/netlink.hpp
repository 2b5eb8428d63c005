// SPDX-License-Identifier: BSD-2-Clause
// ndk::nl: the client of ndk.ko's generic netlink family "ndk"
// (uapi/ndk/ndk_netlink.h, Documentation/netlink.md), through libnl-3 and
// libnl-genl-3: adapters, object counts, registration statistics, the
// open /dev/ndk files of processes and their objects, and events.
//
// Errors are values: a kernel refusal carries its errno (EPERM for
// another process's files without CAP_NET_ADMIN, ESRCH for an unknown
// pid, ENODEV for an unknown adapter); ENOENT from Open() means the
// family is not registered (ndk.ko is not loaded).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ndk/result.hpp"

namespace ndk::nl {

// enum ndk_nl_obj, by name: "adapter", "pd", "cq", "qp", "mr", "mw",
// "connector", "listener", "mem".  Index 0 is unused.
inline constexpr std::size_t kObjectTypes = 10;
const char* ObjectTypeName(std::uint32_t type) noexcept;
// The type of a name, or 0.
std::uint32_t ObjectTypeFromName(std::string_view name) noexcept;

using Counts = std::array<std::uint32_t, kObjectTypes>;
// (name, value) in the kernel's attribute order; names in snake case.
using Fields = std::vector<std::pair<std::string, std::uint64_t>>;

struct Adapter {
    std::uint32_t id = 0;
    std::string name;
    std::uint64_t node_guid = 0;
    std::uint32_t ib_index = 0;
    std::uint32_t port_count = 0;
    Fields info;  // NDK_ADAPTER_INFO, as ndkinfo names the fields
    Counts objects{};
};

struct Stats {
    std::uint32_t version = 0;
    Fields counters;  // enum ndk_nl_stat, snake case ("registered_bytes")
    std::vector<std::pair<std::uint32_t, std::uint64_t>> errors;  // NTSTATUS, count
};

// One open /dev/ndk file.
struct Process {
    std::uint32_t file_id = 0;
    std::uint32_t pid = 0;
    std::string comm;
    Counts objects{};
    Fields counters;  // registered_bytes, pinned_pages, cache_*
};

// One object of an open file.
struct Resource {
    std::uint32_t file_id = 0;
    std::uint32_t pid = 0;
    std::string comm;
    std::uint32_t type = 0;  // enum ndk_nl_obj
    std::uint32_t handle = 0;
    std::optional<std::uint32_t> parent;
    std::optional<std::uint32_t> adapter_id;
    std::string adapter;
    // Registrations (mr, mem) while registered:
    std::optional<std::uint64_t> address;
    std::optional<std::uint64_t> length;
    std::optional<std::uint64_t> pages;
    std::optional<std::uint32_t> flags;
    std::optional<std::uint32_t> refs;  // mem only
};

struct Event {
    enum class Kind { kAdapterAdded, kAdapterRemoved, kMemInvalidated };
    Kind kind = Kind::kAdapterAdded;
    std::uint32_t adapter_id = 0;  // adapter events
    std::string adapter;
    std::uint64_t node_guid = 0;
    std::uint32_t file_id = 0;  // kMemInvalidated
    std::uint32_t pid = 0;
    std::uint32_t handle = 0;
    std::uint64_t address = 0;
    std::uint64_t length = 0;
    std::uint64_t dropped = 0;  // "mem" events lost so far
};
const char* EventName(Event::Kind kind) noexcept;

struct Groups {
    bool adapter = true;
    bool mem = true;
};

class Client {
  public:
    // Connects a generic netlink socket and resolves the family.
    [[nodiscard]] static Result<Client> Open();

    Client(Client&&) noexcept;
    Client& operator=(Client&&) noexcept;
    ~Client();

    [[nodiscard]] Result<std::vector<Adapter>> Adapters();
    // By name; ENODEV when there is none.
    [[nodiscard]] Result<Adapter> FindAdapter(std::string_view name);
    [[nodiscard]] Result<Stats> GetStats();
    // Files of every process the caller may see, or of one pid.
    [[nodiscard]] Result<std::vector<Process>> Processes(std::optional<std::uint32_t> pid = {});
    [[nodiscard]] Result<std::vector<Resource>> Resources(std::uint32_t type,
                                                          std::optional<std::uint32_t> pid = {});

    // Joins the event groups; EPERM for "mem" without CAP_NET_ADMIN.
    [[nodiscard]] Result<void> Subscribe(Groups groups);
    // Waits up to timeout_ms (-1: forever) for the next event; ETIMEDOUT
    // when none came, EINTR when a signal interrupted the wait.
    [[nodiscard]] Result<Event> NextEvent(int timeout_ms);

  private:
    struct Impl;
    explicit Client(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ndk::nl
