// SPDX-License-Identifier: BSD-2-Clause
// The parts of the `ndk` tool that do not need the kernel: the command
// line, a small JSON writer and the text/JSON renderings of what the
// netlink client returns (unit-tested in tests/unit/ndk_cli_test.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "netlink.hpp"

namespace ndk::cli {

// Exit codes: shell-friendly, as ndk(8) documents them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

enum class Verb {
    kHelp,
    kVersion,
    kAdapterShow,   // ndk adapter [show [NAME]]
    kResourceShow,  // ndk resource [show [TYPE] [pid N]]
    kStat,          // ndk stat [show] [pid N]
    kMonitor,       // ndk monitor [all|adapter|mem]
};

struct Command {
    Verb verb = Verb::kHelp;
    bool json = false;
    bool pretty = false;
    std::string adapter;               // kAdapterShow: one name, or all
    std::vector<std::uint32_t> types;  // kResourceShow: none = summary
    std::optional<std::uint32_t> pid;  // kResourceShow, kStat
    nl::Groups groups;                 // kMonitor
    std::optional<unsigned> count;     // kMonitor: exit after N events
};

// A command line, or the usage error to print (exit kExitUsage).
struct ParseResult {
    std::optional<Command> command;
    std::string error;
};
ParseResult Parse(const std::vector<std::string>& args);
const char* Usage() noexcept;

// --- JSON ----------------------------------------------------------------
// nlohmann's JSON with members in insertion order (as the kernel sends them).
using Json = nlohmann::ordered_json;
// Compact, or indented by 2 with one member per line when pretty; bytes
// that are not UTF-8 (a process's comm) become U+FFFD.
std::string Dump(const Json& j, bool pretty);

// --- renderings ----------------------------------------------------------
std::string Hex(std::uint64_t v);
// A node GUID as rdma(8) prints it: 4 groups of 4 hex digits.
std::string Guid(std::uint64_t guid);

Json AdapterJson(const nl::Adapter& a);
std::string AdapterText(const nl::Adapter& a);
Json ResourceJson(const nl::Resource& r);
std::string ResourceText(const nl::Resource& r);
Json ProcessJson(const nl::Process& p);
std::string ProcessText(const nl::Process& p);
Json StatsJson(const nl::Stats& s);
std::string StatsText(const nl::Stats& s);
Json EventJson(const nl::Event& e);
std::string EventText(const nl::Event& e);

}  // namespace ndk::cli
