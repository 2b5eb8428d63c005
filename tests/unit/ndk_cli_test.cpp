// SPDX-License-Identifier: BSD-2-Clause
// The `ndk` tool's command line, JSON writer and renderings (no kernel).
#include <gtest/gtest.h>
#include <ndk/ndk_netlink.h>

#include "ndk_cli.hpp"

namespace {

using ndk::cli::Parse;
using ndk::cli::Verb;

ndk::cli::Command Ok(std::vector<std::string> args) {
    auto r = Parse(args);
    EXPECT_TRUE(r.command.has_value()) << r.error;
    return r.command.value_or(ndk::cli::Command{});
}

std::string Err(std::vector<std::string> args) {
    auto r = Parse(args);
    EXPECT_FALSE(r.command.has_value());
    return r.error;
}

TEST(NdkCli, AdapterShow) {
    auto c = Ok({"adapter", "show"});
    EXPECT_EQ(c.verb, Verb::kAdapterShow);
    EXPECT_TRUE(c.adapter.empty());
    EXPECT_FALSE(c.json);
    c = Ok({"-j", "a", "sh", "rxe0"});
    EXPECT_EQ(c.verb, Verb::kAdapterShow);
    EXPECT_EQ(c.adapter, "rxe0");
    EXPECT_TRUE(c.json);
    EXPECT_EQ(Ok({"adapter"}).verb, Verb::kAdapterShow);
    EXPECT_EQ(Ok({"dev", "show", "mlx5_0"}).adapter, "mlx5_0");
    EXPECT_NE(Err({"adapter", "show", "a", "b"}).find("unexpected"), std::string::npos);
    EXPECT_NE(Err({"adapter", "delete"}).find("unknown command"), std::string::npos);
}

TEST(NdkCli, PrettyImpliesJson) {
    auto c = Ok({"-p", "stat"});
    EXPECT_TRUE(c.json && c.pretty);
    c = Ok({"-jp", "stat"});
    EXPECT_TRUE(c.json && c.pretty);
}

TEST(NdkCli, ResourceShow) {
    auto c = Ok({"resource", "show", "mr", "pid", "42"});
    EXPECT_EQ(c.verb, Verb::kResourceShow);
    // mr lists NDK MRs and WSP registrations.
    ASSERT_EQ(c.types.size(), 2u);
    EXPECT_EQ(c.types[0], static_cast<std::uint32_t>(NDK_NL_OBJ_MR));
    EXPECT_EQ(c.types[1], static_cast<std::uint32_t>(NDK_NL_OBJ_MEM));
    ASSERT_TRUE(c.pid.has_value());
    EXPECT_EQ(*c.pid, 42u);
    c = Ok({"res", "show", "qp"});
    ASSERT_EQ(c.types.size(), 1u);
    EXPECT_EQ(c.types[0], static_cast<std::uint32_t>(NDK_NL_OBJ_QP));
    EXPECT_FALSE(c.pid.has_value());
    c = Ok({"resource"});
    EXPECT_TRUE(c.types.empty());
    c = Ok({"resource", "show", "pid", "7", "mw"});
    EXPECT_EQ(c.types.size(), 1u);
    EXPECT_EQ(*c.pid, 7u);
    EXPECT_NE(Err({"resource", "show", "bogus"}).find("unknown resource type"), std::string::npos);
    EXPECT_NE(Err({"resource", "show", "mr", "pid"}).find("needs a process id"), std::string::npos);
    EXPECT_NE(Err({"resource", "show", "mr", "pid", "0"}).find("invalid pid"), std::string::npos);
    EXPECT_NE(Err({"resource", "show", "mr", "pid", "99999999999"}).find("invalid pid"),
              std::string::npos);
    EXPECT_NE(Err({"resource", "show", "mr", "pid", "-1"}).find("invalid pid"), std::string::npos);
    EXPECT_NE(Err({"resource", "show", "mr", "qp"}).find("unexpected"), std::string::npos);
    // "re" is too short to mean resource.
    EXPECT_NE(Err({"re"}).find("unknown object"), std::string::npos);
}

TEST(NdkCli, StatAndMonitor) {
    EXPECT_EQ(Ok({"stat"}).verb, Verb::kStat);
    EXPECT_EQ(*Ok({"statistic", "show", "pid", "3"}).pid, 3u);
    EXPECT_EQ(*Ok({"stat", "pid", "3"}).pid, 3u);
    EXPECT_NE(Err({"stat", "foo"}).find("unknown command"), std::string::npos);
    auto m = Ok({"monitor"});
    EXPECT_EQ(m.verb, Verb::kMonitor);
    EXPECT_TRUE(m.groups.adapter && m.groups.mem);
    m = Ok({"mon", "mem", "count", "2"});
    EXPECT_TRUE(!m.groups.adapter && m.groups.mem);
    EXPECT_EQ(*m.count, 2u);
    EXPECT_NE(Err({"monitor", "count", "0"}).find("invalid count"), std::string::npos);
    EXPECT_NE(Err({"monitor", "nonsense"}).find("unknown monitor argument"), std::string::npos);
}

TEST(NdkCli, OptionsAndHelp) {
    EXPECT_NE(Err({}).find("no object"), std::string::npos);
    EXPECT_NE(Err({"-x", "stat"}).find("unknown option"), std::string::npos);
    EXPECT_EQ(Ok({"-h"}).verb, Verb::kHelp);
    EXPECT_EQ(Ok({"help"}).verb, Verb::kHelp);
    EXPECT_EQ(Ok({"-V"}).verb, Verb::kVersion);
    EXPECT_EQ(Ok({"adapter", "help"}).verb, Verb::kHelp);
}

TEST(NdkCli, Json) {
    using ndk::cli::Dump;
    using ndk::cli::Json;
    Json j{{"a", 1},
           {"b", "x\"y\n"},
           {"c", Json::array({true, nullptr})},
           {"big", std::uint64_t{18446744073709551615ull}}};
    EXPECT_EQ(Dump(j, false), R"({"a":1,"b":"x\"y\n","c":[true,null],"big":18446744073709551615})");
    EXPECT_EQ(Dump(j, true),
              "{\n  \"a\": 1,\n  \"b\": \"x\\\"y\\n\",\n  \"c\": [\n    true,\n    null\n  ],\n"
              "  \"big\": 18446744073709551615\n}");
    EXPECT_EQ(Dump(Json::array(), true), "[]");
    EXPECT_EQ(Dump(Json(std::string("\x01", 1)), false), "\"\\u0001\"");
    // A comm that is not UTF-8 is printed, not thrown.
    EXPECT_EQ(Dump(Json(std::string("a\xff")), false), "\"a\xef\xbf\xbd\"");
}

