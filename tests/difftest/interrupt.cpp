#include "tests/difftest/interrupt.h"

#include <signal.h>

#include <atomic>

namespace difftest {
namespace {
std::atomic<bool> stop{false};
void on_signal(int) { stop.store(true); }
}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return stop.load(); }

}  // namespace difftest
