// The change journal: what a crash must not bring back.
//
// The metadata store writes its records to RocksDB behind the replies, without
// fsync (metadata_store.h): after kill -9 or a power cut it may come back with
// records from before a change that a client already saw acknowledged (a removed
// file that answers LOOKUP, the old mode after a chmod), and those would be
// served for the rest of their window. So before a change is sent to the origin,
// the objects whose records it may make stale are written down here, synced
// (concurrent changes share one fsync); once the records the change's reply
// taught are on disk (the store has flushed past them), they are crossed out.
// A start after a crash finds what is still written down and drops those
// objects' records before the first call is served: only what a change touched is
// asked again, everything else stays warm.
//
// Crossing out waits `linger` after the last change of an object, so that a
// stream of WRITEs to one file costs one fsync, not one per WRITE. An object left
// written down only costs one revalidation after a crash.
//
// Order on disk is what makes this safe: the journal lives in the store's own
// RocksDB (one WAL), and an object is crossed out only after MetadataStore::flush()
// has put the change's records in that WAL before the crossing-out. A WAL replays
// a prefix after a power cut, so a surviving crossing-out implies its records
// survived too.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/clock.h"
#include "cache/kv_store.h"
#include "cache/metadata_records.h"

namespace nfsgw::cache {

class MetadataStore;

/// The column family the journal needs in the store's database (open the KvStore
/// with metadata_families() and this one).
const char* change_journal_family();

struct ChangeJournalOptions {
  /// How long an object stays written down after its last change ends.
  std::chrono::milliseconds linger{1000};
  /// Measures `linger`.
  const Clock* clock = &wall_clock();
  /// Called with a message when the journal cannot write (then changes go on
  /// without its promise: the cache must not stop the gateway).
  std::function<void(const std::string&)> on_error;
};

struct ChangeJournalCounts {
  std::uint64_t noted = 0;    // objects written down (each time one was not already)
  std::uint64_t syncs = 0;    // synced writes (each carries every object waiting)
  std::uint64_t crossed = 0;  // objects crossed out
};

class ChangeJournal {
 public:
  /// `kv` must have change_journal_family(); `store` is the metadata store whose
  /// records the journal protects. Both must outlive the journal.
  ChangeJournal(KvStore& kv, MetadataStore& store, ChangeJournalOptions options = {});
  /// Crosses out every object whose change has ended (a clean stop leaves nothing
  /// to drop at the next start), then stops.
  ~ChangeJournal();
  ChangeJournal(const ChangeJournal&) = delete;
  ChangeJournal& operator=(const ChangeJournal&) = delete;

  /// At start, before any call: drops the records of every object a process that
  /// stopped without crossing out left written down, makes that durable, and
  /// crosses them out. Returns how many objects it dropped. Blocking.
  std::size_t recover();

  /// A change of `objects` begins: `durable` runs (on the journal's thread) once
  /// every one of them is written down and synced. Each note() must be followed by
  /// one end() of the same objects.
  void begin(const std::vector<ObjectKey>& objects, std::function<void()> durable);
  /// begin() without waiting, when every object is still written down (a stream
  /// of changes to one file): true when begun, false (nothing begun) otherwise.
  bool try_begin(const std::vector<ObjectKey>& objects);
  /// The change has ended and taught the store what it learnt (its writes are
  /// queued in the store): the objects may be crossed out after `linger`.
  void end(const std::vector<ObjectKey>& objects);

  ChangeJournalCounts counts() const;
  /// Crosses out now what is due (`ignore_linger`: everything whose change has
  /// ended) and returns once it is done. The journal's thread also does this by
  /// itself a few times per linger.
  void cross_out_now(bool ignore_linger);

 private:
  struct Entry {
    unsigned active = 0;   // changes begun and not ended
    bool durable = false;  // on disk
    Millis ended = 0;      // when the last change ended
  };
  void run();
  void write_pending(std::unique_lock<std::mutex>& lock);
  void cross_out(std::unique_lock<std::mutex>& lock, bool all);
  void fail(const std::exception& e);

  KvStore& kv_;
  KvStore::Family family_;
  MetadataStore& store_;
  ChangeJournalOptions options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable settled_;
  std::unordered_map<std::string, Entry> entries_;  // by encoded object key
  std::vector<std::string> to_write_;
  std::vector<std::function<void()>> waiting_;  // run once to_write_ is synced
  /// cross_out_now(): asked (and whether ignoring linger), and how many were done.
  bool cross_asked_ = false, cross_all_ = false;
  std::uint64_t rounds_started_ = 0, rounds_done_ = 0;
  bool stop_ = false;
  bool failed_ = false;  // reported once until a write works again
  ChangeJournalCounts counts_;
  std::thread thread_;
};

}  // namespace nfsgw::cache
