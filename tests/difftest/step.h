// One step of a test sequence: a call through nfsgw or straight at the origin, a
// kill -9 and restart of nfsgw, or a reload of its configuration. Steps name the
// objects they act on by label, the id of the step that made the object (0 and 1:
// the tree T and T/sub), never by handle or fileid, so a sequence replays on a
// fresh tree and keeps its meaning when the shrinker removes steps from it: a
// step whose object was never made, or whose handle nfsgw has not given out
// through that export in this run, is skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace difftest {

enum class Op : std::uint8_t {
  Getattr, Lookup, Access, Readlink, Read, Readdir, Readdirplus,  // questions
  Create, Mkdir, Symlink, Remove, Rmdir, Rename, Link, Setattr, Write,  // changes
  Kill, Reload, Flush,  // to nfsgw itself (Flush: `nfsgw flush`, then the origin is compared)
};

/// How a WRITE asks for stability: FILE_SYNC; UNSTABLE followed at once by a
/// COMMIT of the file (same export, same user).
enum class Stable : std::uint8_t { FileSync, UnstableCommit };

constexpr std::uint32_t kTreeLabel = 0, kSubLabel = 1;

struct Step {
  std::uint32_t id = 0;
  Op op = Op::Getattr;
  bool at_origin = false;  // straight at the origin, not through nfsgw
  bool setup = false;      // builds the starting tree: the shrinker keeps it
  int user = 0;
  int exp = 0;             // the export (calls through nfsgw)
  std::uint32_t a = 0;     // the object; the directory of a name; RENAME's from-dir; LINK's file
  std::uint32_t b = 0;     // RENAME's to-dir; LINK's directory
  std::string name, name2; // the name; RENAME's new name
  std::uint32_t mode = 0;  // CREATE, MKDIR, SETATTR's mode
  bool set_mode = false;   // SETATTR
  std::optional<std::uint64_t> size;  // SETATTR's size
  std::uint64_t offset = 0;           // READ, WRITE
  std::uint32_t count = 0;            // READ
  std::string data;                   // WRITE's bytes, SYMLINK's target
  int variant = 0;                    // Reload: the configuration variant
  bool sighup = false;                // Reload: by signal rather than `nfsgw reload`
  bool kill_at_once = false;          // a change through nfsgw: kill -9 as its reply arrives
  Stable stable = Stable::FileSync;   // WRITE

  bool changes() const { return op >= Op::Create && op <= Op::Write; }
};

const char* op_name(Op op);

/// "#12 u2 /rw LOOKUP <d: sub/x> "f"": `object` names a label.
std::string describe(const Step& s, const std::function<std::string(std::uint32_t)>& object);

}  // namespace difftest
