// SPDX-License-Identifier: BSD-2-Clause
// ndk: adapters, objects, registration statistics and events of ndk.ko,
// in the style of iproute2's rdma(8), over the generic netlink family
// "ndk" (Documentation/netlink.md, ndk(8)).
//   ndk adapter show [NAME]
//   ndk resource show [mr|mw|qp|...] [pid N]
//   ndk stat [pid N]
//   ndk monitor [all|adapter|mem] [count N]
// -j JSON, -p pretty JSON.  Exit status: 0 ok, 1 error, 2 usage.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ndk_cli.hpp"

namespace {

using ndk::cli::Command;
using ndk::cli::Json;
using ndk::cli::kExitError;
using ndk::cli::kExitOk;
using ndk::cli::kExitUsage;
using ndk::cli::Verb;

volatile std::sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

int Fail(const std::string& what, const ndk::Error& e) {
    std::fprintf(stderr, "ndk: %s: %s\n", what.c_str(), std::strerror(e.errnum));
    return kExitError;
}

void Print(const Command& c, const Json& j) {
    std::printf("%s\n", ndk::cli::Dump(j, c.pretty).c_str());
}

int AdapterShow(ndk::nl::Client& nl, const Command& c) {
    std::vector<ndk::nl::Adapter> list;
    if (c.adapter.empty()) {
        auto r = nl.Adapters();
        if (!r) return Fail("adapter dump", r.error());
        list = std::move(*r);
    } else {
        auto r = nl.FindAdapter(c.adapter);
        if (!r) {
            if (r.error().errnum == ENODEV) {
                std::fprintf(stderr, "ndk: no adapter \"%s\"\n", c.adapter.c_str());
                return kExitError;
            }
            return Fail("adapter " + c.adapter, r.error());
        }
        list.push_back(std::move(*r));
    }
    if (c.json) {
        Json a = Json::array();
        for (const auto& x : list) a.push_back(ndk::cli::AdapterJson(x));
        Print(c, a);
    } else {
        for (const auto& x : list) std::fputs(ndk::cli::AdapterText(x).c_str(), stdout);
    }
    return kExitOk;
}

int ResourceShow(ndk::nl::Client& nl, const Command& c) {
    if (c.types.empty()) {
        auto r = nl.Processes(c.pid);
        if (!r) return Fail("resource summary", r.error());
        if (c.json) {
            Json a = Json::array();
            for (const auto& p : *r) a.push_back(ndk::cli::ProcessJson(p));
            Print(c, a);
        } else {
            for (const auto& p : *r) std::fputs(ndk::cli::ProcessText(p).c_str(), stdout);
        }
        return kExitOk;
    }
    Json a = Json::array();
    for (std::uint32_t t : c.types) {
        auto r = nl.Resources(t, c.pid);
        if (!r) return Fail(std::string("resource ") + ndk::nl::ObjectTypeName(t), r.error());
        for (const auto& x : *r) {
            if (c.json)
                a.push_back(ndk::cli::ResourceJson(x));
            else
                std::fputs(ndk::cli::ResourceText(x).c_str(), stdout);
        }
    }
    if (c.json) Print(c, a);
    return kExitOk;
}

int Stat(ndk::nl::Client& nl, const Command& c) {
    auto s = nl.GetStats();
    if (!s) return Fail("statistics", s.error());
    auto procs = nl.Processes(c.pid);
    if (!procs) return Fail("per-process statistics", procs.error());
    if (c.json) {
        Json a = Json::array();
        for (const auto& p : *procs) a.push_back(ndk::cli::ProcessJson(p));
        Json j = ndk::cli::StatsJson(*s);
        Print(c, Json{{"module", std::move(j)}, {"processes", std::move(a)}});
        return kExitOk;
    }
    std::fputs(ndk::cli::StatsText(*s).c_str(), stdout);
    std::printf("processes%s:%s\n", c.pid ? "" : " (those you may see)",
                procs->empty() ? " none" : "");
    for (const auto& p : *procs) std::fputs(ndk::cli::ProcessText(p).c_str(), stdout);
    return kExitOk;
}

int Monitor(ndk::nl::Client& nl, const Command& c) {
    ndk::nl::Groups groups = c.groups;
    auto r = nl.Subscribe(groups);
    if (!r && (r.error().errnum == EPERM || r.error().errnum == ENOENT) && groups.adapter &&
        groups.mem) {
        std::fprintf(stderr, "ndk: %s; adapter events only\n",
                     r.error().errnum == EPERM ? "mem events need CAP_NET_ADMIN"
                                               : "this kernel offers no mem events");
        groups.mem = false;
        r = nl.Subscribe(groups);
    }
    if (!r) return Fail("subscribe", r.error());
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::fprintf(stderr, "ndk monitor: listening for%s%s events\n",
                 groups.adapter ? " adapter" : "", groups.mem ? " mem" : "");
    unsigned seen = 0;
    while (!g_stop && (!c.count || seen < *c.count)) {
        auto e = nl.NextEvent(-1);
        if (!e) {
            if (e.error().errnum == EINTR) continue;
            return Fail("monitor", e.error());
        }
        ++seen;
        if (c.json)
            std::printf("%s\n", ndk::cli::Dump(ndk::cli::EventJson(*e), false).c_str());
        else
            std::fputs(ndk::cli::EventText(*e).c_str(), stdout);
    }
    return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    auto parsed = ndk::cli::Parse(args);
    if (!parsed.command) {
        std::fprintf(stderr, "ndk: %s\n%s", parsed.error.c_str(), ndk::cli::Usage());
        return kExitUsage;
    }
    const Command& c = *parsed.command;
    switch (c.verb) {
        case Verb::kHelp:
            std::fputs(ndk::cli::Usage(), stdout);
            return kExitOk;
        case Verb::kVersion:
            std::printf("ndk utility, ndk-linux %s\n", NDK_VERSION_STRING);
            return kExitOk;
        default:
            break;
    }
    auto nl = ndk::nl::Client::Open();
    if (!nl) {
        if (nl.error().errnum == ENOENT) {
            std::fprintf(stderr, "ndk: netlink family \"ndk\" not found: is ndk.ko loaded?\n");
            return kExitError;
        }
        return Fail("netlink", nl.error());
    }
    switch (c.verb) {
        case Verb::kAdapterShow:
            return AdapterShow(*nl, c);
        case Verb::kResourceShow:
            return ResourceShow(*nl, c);
        case Verb::kStat:
            return Stat(*nl, c);
        case Verb::kMonitor:
            return Monitor(*nl, c);
        default:
            return kExitUsage;
    }
}
