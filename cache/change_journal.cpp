#include "cache/change_journal.h"

#include <optional>

#include "cache/metadata_codec.h"
#include "cache/metadata_store.h"

namespace nfsgw::cache {
namespace {

/// A key written by codec::object_prefix, back to the object; nullopt when it is
/// not one (then it is crossed out unread: it protects nothing nfsgw can name).
std::optional<ObjectKey> decode_object(std::string_view k) {
  if (k.size() < 5) return std::nullopt;
  const auto* b = reinterpret_cast<const unsigned char*>(k.data());
  const std::size_t len = b[4];
  if (len == 0 || len > nfs3::kFhSize || k.size() != 5 + len) return std::nullopt;
  ObjectKey out;
  out.export_id = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
  out.fh.assign(std::span<const std::uint8_t>(b + 5, len));
  return out;
}

}  // namespace

const char* change_journal_family() { return "change_journal"; }

ChangeJournal::ChangeJournal(KvStore& kv, MetadataStore& store, ChangeJournalOptions options)
    : kv_(kv), family_(kv.family(change_journal_family())), store_(store), options_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

ChangeJournal::~ChangeJournal() {
  cross_out_now(true);
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::size_t ChangeJournal::recover() {
  std::vector<std::string> keys;
  kv_.scan(family_, "", "", [&](std::string_view k, std::string_view) {
    keys.emplace_back(k);
    return true;
  });
  if (keys.empty()) return 0;
  std::size_t dropped = 0;
  for (const auto& k : keys) {
    if (auto obj = decode_object(k)) {
      store_.erase_object(*obj);
      ++dropped;
    }
  }
  // The erasures reach the WAL before the crossing-out does, and are synced with it.
  store_.flush();
  KvStore::Batch b;
  for (const auto& k : keys) b.erase(family_, k);
  kv_.write(b, KvStore::Durability::Synced);
  return dropped;
}

void ChangeJournal::begin(const std::vector<ObjectKey>& objects, std::function<void()> durable) {
  std::unique_lock lock(mu_);
  bool wait = false;
  for (const auto& o : objects) {
    std::string k = codec::object_prefix(o);
    Entry& e = entries_[k];
    ++e.active;
    if (e.durable) continue;
    wait = true;
    if (e.active == 1) {
      // Nobody else waits for it: queue it. (With other changes still active it is
      // queued or being written already; after a failed write it is queued again
      // by the first change that finds it unused.)
      to_write_.push_back(std::move(k));
      ++counts_.noted;
    }
  }
  if (!wait) {
    lock.unlock();
    durable();
    return;
  }
  waiting_.push_back(std::move(durable));
  lock.unlock();
  wake_.notify_one();
}

bool ChangeJournal::try_begin(const std::vector<ObjectKey>& objects) {
  std::lock_guard lock(mu_);
  std::vector<Entry*> found;
  found.reserve(objects.size());
  for (const auto& o : objects) {
    auto it = entries_.find(codec::object_prefix(o));
    if (it == entries_.end() || !it->second.durable) return false;
    found.push_back(&it->second);
  }
  for (Entry* e : found) ++e->active;
  return true;
}

void ChangeJournal::end(const std::vector<ObjectKey>& objects) {
  std::lock_guard lock(mu_);
  const Millis now = options_.clock->now_ms();
  for (const auto& o : objects) {
    auto it = entries_.find(codec::object_prefix(o));
    if (it == entries_.end() || it->second.active == 0) continue;
    if (--it->second.active == 0) it->second.ended = now;
  }
}

ChangeJournalCounts ChangeJournal::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

void ChangeJournal::cross_out_now(bool ignore_linger) {
  std::unique_lock lock(mu_);
  if (stop_) return;
  cross_asked_ = true;
  cross_all_ = cross_all_ || ignore_linger;
  // The next round to start reads the request (under this lock); rounds end in order.
  const std::uint64_t until = rounds_started_ + 1;
  wake_.notify_one();
  settled_.wait(lock, [&] { return rounds_done_ >= until || stop_; });
}

void ChangeJournal::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    // Wakes for writes at once; looks for what to cross out a few times per linger.
    wake_.wait_for(lock, options_.linger / 4 + std::chrono::milliseconds(1),
                   [&] { return stop_ || !waiting_.empty() || cross_asked_; });
    if (stop_) break;
    if (!waiting_.empty()) write_pending(lock);
    const bool all = cross_all_;
    cross_asked_ = false;
    cross_all_ = false;
    ++rounds_started_;
    cross_out(lock, all);
    ++rounds_done_;
    settled_.notify_all();
  }
  // Nobody may wait for ever: a change whose objects could not be written down
  // goes on without the journal's promise (the process is stopping).
  std::vector<std::function<void()>> waiting = std::move(waiting_);
  lock.unlock();
  for (auto& w : waiting) w();
  settled_.notify_all();
}

void ChangeJournal::write_pending(std::unique_lock<std::mutex>& lock) {
  std::vector<std::string> keys = std::move(to_write_);
  std::vector<std::function<void()>> waiting = std::move(waiting_);
  to_write_.clear();
  waiting_.clear();
  lock.unlock();
  // Nothing new to write: the waiters' objects were in the write this thread just
  // finished (begun again while it was under way).
  bool ok = !keys.empty();
  if (ok) {
    try {
      KvStore::Batch b;
      for (const auto& k : keys) b.put(family_, k, "");
      kv_.write(b, KvStore::Durability::Synced);
    } catch (const std::exception& e) {
      ok = false;
      fail(e);
    }
  }
  lock.lock();
  if (ok) {
    ++counts_.syncs;
    failed_ = false;
    for (const auto& k : keys) {
      if (auto it = entries_.find(k); it != entries_.end()) it->second.durable = true;
    }
  }
  // Not durable after a failure: the next change of these objects tries again.
  lock.unlock();
  for (auto& w : waiting) w();
  lock.lock();
}

void ChangeJournal::cross_out(std::unique_lock<std::mutex>& lock, bool all) {
  const Millis now = options_.clock->now_ms();
  std::vector<std::string> due;
  for (const auto& [k, e] : entries_) {
    if (e.active == 0 && e.durable && (all || now - e.ended >= options_.linger.count())) due.push_back(k);
  }
  // Entries never made durable and no longer in use are forgotten as they are.
  std::erase_if(entries_, [](const auto& kv) { return kv.second.active == 0 && !kv.second.durable; });
  if (due.empty()) return;
  lock.unlock();
  // Everything the store was told so far, the ended changes' records included,
  // goes into the WAL before the crossing-out does.
  store_.flush();
  lock.lock();
  KvStore::Batch b;
  for (const auto& k : due) {
    auto it = entries_.find(k);
    // Begun again meanwhile: it stays written down for that change.
    if (it == entries_.end() || it->second.active != 0) continue;
    entries_.erase(it);
    b.erase(family_, k);
  }
  if (b.empty()) return;
  const std::size_t n = b.changes.size();
  lock.unlock();
  bool ok = true;
  try {
    // Unsynced: a crossing-out lost in a power cut only costs a revalidation.
    kv_.write(b, KvStore::Durability::Unsynced);
  } catch (const std::exception& e) {
    ok = false;
    fail(e);
  }
  lock.lock();
  if (ok) counts_.crossed += n;
}

void ChangeJournal::fail(const std::exception& e) {
  bool report = false;
  {
    std::lock_guard lock(mu_);
    report = !failed_;
    failed_ = true;
  }
  if (report && options_.on_error) options_.on_error(e.what());
}

}  // namespace nfsgw::cache
