// wan-emu-probe: keeps K NFSv3 NULL or GETATTR calls in flight against host:port and
// prints throughput and round-trip quantiles as one JSON line. Used for the
// measurements in tools/wan-emu/README.md (direct vs through wan-emu).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "tools/wan-emu/probe/nfs_probe.h"

using namespace nfsgw::wanemu::probe;

int main(int argc, char** argv) {
  std::string host = "127.0.0.1", exp = "/";
  int port = 0, mount_port = 0;
  unsigned long calls = 10000, in_flight = 1;
  double timeout_s = 60;
  Proc proc = Proc::Null;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--host") host = next();
    else if (a == "--port") port = std::atoi(next().c_str());
    else if (a == "--mount-port") mount_port = std::atoi(next().c_str());
    else if (a == "--export") exp = next();
    else if (a == "--proc") proc = next() == "getattr" ? Proc::Getattr : Proc::Null;
    else if (a == "--calls") calls = std::strtoul(next().c_str(), nullptr, 10);
    else if (a == "--in-flight") in_flight = std::strtoul(next().c_str(), nullptr, 10);
    else if (a == "--timeout-s") timeout_s = std::atof(next().c_str());
    else {
      std::cerr << "usage: wan-emu-probe --port N [--host H] [--mount-port M --export PATH] "
                   "[--proc null|getattr] [--calls N] [--in-flight K] [--timeout-s S]\n";
      return 2;
    }
  }
  if (port <= 0 || in_flight == 0 || (proc == Proc::Getattr && mount_port <= 0)) {
    std::cerr << "need --port, --in-flight >= 1, and --mount-port for getattr\n";
    return 2;
  }
  auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  NfsProbe p;
  if (proc == Proc::Getattr && !p.mount(host, mount_port, exp, timeout)) {
    std::cerr << "mount: " << p.error() << "\n";
    return 1;
  }
  if (!p.connect(host, port, timeout)) {
    std::cerr << "connect: " << p.error() << "\n";
    return 1;
  }
  BatchResult r = p.run(proc, calls, in_flight, timeout);
  std::printf(
      "{\"ok\":%llu,\"failed\":%llu,\"unfinished\":%llu,\"seconds\":%.3f,\"calls_per_s\":%.0f,"
      "\"rtt_ms\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"max\":%.3f}}\n",
      static_cast<unsigned long long>(r.ok), static_cast<unsigned long long>(r.failed),
      static_cast<unsigned long long>(r.unfinished), r.seconds, r.seconds > 0 ? r.ok / r.seconds : 0.0,
      quantile(r.rtt_ms, 0.5), quantile(r.rtt_ms, 0.9), quantile(r.rtt_ms, 0.99), quantile(r.rtt_ms, 1.0));
  if (!r.error.empty()) std::cerr << "error: " << r.error << "\n";
  return r.ok == calls ? 0 : 1;
}
