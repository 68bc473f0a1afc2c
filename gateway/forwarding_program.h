// The base of every layer: each procedure passed to the next program, answer step
// and coroutine alike, so that a layer overrides only what it changes.
//
// A layer that overrides a procedure's coroutine but not its answer step gets a
// step that passes (the call then takes that coroutine), never the next layer's
// step: an answer from below would skip what this layer does to the call. A layer
// that overrides a step must override the coroutine too (checked at compile time),
// since the coroutine is what runs when the step passes and must give the same
// answer. `Layer` is the deriving class (CRTP), so these checks cost nothing at run
// time.
#pragma once

#include <type_traits>
#include <utility>

#include "gateway/nfs3_program.h"

namespace nfsgw {

template <typename Layer>
class ForwardingProgram : public Nfs3Program {
 public:
  explicit ForwardingProgram(Nfs3Program& next) : next_(next) {}

  Awaitable<void> null(const CallContext& ctx) override { return next_.null(ctx); }

#define NFSGW_FORWARD(method, P, Res, Args)                                                         \
  Awaitable<nfs3::Res> method(const CallContext& ctx, nfs3::Args args) override {                   \
    return next_.method(ctx, std::move(args));                                                      \
  }                                                                                                 \
  Now<nfs3::Res> method##_now(const CallContext& ctx, const nfs3::Args& args) override {            \
    using Coroutine = Awaitable<nfs3::Res> (Layer::*)(const CallContext&, nfs3::Args);              \
    using Step = Now<nfs3::Res> (Layer::*)(const CallContext&, const nfs3::Args&);                  \
    static_assert(!std::is_same_v<decltype(&Layer::method##_now), Step> ||                          \
                      std::is_same_v<decltype(&Layer::method), Coroutine>,                          \
                  #method "_now is overridden without its coroutine");                              \
    if constexpr (std::is_same_v<decltype(&Layer::method), Coroutine>) {                            \
      return {};                                                                                    \
    } else {                                                                                        \
      return next_.method##_now(ctx, args);                                                         \
    }                                                                                               \
  }
  NFSGW_NFS3_PROCEDURES(NFSGW_FORWARD)
#undef NFSGW_FORWARD

 protected:
  Nfs3Program& next_;
};

}  // namespace nfsgw
