// A change's entry in the change journal (cache/change_journal.h), from a
// coroutine: co_await begins it and resumes once the objects are written down; the
// scope ends it when destroyed, after the change has taught the store (so declare
// it before anything the change learns, and let it die at the end of the call).
#pragma once

#include <utility>

#include <memory>
#include <vector>

#include <boost/asio/async_result.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/change_journal.h"
#include "gateway/awaitable.h"

namespace nfsgw::metacache {

class JournalScope {
 public:
  JournalScope() = default;
  JournalScope(cache::ChangeJournal* journal, std::vector<cache::ObjectKey> objects)
      : journal_(journal), objects_(std::move(objects)) {}
  JournalScope(JournalScope&& o) noexcept
      : journal_(std::exchange(o.journal_, nullptr)), objects_(std::move(o.objects_)) {}
  JournalScope& operator=(JournalScope&&) = delete;
  JournalScope(const JournalScope&) = delete;
  ~JournalScope() {
    if (journal_) journal_->end(objects_);
  }

 private:
  cache::ChangeJournal* journal_ = nullptr;
  std::vector<cache::ObjectKey> objects_;
};

/// Writes `objects` down in `journal` before a change of them is sent, resuming
/// once they are durable. Not a coroutine (see store_await.h on GCC 12 and
/// temporaries).
inline Awaitable<JournalScope> journal_begin(cache::ChangeJournal* journal, std::vector<cache::ObjectKey> objects) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(JournalScope)>(
      [journal](auto handler, std::vector<cache::ObjectKey> objs) {
        auto ex = boost::asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto scope = std::make_shared<JournalScope>(journal, objs);
        journal->begin(objs, [h, scope, ex]() mutable {
          boost::asio::post(ex, [h, scope]() mutable { std::move(*h)(std::move(*scope)); });
        });
      },
      boost::asio::use_awaitable, std::move(objects));
}

}  // namespace nfsgw::metacache
