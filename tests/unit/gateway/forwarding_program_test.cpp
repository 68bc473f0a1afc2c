// The forwarding base of every layer (gateway/forwarding_program.h): what a layer
// does not override reaches the layer below, answer step included; a procedure
// whose coroutine it overrides gets no answer step from below, so that the layer's
// own work on the call is never skipped.
#include <gtest/gtest.h>

#include "gateway/forwarding_program.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/run_awaitable.h"

namespace nfsgw::test {
namespace {

/// Changes nothing.
class Transparent final : public ForwardingProgram<Transparent> {
 public:
  using ForwardingProgram::ForwardingProgram;
};

/// Changes LOOKUP's coroutine (marks every answer) and nothing else.
class MarksLookups final : public ForwardingProgram<MarksLookups> {
 public:
  using ForwardingProgram::ForwardingProgram;
  Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) override {
    nfs3::LookupRes res = co_await next_.lookup(ctx, std::move(args));
    res.status = nfs3::Status::Acces;
    co_return res;
  }
};

nfs3::LookupArgs args() { return nfs3::LookupArgs{nfs3::DirOpArgs{{}, "a"}}; }

TEST(ForwardingProgram, WhatALayerDoesNotOverrideReachesTheLayerBelow) {
  FakeNfs3Program below;
  below.lookup_now_res = nfs3::LookupRes{};
  Transparent layer(below);
  CallContext ctx;
  EXPECT_TRUE(layer.lookup_now(ctx, args())) << "the step below answers through it";
  EXPECT_EQ(run_awaitable(layer.lookup(ctx, args())).status, nfs3::Status::Ok);
  run_awaitable(layer.null(ctx));
  EXPECT_EQ(below.calls().back().proc, "null");
}

TEST(ForwardingProgram, AnOverriddenCoroutineGetsNoAnswerStepFromBelow) {
  FakeNfs3Program below;
  below.lookup_now_res = nfs3::LookupRes{};
  MarksLookups layer(below);
  CallContext ctx;
  EXPECT_FALSE(layer.lookup_now(ctx, args())) << "an answer from below would skip this layer's work";
  EXPECT_EQ(run_awaitable(layer.lookup(ctx, args())).status, nfs3::Status::Acces);
  below.getattr_res.status = nfs3::Status::Stale;
  EXPECT_EQ(run_awaitable(layer.getattr(ctx, nfs3::GetattrArgs{})).status, nfs3::Status::Stale)
      << "other procedures still pass through";
}

}  // namespace
}  // namespace nfsgw::test
