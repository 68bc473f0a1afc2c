// Reading the metadata store from a coroutine without blocking an Asio thread on
// the disk: a record in memory is answered inline; one that can only be on disk is
// read on the store's own pool and the coroutine resumes on its own executor.
#pragma once

#include <utility>

#include <memory>
#include <optional>

#include <boost/asio/async_result.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/metadata_store.h"
#include "gateway/awaitable.h"

namespace nfsgw::metacache {

/// Reads `key` on the store's pool. Not a coroutine: the initiation (and the key
/// it owns) must not be a temporary inside a co_await expression, whose
/// destruction GCC 12 gets wrong.
template <typename R>
Awaitable<std::shared_ptr<const R>> load_async(cache::MetadataStore& store, cache::Key<R> key) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(std::shared_ptr<const R>)>(
      [&store](auto handler, cache::Key<R> k) {
        auto ex = boost::asio::get_associated_executor(handler);
        store.load<R>(std::move(k), [h = std::make_shared<decltype(handler)>(std::move(handler)),
                                     ex](std::shared_ptr<const R> value) mutable {
          boost::asio::post(ex, [h, v = std::move(value)]() mutable { std::move (*h)(std::move(v)); });
        });
      },
      boost::asio::use_awaitable, std::move(key));
}

/// The record (or nullptr when absent) if it can be had without waiting; nullopt
/// when it must be read from disk. For an answer given at once: what was read is
/// added to `basis` (cache/answer_basis.h).
template <typename R>
std::optional<std::shared_ptr<const R>> peek_now(cache::MetadataStore& store, const cache::Key<R>& key,
                                                 cache::AnswerBasis& basis) {
  auto peeked = store.peek<R>(key, basis.through_memory_layer());
  if (peeked.where == cache::MetadataStore::Where::OnDisk) return std::nullopt;
  basis.rests_on(peeked.watch);
  return std::move(peeked.value);
}

template <typename R>
Awaitable<std::shared_ptr<const R>> find(cache::MetadataStore& store, const cache::Key<R>& key) {
  auto peeked = store.peek<R>(key);
  if (peeked.where != cache::MetadataStore::Where::OnDisk) co_return std::move(peeked.value);
  auto loaded = load_async<R>(store, key);
  co_return co_await std::move(loaded);
}

}  // namespace nfsgw::metacache
