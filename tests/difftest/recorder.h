// Asks the origin (as root, straight at ganesha) what it holds now and records it
// in the model's histories: after every change (made through nfsgw or at the
// origin) for the keys the change touched, and whenever a check needs a key the
// model has not seen yet. Objects met for the first time are registered with the
// label of the step being run (the step that made them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tests/difftest/model.h"

namespace difftest {

class World;

class Recorder {
 public:
  /// Counts every call it makes to the origin in `origin_calls`.
  Recorder(Model& model, World& world, std::uint64_t& origin_calls)
      : model_(model), world_(world), origin_calls_(origin_calls) {}

  /// The step whose run this is (labels new objects).
  void set_step(std::uint32_t id) { step_ = id; }

  // Each records the origin's current value; true when it differs from the
  // current version (or is the first).
  bool attr(int id);
  bool binding(int dir, const std::string& name);
  bool listing(int dir);
  bool bytes(int id);
  /// The object behind an origin handle met in an answer: registered (with its
  /// attributes, bytes or target) when new.
  int object(const Handle& origin, const std::string& made_as, const std::optional<Attr>& attr);

 private:
  bool record_attr(int id, const AttrValue& v);
  /// Asks the origin the ACCESS bits of each user for a (type, mode, owner, group)
  /// the table does not know yet.
  void learn_perms(int id, const Attr& a);
  void target(int id);
  /// `call(client)` on the origin, asked again (after connecting again) when the
  /// origin does not answer: ganesha has been seen to stall for 20 s. Throws after
  /// three tries.
  template <typename Call>
  Reply ask(const char* what, Call call);

  Model& model_;
  World& world_;
  std::uint64_t& origin_calls_;
  std::uint32_t step_ = 0;
};

}  // namespace difftest
