// What the tester knows of the origin: every object it has met (known by its origin
// handle), each with the histories of the answers about it, keyed by origin
// identity so that a change through one export bounds what every export may show:
// attributes and bytes by object, a name's binding by (directory, name), a listing
// by directory. Also the ACCESS bits the origin grants each user for each kind of
// object (type, mode, owner, group), learned from the origin itself.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tests/difftest/history.h"
#include "tests/difftest/nfs3_client.h"

namespace difftest {

/// An object's attributes, or nullopt once the origin answers STALE (gone).
using AttrValue = std::optional<Attr>;
/// A name in a directory: the object's id, or kNoName.
using Binding = int;
constexpr Binding kNoName = -1;
/// A listing: (name, fileid) sorted by name, "." and ".." included.
using Listing = std::vector<std::pair<std::string, std::uint64_t>>;

/// What nfsgw holds of a regular file written through a write-back export and not
/// flushed yet (docs/difftest.md, *Write-back*): the bytes in its dirty log, the
/// size it answers, and the attributes it last answered. While a file has one,
/// every export must show these bytes and this size (nfsgw is the authority for
/// the file), whatever the origin holds.
struct Dirty {
  std::string data;           // the bytes written, where `held`
  std::vector<bool> held;     // which bytes of `data` nfsgw holds in its log
  std::uint64_t size = 0;     // the size nfsgw answers
  std::optional<Attr> attr;   // nfsgw's snapshot as it last answered it; unknown after a kill -9
  Attr last;                  // the last snapshot seen (times after a restart must be later)
  bool conflict = false;      // the origin's copy changed behind nfsgw's back
  std::vector<int> writers;   // the users whose bytes nfsgw holds (the flush writes as them)

  /// Takes a WRITE into the log.
  void write(std::uint64_t offset, const std::string& bytes);
  /// What nfsgw shows: `below` (the origin's bytes) cut or padded with zeros to
  /// the size, the held bytes over it.
  std::string over(const std::string& below) const;
  /// What the origin must hold after a flush over `origin`: the held bytes written
  /// over it (it grows to the last of them, no further).
  std::string flushed_over(const std::string& origin) const;
  /// For reports: "size 120, 110 bytes held in [10, 120)".
  std::string describe() const;
};

struct Obj {
  Handle origin;
  std::uint32_t label = 0;  // the id of the step that made it
  std::string made_as;      // its path when it was made, for messages
  History<AttrValue> attrs;
  History<std::string> bytes;           // regular files
  std::optional<std::string> target;    // symbolic links (never changes)
  History<Listing> listing;             // directories
  std::map<std::string, History<Binding>> names;  // directories, ".." included
  std::optional<Dirty> dirty;           // regular files nfsgw holds dirty data of

  std::uint32_t type() const { return attrs.known() && attrs.current() ? attrs.current()->type : 0; }
  bool alive() const { return attrs.known() && attrs.current().has_value(); }
};

/// The ACCESS bits (of all six) the origin grants a user on an object with these
/// attributes: a function of (type, mode, owner, group) on a file system without
/// ACLs, learned once per combination from the origin's own ACCESS answers. For
/// regular files also kMayRead: whether the origin lets the user READ it, which
/// is not the ACCESS read bit (ganesha lets an owner read a file of mode 0000).
constexpr std::uint32_t kMayRead = 0x100;
class PermTable {
 public:
  std::optional<std::uint32_t> bits(const Attr& a, int user) const;
  void learn(const Attr& a, int user, std::uint32_t bits);

 private:
  static std::uint64_t key(const Attr& a, int user);
  std::unordered_map<std::uint64_t, std::uint32_t> bits_;
};

class Model {
 public:
  /// The object with this origin handle; -1 when never met.
  int find(const Handle& origin) const;
  /// Registers an object met for the first time.
  int add(const Handle& origin, std::uint32_t label, std::string made_as);
  Obj& obj(int id) { return objs_[static_cast<std::size_t>(id)]; }
  const Obj& obj(int id) const { return objs_[static_cast<std::size_t>(id)]; }
  int count() const { return static_cast<int>(objs_.size()); }
  /// The object a step made (its label); -1 when that step made nothing in this run.
  int by_label(std::uint32_t label) const;

  /// A new tick, for a recording or a bound.
  Tick next_tick() { return ++tick_; }

  /// The current path of `id` below `root` (names from current bindings), or
  /// nullopt when it is not reachable from there.
  std::optional<std::vector<std::pair<int, std::string>>> walk(int root, int id) const;
  /// Every object reachable from `root` by current bindings, `root` first.
  std::vector<int> reachable(int root) const;
  /// "sub/x/f" from the current bindings below `root`, else where it was made.
  std::string path(int root, int id) const;

  /// Objects with dirty data in nfsgw.
  std::vector<int> dirty() const;

  PermTable perms;

 private:
  std::vector<Obj> objs_;
  std::unordered_map<std::string, int> by_origin_;
  std::unordered_map<std::uint32_t, int> by_label_;
  Tick tick_ = 0;
};

}  // namespace difftest
