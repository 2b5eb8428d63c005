// SPDX-License-Identifier: BSD-2-Clause
#include "ndk_cli.hpp"

#include <cinttypes>
#include <cstdio>
#include <string_view>

#include "ndk/status.hpp"

namespace ndk::cli {

namespace {

// Prefix match as iproute2 does it ("ad" for "adapter"), at least `min`
// characters.
bool Matches(std::string_view arg, std::string_view word, std::size_t min = 1) {
    return arg.size() >= min && arg.size() <= word.size() && word.substr(0, arg.size()) == arg;
}

std::optional<std::uint32_t> ParseU32(const std::string& s) {
    if (s.empty() || s.size() > 10) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    if (v > UINT32_MAX) return std::nullopt;
    return static_cast<std::uint32_t>(v);
}

ParseResult Fail(std::string msg) { return ParseResult{std::nullopt, std::move(msg)}; }

// "pid N" at args[i]; advances i.
std::optional<std::string> TakePid(const std::vector<std::string>& args, std::size_t& i,
                                   Command& c) {
    if (i + 1 >= args.size()) return "\"pid\" needs a process id";
    auto v = ParseU32(args[i + 1]);
    if (!v || *v == 0) return "invalid pid \"" + args[i + 1] + "\"";
    c.pid = v;
    i += 2;
    return std::nullopt;
}

}  // namespace

const char* Usage() noexcept {
    return "Usage: ndk [OPTIONS] OBJECT { COMMAND | help }\n"
           "       ndk adapter show [NAME]\n"
           "       ndk resource show [mr|mw|qp|cq|pd|mem|connector|listener|adapter] [pid PID]\n"
           "       ndk stat [show] [pid PID]\n"
           "       ndk monitor [all|adapter|mem] [count N]\n"
           "OPTIONS: -j, --json  JSON output    -p, --pretty  indented JSON\n"
           "         -V, --version              -h, --help\n"
           "Exit status: 0 success, 1 error, 2 usage error.\n";
}

ParseResult Parse(const std::vector<std::string>& args) {
    Command c;
    std::size_t i = 0;
    for (; i < args.size() && args[i].size() > 1 && args[i][0] == '-'; ++i) {
        const std::string& a = args[i];
        if (a == "-j" || a == "--json") {
            c.json = true;
        } else if (a == "-p" || a == "--pretty") {
            c.pretty = true;
        } else if (a == "-jp" || a == "-pj") {
            c.json = c.pretty = true;
        } else if (a == "-h" || a == "--help") {
            c.verb = Verb::kHelp;
            return ParseResult{c, {}};
        } else if (a == "-V" || a == "--version") {
            c.verb = Verb::kVersion;
            return ParseResult{c, {}};
        } else if (a == "--") {
            ++i;
            break;
        } else {
            return Fail("unknown option \"" + a + "\"");
        }
    }
    if (c.pretty) c.json = true;  // as rdma: -p implies JSON
    if (i >= args.size()) return Fail("no object given");
    const std::string& object = args[i++];
    const std::string verb = i < args.size() ? args[i] : std::string();

    if (object == "help") {
        c.verb = Verb::kHelp;
        return ParseResult{c, {}};
    }
    if (Matches(object, "adapter") || object == "dev") {
        c.verb = Verb::kAdapterShow;
        if (!verb.empty()) {
            if (verb == "help") return ParseResult{Command{}, {}};
            if (!Matches(verb, "show") && !Matches(verb, "list"))
                return Fail("unknown command \"" + verb + "\" for adapter");
            ++i;
        }
        if (i < args.size()) c.adapter = args[i++];
        if (i < args.size()) return Fail("unexpected \"" + args[i] + "\"");
        return ParseResult{c, {}};
    }
    if (Matches(object, "resource", 3)) {
        c.verb = Verb::kResourceShow;
        if (!verb.empty()) {
            if (verb == "help") return ParseResult{Command{}, {}};
            if (!Matches(verb, "show") && !Matches(verb, "list"))
                return Fail("unknown command \"" + verb + "\" for resource");
            ++i;
        }
        while (i < args.size()) {
            if (args[i] == "pid") {
                if (auto e = TakePid(args, i, c)) return Fail(*e);
                continue;
            }
            if (!c.types.empty()) return Fail("unexpected \"" + args[i] + "\"");
            const std::uint32_t t = nl::ObjectTypeFromName(args[i]);
            if (!t) return Fail("unknown resource type \"" + args[i] + "\"");
            c.types.push_back(t);
            // The registrations of memory: NDK MRs and WSP registrations.
            if (t == nl::ObjectTypeFromName("mr")) c.types.push_back(nl::ObjectTypeFromName("mem"));
            ++i;
        }
        return ParseResult{c, {}};
    }
    if (Matches(object, "statistic", 2)) {
        c.verb = Verb::kStat;
        if (!verb.empty() && verb != "pid") {
            if (verb == "help") return ParseResult{Command{}, {}};
            if (!Matches(verb, "show")) return Fail("unknown command \"" + verb + "\" for stat");
            ++i;
        }
        while (i < args.size()) {
            if (args[i] != "pid") return Fail("unexpected \"" + args[i] + "\"");
            if (auto e = TakePid(args, i, c)) return Fail(*e);
        }
        return ParseResult{c, {}};
    }
    if (Matches(object, "monitor", 3)) {
        c.verb = Verb::kMonitor;
        while (i < args.size()) {
            const std::string& a = args[i];
            if (a == "all") {
                c.groups = nl::Groups{true, true};
            } else if (a == "adapter") {
                c.groups = nl::Groups{true, false};
            } else if (a == "mem") {
                c.groups = nl::Groups{false, true};
            } else if (a == "count") {
                if (i + 1 >= args.size()) return Fail("\"count\" needs a number");
                auto n = ParseU32(args[i + 1]);
                if (!n || *n == 0) return Fail("invalid count \"" + args[i + 1] + "\"");
                c.count = *n;
                ++i;
            } else if (a == "help") {
                return ParseResult{Command{}, {}};
            } else {
                return Fail("unknown monitor argument \"" + a + "\"");
            }
            ++i;
        }
        return ParseResult{c, {}};
    }
    return Fail("unknown object \"" + object + "\"");
}

// --- JSON ----------------------------------------------------------------

std::string Dump(const Json& j, bool pretty) {
    return j.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace);
}

