#include "tests/difftest/send.h"

#include <stdexcept>

namespace difftest {

Reply send(Nfs3Client& c, const Step& s, const Handle& a, const Handle& b) {
  switch (s.op) {
    case Op::Getattr: return c.getattr(a);
    case Op::Lookup: return c.lookup(a, s.name);
    case Op::Access: return c.access(a, integ::kAccessAll);
    case Op::Readlink: return c.readlink(a);
    case Op::Read: return c.read(a, s.offset, s.count);
    case Op::Readdir: return c.readdir(a);
    case Op::Readdirplus: return c.readdirplus(a);
    case Op::Create: return c.create(a, s.name, s.mode);
    case Op::Mkdir: return c.mkdir(a, s.name, s.mode);
    case Op::Symlink: return c.symlink(a, s.name, s.data);
    case Op::Remove: return c.remove(a, s.name);
    case Op::Rmdir: return c.rmdir(a, s.name);
    case Op::Rename: return c.rename(a, s.name, b, s.name2);
    case Op::Link: return c.link(a, b, s.name);
    case Op::Setattr: {
      SetAttrs what;
      if (s.set_mode) what.mode = s.mode;
      what.size = s.size;
      return c.setattr(a, what);
    }
    case Op::Write: return c.write(a, s.offset, s.data, s.stable == Stable::FileSync);
    case Op::Kill:
    case Op::Reload:
    case Op::Flush: break;
  }
  throw std::logic_error(std::string("not an NFS call: ") + op_name(s.op));
}

}  // namespace difftest
