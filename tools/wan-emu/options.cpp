#include "tools/wan-emu/options.h"

#include <charconv>

namespace nfsgw::wanemu {

namespace asio = boost::asio;

std::uint64_t parse_number(const std::string& text, std::uint64_t max) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v > max)
    throw UsageError("bad number '" + text + "' (0.." + std::to_string(max) + ")");
  return v;
}

asio::ip::tcp::endpoint parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw UsageError("expected ADDRESS:PORT, got '" + text + "'");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) throw UsageError("bad address '" + host + "'");
  auto port = parse_number(text.substr(colon + 1), 65535);
  return {addr, static_cast<unsigned short>(port)};
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--pair") {
      const std::string& v = value();
      auto eq = v.find('=');
      if (eq == std::string::npos) throw UsageError("--pair wants LISTEN=TARGET, got '" + v + "'");
      o.pairs.push_back({parse_endpoint(v.substr(0, eq)), parse_endpoint(v.substr(eq + 1))});
    } else if (a == "--delay-ms") {
      o.delay_up_ms = o.delay_down_ms = static_cast<std::uint32_t>(parse_number(value(), kMaxDelayMs));
    } else if (a == "--delay-up-ms") {
      o.delay_up_ms = static_cast<std::uint32_t>(parse_number(value(), kMaxDelayMs));
    } else if (a == "--delay-down-ms") {
      o.delay_down_ms = static_cast<std::uint32_t>(parse_number(value(), kMaxDelayMs));
    } else if (a == "--bandwidth-kbps") {
      o.bandwidth_kbps = parse_number(value(), 100'000'000);
    } else if (a == "--control") {
      o.control = parse_endpoint(value());
    } else if (a == "--stats-file") {
      o.stats_file = value();
    } else if (a == "--max-queue-kb") {
      o.max_queue_kb = parse_number(value(), 4u << 20);
      if (o.max_queue_kb == 0) throw UsageError("--max-queue-kb must be positive");
    } else if (a == "--ctl") {
      o.ctl = parse_endpoint(value());
      for (++i; i < args.size(); ++i) {
        if (!o.ctl_command.empty()) o.ctl_command += ' ';
        o.ctl_command += args[i];
      }
      if (o.ctl_command.empty()) throw UsageError("--ctl needs a command (e.g. stats)");
    } else {
      throw UsageError("unknown argument '" + a + "'");
    }
  }
  if (!o.help && !o.ctl && o.pairs.empty()) throw UsageError("give at least one --pair LISTEN=TARGET");
  return o;
}

const char* usage_text() {
  return R"(usage:
  wan-emu --pair LISTEN=TARGET [--pair ...] [--delay-ms N | --delay-up-ms N --delay-down-ms N]
          [--bandwidth-kbps N] [--control ADDR:PORT] [--stats-file PATH] [--max-queue-kb N]
  wan-emu --ctl ADDR:PORT COMMAND [ARGS...]
commands: stats | reset | cut | restore | delay MS [DOWN_MS] | bandwidth KBPS | quit
)";
}

}  // namespace nfsgw::wanemu