// --- renderings ----------------------------------------------------------

std::string Hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
    return buf;
}

std::string Guid(std::uint64_t g) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48),
                  static_cast<unsigned>(g >> 32) & 0xffff, static_cast<unsigned>(g >> 16) & 0xffff,
                  static_cast<unsigned>(g) & 0xffff);
    return buf;
}

namespace {

bool HexField(const std::string& name) {
    return name == "vendor_id" || name == "device_id" || name == "adapter_flags" ||
           name == "version";
}

Json CountsJson(const nl::Counts& c) {
    Json o = Json::object();
    for (std::uint32_t t = 1; t < nl::kObjectTypes; ++t) o[nl::ObjectTypeName(t)] = c[t];
    return o;
}

std::string CountsText(const nl::Counts& c) {
    std::string s;
    for (std::uint32_t t = 1; t < nl::kObjectTypes; ++t)
        s += std::string(t > 1 ? " " : "") + nl::ObjectTypeName(t) + " " + std::to_string(c[t]);
    return s;
}

Json FieldsJson(const nl::Fields& f) {
    Json o = Json::object();
    for (const auto& [k, v] : f) o[k] = v;
    return o;
}

std::string StatusText(std::uint32_t status) {
    const auto name = ndk::StatusName(static_cast<NTSTATUS>(status));
    return name.empty() ? Hex(status) : std::string(name);
}

}  // namespace

Json AdapterJson(const nl::Adapter& a) {
    Json info = Json::object();
    for (const auto& [k, v] : a.info) info[k] = v;
    return Json{
        {"id", a.id},
        {"name", a.name},
        {"node_guid", Guid(a.node_guid)},
        {"ib_index", a.ib_index},
        {"port_count", a.port_count},
        {"info", std::move(info)},
        {"objects", CountsJson(a.objects)},
    };
}

std::string AdapterText(const nl::Adapter& a) {
    std::string s = std::to_string(a.id) + ": " + a.name + ": node_guid " + Guid(a.node_guid) +
                    " ib_index " + std::to_string(a.ib_index) + " ports " +
                    std::to_string(a.port_count) + "\n    ";
    std::size_t col = 4;
    for (const auto& [k, v] : a.info) {
        std::string item = k + " " + (HexField(k) ? Hex(v) : std::to_string(v));
        if (col + item.size() + 1 > 100) {
            s += "\n    ";
            col = 4;
        } else if (col > 4) {
            s += ' ';
            ++col;
        }
        s += item;
        col += item.size();
    }
    return s + "\n    objects: " + CountsText(a.objects) + "\n";
}

