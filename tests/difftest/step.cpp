#include "tests/difftest/step.h"

#include <cstdio>

#include "tests/difftest/world.h"

namespace difftest {

const char* op_name(Op op) {
  switch (op) {
    case Op::Getattr: return "GETATTR";
    case Op::Lookup: return "LOOKUP";
    case Op::Access: return "ACCESS";
    case Op::Readlink: return "READLINK";
    case Op::Read: return "READ";
    case Op::Readdir: return "READDIR";
    case Op::Readdirplus: return "READDIRPLUS";
    case Op::Create: return "CREATE";
    case Op::Mkdir: return "MKDIR";
    case Op::Symlink: return "SYMLINK";
    case Op::Remove: return "REMOVE";
    case Op::Rmdir: return "RMDIR";
    case Op::Rename: return "RENAME";
    case Op::Link: return "LINK";
    case Op::Setattr: return "SETATTR";
    case Op::Write: return "WRITE";
    case Op::Kill: return "KILL -9 + restart";
    case Op::Reload: return "RELOAD";
    case Op::Flush: return "FLUSH (nfsgw flush)";
  }
  return "?";
}

namespace {
std::string octal(std::uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}
std::string quoted(const std::string& s) { return "\"" + s + "\""; }
}  // namespace

std::string describe(const Step& s, const std::function<std::string(std::uint32_t)>& object) {
  std::string out = "#" + std::to_string(s.id) + " ";
  if (s.op == Op::Kill || s.op == Op::Flush) return out + op_name(s.op);
  if (s.op == Op::Reload)
    return out + "RELOAD variant " + std::to_string(s.variant) + (s.sighup ? " (SIGHUP)" : " (nfsgw reload)");
  out += users()[static_cast<std::size_t>(s.user)].name;
  out += s.at_origin ? " ORIGIN " : std::string(" ") + exports()[static_cast<std::size_t>(s.exp)].path + " ";
  out += op_name(s.op);
  out += " " + object(s.a);
  switch (s.op) {
    case Op::Lookup:
    case Op::Remove:
    case Op::Rmdir: out += " " + quoted(s.name); break;
    case Op::Create:
    case Op::Mkdir: out += " " + quoted(s.name) + " mode " + octal(s.mode); break;
    case Op::Symlink: out += " " + quoted(s.name) + " -> " + quoted(s.data); break;
    case Op::Rename: out += " " + quoted(s.name) + " to " + object(s.b) + " " + quoted(s.name2); break;
    case Op::Link: out += " as " + object(s.b) + " " + quoted(s.name); break;
    case Op::Setattr:
      if (s.set_mode) out += " mode " + octal(s.mode);
      if (s.size) out += " size " + std::to_string(*s.size);
      break;
    case Op::Write:
      out += " at " + std::to_string(s.offset) + ", " + std::to_string(s.data.size()) + " bytes";
      if (s.stable == Stable::UnstableCommit) out += " UNSTABLE + COMMIT";
      break;
    case Op::Read: out += " at " + std::to_string(s.offset) + ", " + std::to_string(s.count) + " bytes"; break;
    default: break;
  }
  if (s.kill_at_once) out += ", then KILL -9 + restart at once";
  return out;
}

}  // namespace difftest
