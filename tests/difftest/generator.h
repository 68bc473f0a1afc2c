// Makes the random stream of steps: single calls through nfsgw (questions and
// changes, any user, any export, objects nfsgw has given out through that
// export, names that exist or not), changes straight at the origin, kill -9 and
// restart, reloads, and scenarios mixed in: short sequences shaped like the
// faults of issue 18, so that those are produced often (docs/difftest.md):
//   strict-lookup  LOOKUP through /strict, the file grown and chmodded at the
//                  origin, LOOKUP and READDIRPLUS through /strict again;
//   kill-after     a change through nfsgw to something nfsgw holds, kill -9 at
//                  once, the same questions after the restart (half of the
//                  kills, --kill-every);
//   two-exports    questions through one export, a change through /rw, the same
//                  questions through the first export again;
//   hard-link      a second name made at the origin, the file's attributes
//                  cached, the second name removed (or replaced) through nfsgw
//                  without a LOOKUP, the file's attributes asked again;
//   dotdot         listings and ".." at the root of /sub and below it.
//   stale-read     a file's attributes cached through /rw, /ro or /sub (no READ),
//                  the file rewritten at the origin from offset 0, longer than it
//                  was, then READ through that export;
//   same-file-rename  a second name made at the origin for a file in its folder,
//                  the folder listed through /rw, one name renamed onto the
//                  other through /rw (POSIX: nothing happens), the folder listed
//                  through /rw and /strict.
//   dirty-read     a WRITE through /back (the write-back export), the file read
//                  and its attributes asked through /rw, /strict, /short and
//                  /imm, then one of: nothing, kill -9, a conflicting WRITE at
//                  the origin, a SETATTR of the size or of the mode, a WRITE or a
//                  LINK through /rw, its name removed at the origin; the
//                  questions again, and now and then (always after that removal)
//                  `nfsgw flush` and the questions once more.
// Choices read the model and the export views (what exists, which handles are
// held) but never change them; the same seed on the same answers gives the same
// steps.
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "tests/difftest/runner.h"
#include "tests/difftest/step.h"

namespace difftest {

struct GeneratorOptions {
  double kill_every = 0.0005;    // probability per step of a kill -9 and restart (half
                                 // of them right after a change through nfsgw)
  double reload_every = 0.0005;  // probability per step of a configuration reload
  double scenarios = 0.1;        // probability per step of starting a scenario
  double back_writes = 0.04;     // probability per step of a WRITE through /back (write-back)
  double flush_every = 0.002;    // probability per step of `nfsgw flush`
  std::string only;              // run this scenario only (say kill-after), for a fault hunt
};

/// The scenarios' names, as --scenario takes them.
const std::vector<std::string>& scenario_names();

class Generator {
 public:
  Generator(std::uint64_t seed, const Runner& runner, GeneratorOptions options, std::uint32_t first_id);
  Step next();

 private:
  using Rng = std::mt19937_64;
  int pick(int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng_)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& any_of(const std::vector<T>& v) { return v[static_cast<std::size_t>(pick(static_cast<int>(v.size())))]; }

  Step make(Op op);
  /// Objects through export `exp` (or, exp < 0, anywhere at the origin) that are
  /// alive with `type` (0: any, alive or not).
  std::vector<int> objects(int exp, std::uint32_t type) const;
  std::string name_in(int dir);  // mostly a name that exists there
  std::string free_name(int dir);
  /// Whether `name` in `dir` is the root of an export (never removed or renamed).
  bool is_export_root(int dir, const std::string& name) const;
  std::uint32_t label(int id) const;
  int alive_objects() const;

  bool question(Step& s);
  /// A WRITE through /back by the file's owner, of a file whose owner may always
  /// write it (so that the flush, sent as the writer, is never refused).
  bool back_write(Step& s);
  /// Whether nfsgw may be given dirty data of `id`: a regular file alive, every
  /// version of it seen of one owner with the owner's write bit.
  bool owner_may_write(int id) const;
  /// The size a client sees: nfsgw's when it holds dirty data of the file.
  std::uint64_t visible_size(int id) const;
  bool change(Step& s, int exp);
  void scenario();
  /// LOOKUPs from `exp`'s root down to `id` for every handle not held yet; false
  /// when `id` cannot be reached through `exp`.
  bool reach(int exp, int user, int id);
  /// Appends `s` to the steps to come (numbered now: later steps of a scenario
  /// may name what it makes).
  std::uint32_t queue(Step s);
  /// The user who owns `id` (changes by the owner mostly succeed), else `fallback`.
  int owner(int id, int fallback) const;

  void strict_lookup();
  void kill_after();
  void two_exports();
  void hard_link();
  void dotdot();
  void stale_read();
  void same_file_rename();
  void dirty_read();

  Rng rng_;
  const Runner& runner_;
  GeneratorOptions options_;
  std::uint32_t next_id_;
  std::deque<Step> pending_;
};

}  // namespace difftest