Json ResourceJson(const nl::Resource& r) {
    Json o{
        {"pid", r.pid},       {"comm", r.comm},
        {"file", r.file_id},  {"type", nl::ObjectTypeName(r.type)},
        {"handle", r.handle},
    };
    if (r.parent) o["parent"] = *r.parent;
    if (r.adapter_id) o["adapter_id"] = *r.adapter_id;
    if (!r.adapter.empty()) o["adapter"] = r.adapter;
    if (r.address) o["address"] = *r.address;
    if (r.length) o["length"] = *r.length;
    if (r.pages) o["pages"] = *r.pages;
    if (r.flags) o["flags"] = *r.flags;
    if (r.refs) o["refs"] = *r.refs;
    return o;
}

std::string ResourceText(const nl::Resource& r) {
    std::string s = "pid " + std::to_string(r.pid) + " comm " + r.comm + " file " +
                    std::to_string(r.file_id) + " type " + nl::ObjectTypeName(r.type) + " handle " +
                    std::to_string(r.handle);
    if (r.parent) s += " parent " + std::to_string(*r.parent);
    if (!r.adapter.empty()) s += " adapter " + r.adapter;
    if (r.address) s += " address " + Hex(*r.address);
    if (r.length) s += " length " + std::to_string(*r.length);
    if (r.pages) s += " pages " + std::to_string(*r.pages);
    if (r.flags) s += " flags " + Hex(*r.flags);
    if (r.refs) s += " refs " + std::to_string(*r.refs);
    return s + "\n";
}

Json ProcessJson(const nl::Process& p) {
    return Json{
        {"pid", p.pid},
        {"comm", p.comm},
        {"file", p.file_id},
        {"objects", CountsJson(p.objects)},
        {"stats", FieldsJson(p.counters)},
    };
}

std::string ProcessText(const nl::Process& p) {
    std::string s = "pid " + std::to_string(p.pid) + " comm " + p.comm + " file " +
                    std::to_string(p.file_id) + "\n    objects: " + CountsText(p.objects) +
                    "\n    stats:";
    for (const auto& [k, v] : p.counters) s += " " + k + " " + std::to_string(v);
    return s + "\n";
}

Json StatsJson(const nl::Stats& s) {
    Json errors = Json::array();
    for (const auto& [status, count] : s.errors)
        errors.push_back({{"status", Hex(status)}, {"name", StatusText(status)}, {"count", count}});
    return Json{
        {"version", s.version},
        {"stats", FieldsJson(s.counters)},
        {"errors", std::move(errors)},
    };
}

std::string StatsText(const nl::Stats& s) {
    std::string out =
        "registration statistics (netlink family ndk version " + std::to_string(s.version) + "):\n";
    for (const auto& [k, v] : s.counters) {
        char line[96];
        std::snprintf(line, sizeof(line), "    %-22s %" PRIu64 "\n", k.c_str(), v);
        out += line;
    }
    out += "errors by status:";
    if (s.errors.empty()) out += " none";
    out += "\n";
    for (const auto& [status, count] : s.errors) {
        char line[128];
        std::snprintf(line, sizeof(line), "    %-34s %s %" PRIu64 "\n", StatusText(status).c_str(),
                      Hex(status).c_str(), count);
        out += line;
    }
    return out;
}

Json EventJson(const nl::Event& e) {
    Json o{{"event", nl::EventName(e.kind)}};
    if (e.kind == nl::Event::Kind::kMemInvalidated) {
        o["pid"] = e.pid;
        o["file"] = e.file_id;
        o["handle"] = e.handle;
        o["address"] = e.address;
        o["length"] = e.length;
        o["dropped"] = e.dropped;
    } else {
        o["id"] = e.adapter_id;
        o["name"] = e.adapter;
        o["node_guid"] = Guid(e.node_guid);
    }
    return o;
}

std::string EventText(const nl::Event& e) {
    std::string s = std::string("[") + nl::EventName(e.kind) + "] ";
    if (e.kind == nl::Event::Kind::kMemInvalidated)
        return s + "pid " + std::to_string(e.pid) + " file " + std::to_string(e.file_id) +
               " handle " + std::to_string(e.handle) + " address " + Hex(e.address) + " length " +
               std::to_string(e.length) +
               (e.dropped ? " dropped " + std::to_string(e.dropped) : "") + "\n";
    return s + std::to_string(e.adapter_id) + ": " + e.adapter + " node_guid " + Guid(e.node_guid) +
           "\n";
}

}  // namespace ndk::cli
