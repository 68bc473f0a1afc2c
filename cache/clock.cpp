#include "cache/clock.h"

#include <chrono>

namespace nfsgw::cache {
namespace {

class WallClock final : public Clock {
 public:
  Millis now_ms() const override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  }
};

}  // namespace

Clock& wall_clock() {
  static WallClock clock;
  return clock;
}

}  // namespace nfsgw::cache
