// [server] nlm_caller_name: unset by default (nfsgw then uses the host's name), a
// host name or address when set, and anything statd could not take refused with a
// message naming the key, the value and what is allowed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "config_test_helpers.h"

namespace config_nlm_caller_name_test {
namespace {

using namespace nfsgw::config;
using nfsgw::config::testing::expect_refused;
using nfsgw::config::testing::kExport;

TEST(ConfigNlmCallerName, UnsetByDefault) { EXPECT_EQ(parse_config(kExport).server.nlm_caller_name, ""); }

TEST(ConfigNlmCallerName, NamesAndAddressesAreRead) {
  for (const std::string& v : std::vector<std::string>{"gw-1.example.com", "10.0.0.7", "fe80::1", "render_node_12", std::string(255, 'a')}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(parse_config("[server]\nnlm_caller_name = \"" + v + "\"\n" + kExport).server.nlm_caller_name, v);
  }
}

TEST(ConfigNlmCallerName, WhatStatdCouldNotTakeIsRefused) {
  for (const std::string& v : std::vector<std::string>{"", "two words", "a/b", "name\\tx", std::string(256, 'a'), "caf\xc3\xa9"}) {
    SCOPED_TRACE(v);
    expect_refused("[server]\nnlm_caller_name = \"" + v + "\"\n" + kExport,
                   {"server.nlm_caller_name", "not a caller name", "1 to 255 bytes"});
  }
  expect_refused("[server]\nnlm_caller_name = 7\n" + kExport, {"server.nlm_caller_name", "expected a string"});
}

}  // namespace
}  // namespace config_nlm_caller_name_test
