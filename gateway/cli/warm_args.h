// The command line of `nfsgw warm`:
//
//   nfsgw warm --config FILE EXPORT[/PATH] [--depth N] [--data] [--parallel N] [--manifest FILE]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gateway/admin/admin_protocol.h"

namespace nfsgw::warm {

struct WarmArgs {
  std::string config_path;
  std::string target;                  // EXPORT[/PATH]
  std::optional<std::uint32_t> depth;  // nullopt: the whole tree
  bool data = false;
  std::uint32_t parallel = admin::kDefaultWarmParallel;
  std::optional<std::string> manifest_path;
  friend bool operator==(const WarmArgs&, const WarmArgs&) = default;
};

/// The usage line.
const char* warm_usage();

/// Parses the arguments after "warm". Throws std::invalid_argument with a message
/// for the operator (a usage error).
WarmArgs parse_warm_args(const std::vector<std::string>& args);

}  // namespace nfsgw::warm
