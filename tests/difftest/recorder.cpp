#include "tests/difftest/recorder.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "tests/difftest/world.h"

namespace difftest {

template <typename Call>
Reply Recorder::ask(const char* what, Call call) {
  for (int attempt = 1;; ++attempt) {
    ++origin_calls_;
    Reply r = call();
    if (r.transport_ok) return r;
    if (attempt == 3) throw std::runtime_error(std::string("the origin did not answer ") + what + ": " + r.error);
    std::fprintf(stderr, "difftest: the origin did not answer %s (%s); connecting again\n", what, r.error.c_str());
    world_.reconnect_origin();
  }
}

bool Recorder::record_attr(int id, const AttrValue& v) {
  Obj& o = model_.obj(id);
  const bool changed = o.attrs.record(v, model_.next_tick(), Clock::now());
  if (changed && v) learn_perms(id, *v);
  return changed;
}

bool Recorder::attr(int id) {
  const Reply r = ask("GETATTR", [&] { return world_.truth().getattr(model_.obj(id).origin); });
  if (r.status == kStale) return record_attr(id, std::nullopt);
  if (r.status != kOk || !r.attr) throw std::runtime_error(std::string("origin GETATTR: ") + status_name(r.status));
  return record_attr(id, r.attr);
}

void Recorder::learn_perms(int id, const Attr& a) {
  for (int u = 0; u < kUsers; ++u) {
    if (model_.perms.bits(a, u)) continue;
    const Reply r = ask("ACCESS", [&] { return world_.origin(u).access(model_.obj(id).origin, integ::kAccessAll); });
    if (r.status != kOk) return;  // gone meanwhile: learnt with another object
    std::uint32_t bits = r.access;
    if (a.type == kReg) {
      const Reply read = ask("READ", [&] { return world_.origin(u).read(model_.obj(id).origin, 0, 1); });
      if (read.status != kOk && read.status != kAcces) return;
      if (read.status == kOk) bits |= kMayRead;
    }
    model_.perms.learn(a, u, bits);
  }
}

void Recorder::target(int id) {
  Obj& o = model_.obj(id);
  if (o.target) return;
  const Reply r = ask("READLINK", [&] { return world_.truth().readlink(o.origin); });
  if (r.status == kOk) o.target = r.data;
}

int Recorder::object(const Handle& origin, const std::string& made_as, const std::optional<Attr>& attr) {
  int id = model_.find(origin);
  if (id >= 0) return id;
  id = model_.add(origin, step_, made_as);
  if (attr) {
    record_attr(id, attr);
  } else {
    this->attr(id);
  }
  switch (model_.obj(id).type()) {
    case kReg: bytes(id); break;
    case kLnk: target(id); break;
    default: break;
  }
  return id;
}

bool Recorder::binding(int dir, const std::string& name) {
  const Reply r = ask("LOOKUP", [&] { return world_.truth().lookup(model_.obj(dir).origin, name); });
  Binding b = kNoName;
  if (r.status == kOk) {
    const std::string& in = model_.obj(dir).made_as;
    b = object(r.handle, in.empty() ? name : in + "/" + name, r.attr);
    if (r.attr) record_attr(b, r.attr);
  } else if (r.status != kNoent && r.status != kStale && r.status != kNotdir) {
    throw std::runtime_error(std::string("origin LOOKUP \"") + name + "\": " + status_name(r.status));
  }
  return model_.obj(dir).names[name].record(b, model_.next_tick(), Clock::now());
}

bool Recorder::listing(int dir) {
  const Reply r = ask("READDIR", [&] { return world_.truth().readdir(model_.obj(dir).origin); });
  if (r.status != kOk) return false;  // gone (or no longer a directory): nothing listed
  Listing l;
  for (const Entry& e : r.entries) l.emplace_back(e.name, e.fileid);
  std::sort(l.begin(), l.end());
  return model_.obj(dir).listing.record(l, model_.next_tick(), Clock::now());
}

bool Recorder::bytes(int id) {
  // The tester's files stay far below 1 MiB: one READ is the whole file.
  const Reply r = ask("READ", [&] { return world_.truth().read(model_.obj(id).origin, 0, 1u << 20); });
  if (r.status != kOk) return false;
  return model_.obj(id).bytes.record(r.data, model_.next_tick(), Clock::now());
}

}  // namespace difftest
