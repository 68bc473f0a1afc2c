// SingleFlight: one fetch for concurrent callers of a key, and a waiter that
// leaves when its client goes away (CallerGone) without ending the flight for the
// others. Also CallerGone's hooks.
#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "gateway/call_context.h"
#include "gateway/single_flight.h"

namespace nfsgw {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr int kLeftValue = -1;

struct FlightFixture : ::testing::Test {
  asio::io_context io;
  asio::steady_timer gate{io, asio::steady_timer::time_point::max()};  // the origin's answer
  SingleFlight<int> flights;
  int fetches = 0;

  /// One caller of key "k": fetches 42 once `gate` opens, unless another one does.
  void start(std::optional<int>& out, const CallerGone* caller, bool* shared = nullptr) {
    asio::co_spawn(
        io,
        [this, &out, caller, shared]() -> Awaitable<void> {
          auto fetch = [this]() -> Awaitable<int> {
            ++fetches;
            boost::system::error_code ec;
            co_await gate.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            co_return 42;
          };
          SingleFlight<int>::Leave leave{caller, kLeftValue};
          std::string key = "k";
          out = co_await flights.run(std::move(key), fetch, shared, std::move(leave));
        },
        asio::detached);
    io.poll();
  }
};

TEST_F(FlightFixture, AWaiterWhoseClientLeavesStopsWaitingAndTheFlightGoesOnForTheOthers) {
  auto leaver = std::make_shared<CallerGone>();
  auto stayer = std::make_shared<CallerGone>();
  std::optional<int> leader, left, stays;
  start(leader, nullptr);
  bool left_shared = false;
  start(left, leaver.get(), &left_shared);
  start(stays, stayer.get());
  ASSERT_EQ(flights.waiting(), 2u);
  ASSERT_EQ(fetches, 1);

  leaver->raise();  // its connection closed
  io.poll();
  ASSERT_TRUE(left.has_value()) << "a waiter whose client left is still waiting for the origin";
  EXPECT_EQ(*left, kLeftValue);
  EXPECT_TRUE(left_shared);
  EXPECT_EQ(flights.waiting(), 1u);
  EXPECT_FALSE(leader.has_value());
  EXPECT_FALSE(stays.has_value());

  gate.cancel();  // the origin answers
  io.poll();
  ASSERT_TRUE(leader && stays);
  EXPECT_EQ(*leader, 42);
  EXPECT_EQ(*stays, 42);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(flights.waiting(), 0u);

  // The flag of the one who stayed keeps no hook of the finished flight.
  stayer->raise();
  io.poll();
  EXPECT_EQ(*stays, 42);
}

TEST_F(FlightFixture, AWaiterWhoseClientIsGoneAlreadyDoesNotWaitAtAll) {
  auto gone = std::make_shared<CallerGone>();
  gone->raise();
  std::optional<int> leader, late;
  start(leader, nullptr);
  start(late, gone.get());
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(*late, kLeftValue);
  EXPECT_EQ(flights.waiting(), 0u);
  gate.cancel();
  io.poll();
  EXPECT_EQ(leader.value_or(0), 42);
}

TEST_F(FlightFixture, ALeaderWhoseClientLeavesStillAnswersItsWaiters) {
  auto gone = std::make_shared<CallerGone>();
  std::optional<int> leader, waiter;
  start(leader, gone.get());
  start(waiter, nullptr);
  gone->raise();  // a leader does not leave: others wait on its fetch
  io.poll();
  EXPECT_FALSE(leader.has_value());
  gate.cancel();
  io.poll();
  EXPECT_EQ(leader.value_or(0), 42);
  EXPECT_EQ(waiter.value_or(0), 42);
}

TEST(CallerGoneTest, HooksRunOnceOnRaiseUnlessForgotten) {
  auto gone = std::make_shared<CallerGone>();
  int a = 0, b = 0;
  const auto ida = gone->on_raise([&] { ++a; });
  const auto idb = gone->on_raise([&] { ++b; });
  ASSERT_NE(ida, 0u);
  ASSERT_NE(idb, 0u);
  gone->forget(idb);
  EXPECT_FALSE(gone->is_raised());
  gone->raise();
  gone->raise();
  EXPECT_TRUE(gone->is_raised());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);
  int c = 0;
  EXPECT_EQ(gone->on_raise([&] { ++c; }), 0u);  // raised already: not kept, not run
  EXPECT_EQ(c, 0);
}

}  // namespace
}  // namespace nfsgw
