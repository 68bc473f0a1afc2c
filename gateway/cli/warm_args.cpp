#include "gateway/cli/warm_args.h"

#include <stdexcept>

namespace nfsgw::warm {

namespace {

std::uint32_t number(const std::string& option, const std::string& text, std::uint32_t min, std::uint32_t max) {
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument(option + " takes a whole number " + range + ", not '" + text + "'");
  const unsigned long long v = std::stoull(text);
  if (v < min || v > max) throw std::invalid_argument(option + " must be " + range + ", not " + text);
  return static_cast<std::uint32_t>(v);
}

}  // namespace

const char* warm_usage() {
  return "nfsgw warm --config FILE EXPORT[/PATH] [--depth N] [--data] [--parallel N] [--manifest FILE]\n";
}

WarmArgs parse_warm_args(const std::vector<std::string>& args) {
  WarmArgs a;
  bool have_target = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool has_value = i + 1 < args.size();
    auto value = [&]() -> const std::string& {
      if (!has_value) throw std::invalid_argument(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--config") {
      a.config_path = value();
    } else if (arg == "--depth") {
      a.depth = number(arg, value(), 0, admin::kMaxWarmDepth);
    } else if (arg == "--data") {
      a.data = true;
    } else if (arg == "--parallel") {
      a.parallel = number(arg, value(), 1, admin::kMaxWarmParallel);
    } else if (arg == "--manifest") {
      a.manifest_path = value();
      if (a.manifest_path->empty()) throw std::invalid_argument("--manifest needs a file name");
    } else if (arg.rfind("-", 0) == 0) {
      throw std::invalid_argument("unexpected argument '" + arg + "' for warm");
    } else if (!have_target) {
      a.target = arg;
      have_target = true;
    } else {
      throw std::invalid_argument("warm takes one EXPORT[/PATH]; '" + a.target + "' and '" + arg +
                                  "' given (list several paths in a --manifest file)");
    }
  }
  if (a.config_path.empty()) throw std::invalid_argument("warm needs --config FILE");
  if (!have_target) throw std::invalid_argument("warm needs EXPORT[/PATH]");
  return a;
}

}  // namespace nfsgw::warm