TEST(NdkCli, Renderings) {
    EXPECT_EQ(ndk::cli::Guid(0x0002c90300a1b2c3ull), "0002:c903:00a1:b2c3");
    EXPECT_EQ(ndk::cli::Hex(0xc000000d), "0xc000000d");

    ndk::nl::Resource r;
    r.pid = 12;
    r.comm = "app";
    r.file_id = 3;
    r.type = NDK_NL_OBJ_MEM;
    r.handle = 9;
    r.parent = 2;
    r.adapter = "rxe0";
    r.address = 0x1000;
    r.length = 4096;
    r.pages = 1;
    r.flags = 3;
    r.refs = 2;
    EXPECT_EQ(ndk::cli::ResourceText(r),
              "pid 12 comm app file 3 type mem handle 9 parent 2 adapter rxe0 address 0x1000 "
              "length 4096 pages 1 flags 0x3 refs 2\n");
    EXPECT_EQ(ndk::cli::Dump(ndk::cli::ResourceJson(r), false),
              R"({"pid":12,"comm":"app","file":3,"type":"mem","handle":9,"parent":2,)"
              R"("adapter":"rxe0","address":4096,"length":4096,"pages":1,"flags":3,"refs":2})");

    ndk::nl::Stats s;
    s.version = 1;
    s.counters = {{"registrations", 5}, {"errors", 3}};
    s.errors = {{0xc000000du, 3}};
    const std::string text = ndk::cli::StatsText(s);
    EXPECT_NE(text.find("registrations          5"), std::string::npos) << text;
    EXPECT_NE(text.find("STATUS_INVALID_PARAMETER"), std::string::npos) << text;
    EXPECT_EQ(ndk::cli::Dump(ndk::cli::StatsJson(s), false),
              R"({"version":1,"stats":{"registrations":5,"errors":3},"errors":[{"status":)"
              R"("0xc000000d","name":"STATUS_INVALID_PARAMETER","count":3}]})");

    ndk::nl::Event e;
    e.kind = ndk::nl::Event::Kind::kAdapterRemoved;
    e.adapter_id = 4;
    e.adapter = "rxe0";
    e.node_guid = 1;
    EXPECT_EQ(ndk::cli::EventText(e), "[adapter-removed] 4: rxe0 node_guid 0000:0000:0000:0001\n");
    e.kind = ndk::nl::Event::Kind::kMemInvalidated;
    e.pid = 7;
    e.file_id = 2;
    e.handle = 5;
    e.address = 0x2000;
    e.length = 10;
    EXPECT_EQ(ndk::cli::Dump(ndk::cli::EventJson(e), false),
              R"({"event":"mem-invalidated","pid":7,"file":2,"handle":5,"address":8192,)"
              R"("length":10,"dropped":0})");
}

TEST(NdkCli, ObjectTypeNames) {
    for (std::uint32_t t = 1; t < ndk::nl::kObjectTypes; ++t)
        EXPECT_EQ(ndk::nl::ObjectTypeFromName(ndk::nl::ObjectTypeName(t)), t);
    EXPECT_EQ(ndk::nl::ObjectTypeFromName("nope"), 0u);
}

}  // namespace
