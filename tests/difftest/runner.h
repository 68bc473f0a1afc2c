// Runs steps against the world and checks every answer of nfsgw:
//   a question (GETATTR .. READDIRPLUS) is judged against the model; a part the
//   model does not allow is judged again after the keys involved are asked of the
//   origin afresh (a key the model had wrong is a "model gap", counted); still not
//   allowed, the same call is made at the origin as the same user: an equal
//   answer is the origin's own (a "model error", counted and shown), any other is
//   a violation;
//   a change records, before the call, every key it may touch that the model has
//   not seen, and after it, every one of them again; a change through nfsgw that
//   succeeded bounds them all (nothing before it may be shown again, through any
//   export), and is checked for its effect at the origin and for the attributes
//   in its reply; one that failed must have changed nothing, and the origin must
//   refuse the same call the same way.
// Files: runner.cpp (steps, handles, kill and reload), runner_questions.cpp,
// runner_changes.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/difftest/export_view.h"
#include "tests/difftest/judge.h"
#include "tests/difftest/model.h"
#include "tests/difftest/recorder.h"
#include "tests/difftest/step.h"
#include "tests/difftest/world.h"

namespace difftest {

struct Violation {
  std::uint32_t step = 0;
  std::string kind;    // what failed, e.g. "LOOKUP object attributes": the shrinker keeps it failing
  std::string detail;  // what nfsgw answered and what the origin held
};

struct Stats {
  std::uint64_t skipped = 0, calls = 0, checks = 0, violations = 0, kills = 0, reloads = 0,
                origin_changes = 0, origin_calls = 0, model_gaps = 0, model_errors = 0,
                absorbed = 0, flushes = 0, dirty_flushed = 0;  // write-back: WRITEs taken into the
                // dirty log, `nfsgw flush` runs, dirty files whose flush changed the origin
  Stats& operator+=(const Stats& o);
  Stats operator-(const Stats& o) const;
};

class Runner {
 public:
  explicit Runner(World& world);

  /// A fresh tree and nfsgw (each run's tree has a new name), and a model that
  /// knows T and T/sub.
  void begin();
  /// Runs `s`; false when it was skipped (an object it names was not made in
  /// this run, or nfsgw has not given its handle through that export).
  bool run(const Step& s, std::vector<Violation>& found);

  const Model& model() const { return model_; }
  const ExportView& view(int exp) const { return views_[static_cast<std::size_t>(exp)]; }
  /// How a step's object is named in reports: its path now, from /rw's root.
  std::string object_name(std::uint32_t label) const;

  Stats stats;
  /// Print model gaps and errors as they happen (else only counted).
  bool verbose = false;

 private:
  struct Problem {
    std::string kind, detail;
    explicit operator bool() const { return !kind.empty(); }
  };
  struct Touched {
    std::vector<int> attrs, listings, bytes;
    std::vector<std::pair<int, std::string>> names;
  };

  // runner.cpp
  /// The object behind a gateway handle of export `exp` (learnt for later steps);
  /// -1 with `why` when the handle is not one the tester can read.
  int object_of(int exp, const Handle& h, std::string& why);
  void lost_gateway(const Step& s, const Reply& r, std::vector<Violation>& found);
  const Promise& promise(int exp) const { return exports()[static_cast<std::size_t>(exp)].promise; }

  // runner_questions.cpp
  void question(const Step& s, int id, std::vector<Violation>& found);
  Problem judge_question(const Step& s, int id, const Reply& r);
  Problem judge_entries(const Step& s, int dir, const Reply& r);
  Problem judge_part(const std::string& kind, const Verdict& v);
  /// Asks the origin afresh for every key the question's answer rests on.
  void refresh(const Step& s, int id, const Reply& r);
  bool same_answer(const Step& s, int id, const Reply& gw, Reply origin);

  // runner_changes.cpp
  void change(const Step& s, int a, int b, std::vector<Violation>& found);
  Touched touched_by(const Step& s, int a, int b) const;
  /// Records the touched keys; true when any changed.
  bool record(const Touched& t, bool only_unknown);
  void bound(const Touched& t, int exp, std::uint64_t restarts);
  Problem judge_effect(const Step& s, int a, int b, const Reply& r, Binding before_from);
  Problem judge_change_reply(const Step& s, int a, int b, const Reply& r);

  void gap(const std::string& what);

  // runner_writeback.cpp (docs/difftest.md, *Write-back*)
  /// A WRITE through a write-back export answered OK: when nfsgw took it into its
  /// log (its verifier is the log's), judged and added to the model's dirty data;
  /// false when nfsgw sent it to the origin.
  bool absorbed(const Step& s, int a, const Reply& r, std::vector<Violation>& found);
  /// nfsgw's write verifier (its dirty log's), learnt from a COMMIT of `h`
  /// through /back; nullopt when the COMMIT fails.
  std::optional<std::uint64_t> log_verifier(const Step& s, const Handle& h, std::vector<Violation>& found);
  /// Whether nfsgw flushes the dirty file `a` before it carries out `s`: a WRITE
  /// it does not take into its log, a SETATTR of the size.
  bool flushes_first(const Step& s, int a) const;
  /// After such a change: the origin must hold the dirty bytes flushed, then the
  /// change (when it was done); the file is clean.
  Problem judge_flushed(const Step& s, int a, const std::string& before, const Reply& r);
  /// A SETATTR without a size of a dirty file, done: nfsgw's snapshot takes the
  /// origin's answer, keeping its size and never going back in time.
  Problem dirty_setattr(const Step& s, int a, const Reply& r);
  /// `nfsgw flush`: every dirty file's bytes at the origin, none clean before.
  void flush(const Step& s, std::vector<Violation>& found);
  /// After a kill -9: dirty files keep their bytes, their times are new.
  void restarted();
  /// A question about a dirty file answered after a restart gives its new times.
  void learn_dirty_times(const Step& s, int id, const Reply& r);
  /// Whether a refused answer is about a file with dirty data.
  bool about_dirty(const Step& s, int id, const Reply& r);
  /// A change made at the origin to a dirty file (a conflict: nfsgw's bytes
  /// still win for the ranges it holds).
  void origin_changed(int id);

  std::optional<std::uint64_t> log_verf_;

  World& world_;
  int round_ = 0;
  Model model_;
  Recorder recorder_{model_, world_, stats.origin_calls};
  Judge judge_;
  std::array<ExportView, kExports> views_;
};

}  // namespace difftest
